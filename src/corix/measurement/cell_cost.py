"""What each cell's numbers cost: its dialogues, application calls, tokens and price.

Per application × scenario × level of the measured runs, from the stored turns (one
application call per turn, with the tokens the application reported) and the prices the
run's own plan gives its applications (``price_prompt`` / ``price_completion`` options,
per 1,000 tokens, as the ``openai:`` adapter reads them). An application without prices
costs ``None``, not 0: its price is unknown, not free.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from corix.storage import Database, Repository, cell_usage

__all__ = ["CellCost", "cell_costs"]


class CellCost(BaseModel):
    """One cell's usage over the measured runs, and its cost at the plans' prices."""

    group: dict[str, str]
    dialogues: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


def cell_costs(db: Database, run_ids: Sequence[str]) -> list[CellCost]:
    """Usage and cost per application × scenario × level, summed over ``run_ids``."""
    repo = Repository(db)
    prices = {run_id: _prices(repo.get_run(run_id).plan) for run_id in dict.fromkeys(run_ids)}
    found: dict[tuple[str, str, str], CellCost] = {}
    for usage in cell_usage(db, run_ids):
        key = (usage.application, usage.scenario, usage.level)
        price = prices[usage.run_id].get(usage.application)
        cost = (
            None
            if price is None
            else (usage.prompt_tokens * price[0] + usage.completion_tokens * price[1]) / 1000
        )
        previous = found.get(key)
        if previous is not None:
            cost = None if cost is None or previous.cost is None else previous.cost + cost
        found[key] = CellCost(
            group={"application": key[0], "scenario": key[1], "level": key[2]},
            dialogues=usage.dialogues + (previous.dialogues if previous else 0),
            calls=usage.calls + (previous.calls if previous else 0),
            prompt_tokens=usage.prompt_tokens + (previous.prompt_tokens if previous else 0),
            completion_tokens=usage.completion_tokens
            + (previous.completion_tokens if previous else 0),
            cost=cost,
        )
    return [found[key] for key in sorted(found)]


def _prices(plan: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """application → (prompt, completion) price per 1,000 tokens, where the plan gives one."""
    found = {}
    for entry in plan.get("applications", []):
        options = entry.get("options") or {}
        prompt, completion = options.get("price_prompt"), options.get("price_completion")
        if prompt is not None or completion is not None:
            found[entry["name"]] = (float(prompt or 0), float(completion or 0))
    return found
