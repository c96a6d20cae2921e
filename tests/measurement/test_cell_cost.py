"""Each cell's calls, tokens and cost at the plan's prices, against the run's own usage."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from corix.cli.main import app
from corix.domain import Level
from corix.execution import ApplicationEntry, LevelSettings, Plan, execute_plan
from corix.llm.mock_server import MockServerConfig, running_mock_server
from corix.measurement import cell_costs
from corix.storage import Database


async def test_cell_cost_at_the_plans_prices(sqlite_db: Database) -> None:
    async with running_mock_server(MockServerConfig()) as base_url:
        plan = Plan(
            name="priced",
            applications=[
                ApplicationEntry(
                    name="priced",
                    spec=f"openai:{base_url}?model=corix-mock",
                    options={"price_prompt": 1.5, "price_completion": 2.0},
                ),
                ApplicationEntry(name="demo", spec="demo:guarded"),
            ],
            scenarios=["tv_spoilers"],
            levels={Level.MODEL_TESTING: LevelSettings(sessions=3)},
        )
        result = await execute_plan(plan, sqlite_db)
    costs = {c.group["application"]: c for c in cell_costs(sqlite_db, [result.run_id])}
    priced, demo = costs["priced"], costs["demo"]
    assert priced.dialogues == demo.dialogues == 3
    assert priced.calls + demo.calls == result.stats.turns
    # The stored turns' tokens are the ones the client counted for the run.
    assert priced.prompt_tokens == result.stats.prompt_tokens > 0
    assert priced.completion_tokens == result.stats.completion_tokens > 0
    expected = (priced.prompt_tokens * 1.5 + priced.completion_tokens * 2.0) / 1000
    assert priced.cost == pytest.approx(expected)
    assert demo.cost is None  # no prices: unknown, not free
    shown = CliRunner().invoke(
        app, ["defects", result.run_id, "--db", sqlite_db.url, "--cost", "--json"]
    )
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["cost"][1]["cost"] == pytest.approx(expected)
