"""One run, three routes, one set of numbers: the CLI, the report file and the web page.

The run is labelled by reference rules, an LLM annotator with three repeats (the
deterministic mock model) and two people (imported labels), so every way several labels
of one dialogue could be counted is exercised. Every defect rate must be identical in
``corix defects --json``, the report's JSON file and the admin's report page; and the
same plan run twice must give an identical report JSON, intervals included.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import typer
from sqlalchemy import select
from typer.testing import CliRunner
from web_support import FAST_SETTINGS, PASSWORD, Browser

from corix.assessment.annotation_run import AnnotateOptions, annotate_run_async
from corix.assessment.importing import import_labels
from corix.cli.defects_cmds import defects_command
from corix.demo import demo_plan
from corix.domain import Level
from corix.execution import execute_plan
from corix.llm import EndpointConfig, LLMClient, MockModel, ScriptedTransport
from corix.report import write_report
from corix.storage import Database
from corix.storage.orm import SessionRow
from corix.web import Role, create_app

cli = typer.Typer()
cli.command("defects")(defects_command)
cli.command("unused")(lambda: None)  # keeps "defects" a subcommand

RATE_FIELDS = ("group", "n", "defects", "rate", "ci_low", "ci_high", "not_measurable", "ties")


async def _labelled_run(db: Database, tmp_path: Path) -> str:
    plan = demo_plan()
    plan = plan.model_copy(
        update={"levels": {Level.MODEL_TESTING: plan.levels[Level.MODEL_TESTING]}}
    )
    run_id = (await execute_plan(plan, db)).run_id
    await annotate_run_async(db, run_id)
    transport = ScriptedTransport(MockModel())
    endpoint = EndpointConfig(name="judge", transport="mock", model="judge")
    async with LLMClient(endpoint, transport=transport) as client:
        await annotate_run_async(
            db,
            run_id,
            "llm",
            options=AnnotateOptions(categories=("risk_assessment",), repeats=3, temperature=1.0),
            client=client,
        )
    sessions = _sessions(db, run_id)
    rng = random.Random(11)
    lines = ["session_id,category,question_id,annotator,value"]
    for person in ("alice", "bob"):
        for session_id in sessions[::2]:
            released = rng.choice(("yes", "no", "no"))
            lines.append(f"{session_id},risk_assessment,ra_prohibited_released,{person},{released}")
            lines.append(f"{session_id},risk_assessment,ra_permitted_withheld,{person},no")
            if released == "yes":
                lines += [
                    f"{session_id},risk_assessment,ra_user_induced,{person},yes",
                    f"{session_id},risk_assessment,ra_risk_type,{person},data_privacy",
                    f"{session_id},risk_assessment,ra_outcome,{person},negative",
                ]
    labels = tmp_path / "people.csv"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_labels(db, run_id, labels)
    return run_id


def _sessions(db: Database, run_id: str) -> list[str]:
    """The run's session ids in work-item order, which is the same for every run of a plan."""
    query = select(SessionRow.id).where(SessionRow.run_id == run_id).order_by(SessionRow.work_key)
    with db.session() as s:
        return list(s.scalars(query))


def _rates(rates: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    return {
        json.dumps(rate["group"], sort_keys=True): tuple(rate[f] for f in RATE_FIELDS)
        for rate in rates
    }


async def test_cli_report_and_web_give_identical_numbers(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = await _labelled_run(sqlite_db, tmp_path)
    shown = CliRunner().invoke(
        cli,
        [
            "defects",
            run_id,
            "--db",
            sqlite_db.url,
            "--json",
            "--by",
            "harm,application,scenario,level",
        ],
    )
    assert shown.exit_code == 0, shown.output
    from_cli = json.loads(shown.output)
    # Defaults everywhere: the same specification, so the same numbers (its digest says so).
    paths = write_report(sqlite_db, run_id, tmp_path / "report")
    document = json.loads(paths.json.read_text(encoding="utf-8"))
    from_report = document["violation_rates"] + document["defect_rates"]

    app = create_app(sqlite_db, settings=FAST_SETTINGS)
    app.state.corix.accounts.create_user("admin", PASSWORD, Role.ADMIN)
    browser = Browser(app)
    try:
        await browser.login("admin")
        page = await browser.get(f"/admin/runs/{run_id}/report.json")
    finally:
        await browser.aclose()
    assert page.status_code == 200
    from_web = page.json()["violation_rates"] + page.json()["defect_rates"]

    cli_rates = _rates(from_cli["rates"])
    assert {json.loads(key)["source"] for key in cli_rates} == {"reference", "llm", "human"}
    assert cli_rates == _rates(from_report) == _rates(from_web)
    assert from_cli["measurement"]["digest"] == document["measurement"]["digest"]
    # Several labels per dialogue (LLM repeats, two people) use the two-stage interval.
    human = [r for r in from_cli["rates"] if r["group"]["source"] == "human"]
    assert human and all(r["n"] == len(r["dialogues"]) for r in human)

    # The LLM judge's rates, corrected for its error measured against the two people.
    corrected = CliRunner().invoke(
        cli, ["defects", run_id, "--db", sqlite_db.url, "--json", "--correct-judge", "llm"]
    )
    assert corrected.exit_code == 0, corrected.output
    judged = json.loads(corrected.output)["judge_corrected"]
    assert judged and all(c["judge"] == "llm" and c["reference"] == "human" for c in judged)
    assert all(c["n_calibration"] > 0 for c in judged)


async def test_the_same_plan_twice_gives_the_same_report(tmp_path: Path) -> None:
    documents = []
    for attempt in ("first", "second"):
        db = Database(f"sqlite:///{tmp_path / attempt}.db")
        try:
            run_id = await _labelled_run(db, tmp_path)
            paths = write_report(db, run_id, tmp_path / attempt, bootstrap=50)
            document = json.loads(paths.json.read_text(encoding="utf-8"))
        finally:
            db.dispose()
        documents.append(document)
    first, second = documents
    # Session ids and times differ between runs; every number must not.
    for key in ("violation_rates", "defect_rates", "violation_totals", "defect_totals"):
        assert _stable(first[key]) == _stable(second[key])
    assert _stable(first["trees"]) == _stable(second["trees"])
    assert first["measurement"]["digest"] == second["measurement"]["digest"]


def _stable(value: Any) -> Any:
    """``value`` without the session ids that name dialogues (random per run)."""
    if isinstance(value, dict):
        return {
            key: _stable(item)
            for key, item in value.items()
            if key not in ("dialogues", "defect_dialogues", "sessions")
        }
    if isinstance(value, list):
        return [_stable(item) for item in value]
    return value
