"""`corix validity sim`: formats the core's simulation gap, as a table and as JSON."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from corix.cli.exit_codes import ExitCode
from corix.cli.main import app
from corix.measurement import measure, simulation_gap_per_cell
from corix.storage import Database
from support.run_builder import write_tiny_run
from support.testers_run import write_judged_levels_run, write_mixed_testers_run

runner = CliRunner()


async def test_json_holds_the_cores_figures(sqlite_db: Database) -> None:
    run_id = await write_mixed_testers_run(sqlite_db)
    result = runner.invoke(
        app, ["validity", "sim", run_id, "--delta", "0.2", "--db", sqlite_db.url, "--json"]
    )
    assert result.exit_code == ExitCode.OK, result.output
    document = json.loads(result.output)
    expected = simulation_gap_per_cell(sqlite_db, measure(sqlite_db, [run_id]), delta=0.2)
    assert document["cells"] == expected.model_dump(mode="json")["cells"]
    assert document["delta"] == 0.2 and "digest" in document["measurement"]


async def test_the_table_says_per_cell_whether_simulation_stands_in(sqlite_db: Database) -> None:
    run_id = await write_mixed_testers_run(sqlite_db)
    result = runner.invoke(app, ["validity", "sim", run_id, "--db", sqlite_db.url])
    assert result.exit_code == ExitCode.OK, result.output
    assert "simulation stands in: no" in result.output
    assert "-25.0 pts" in result.output and "Fisher" in result.output
    assert "closest to the human testers first" in result.output and "verbose" in result.output
    # People average 2.5 turns, every simulated tester 1: no reweighting reaches them.
    assert "calibrated simulation: the human testers' feature means lie outside" in " ".join(
        result.output.split()
    )


async def test_a_run_without_both_kinds_says_so(sqlite_db: Database) -> None:
    run_id = await write_tiny_run(sqlite_db)
    result = runner.invoke(app, ["validity", "sim", run_id, "--db", sqlite_db.url])
    assert result.exit_code == ExitCode.OK, result.output
    assert "no application × scenario × level has both" in result.output


def test_usage_errors_are_one_line(sqlite_db: Database) -> None:
    result = runner.invoke(app, ["validity", "sim", "--db", sqlite_db.url])
    assert result.exit_code == ExitCode.USAGE and "give a run id or --series" in result.output
    result = runner.invoke(app, ["validity", "sim", "x", "--delta", "2", "--db", sqlite_db.url])
    assert result.exit_code == ExitCode.USAGE and "Traceback" not in result.output


async def test_judge_validity_per_level_flags_the_inaccurate_level(sqlite_db: Database) -> None:
    run_id = await write_judged_levels_run(sqlite_db)
    args = ["validity", "judge", run_id, "--by", "level,application", "--db", sqlite_db.url]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == ExitCode.OK, result.output
    rows = json.loads(result.output)["judge_validity"]
    expected = measure(sqlite_db, [run_id]).judge_corrected(
        "llm", "human", by=("application", "level")
    )
    assert rows == [rate.model_dump(mode="json") for rate in expected]
    table = runner.invoke(app, args)
    assert table.exit_code == ExitCode.OK, table.output
    words = " ".join(table.output.split())
    # Field testing's row (its warning may wrap inside its cell), and the legend.
    assert words.count("below") == 2 and "'below accuracy'" in words
    assert "Wilson, continuity-corrected" in words


def test_judge_validity_rejects_an_unknown_grouping(sqlite_db: Database) -> None:
    result = runner.invoke(app, ["validity", "judge", "r", "--by", "tester", "--db", sqlite_db.url])
    assert result.exit_code == ExitCode.USAGE and "--by takes application" in result.output
