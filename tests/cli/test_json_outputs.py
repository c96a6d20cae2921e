"""``--json`` on the commands that print results, with ``id`` for the object's own id."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import invoke

from corix.cli.exit_codes import ExitCode
from corix.storage import Database
from support.run_builder import write_tiny_run


def test_app_check_as_json() -> None:
    code, out, err = invoke("app", "check", "demo:guarded", "--json")
    assert code == ExitCode.OK, err
    checked = json.loads(out)
    assert checked["spec"] == "demo:guarded" and checked["ok"] is True
    assert [step["name"] for step in checked["steps"]][:2] == ["open", "version"]
    assert all(step["ok"] and step["elapsed_ms"] >= 0 for step in checked["steps"])


def test_tree_show_as_json_names_every_child() -> None:
    code, out, err = invoke("tree", "show", "aria_pilot", "--json")
    assert code == ExitCode.OK, err
    tree = json.loads(out)
    assert tree["id"] == "aria_pilot" and tree["nodes"][-1]["id"] == tree["root"]
    ids = [node["id"] for node in tree["nodes"]]
    assert len(ids) == len(set(ids))
    for position, node in enumerate(tree["nodes"]):  # children come before their parents
        assert all(ids.index(child) < position for child in node["children"])
        assert len(node["weights"]) == len(node["children"])


async def test_report_as_json_names_its_files(sqlite_db: Database, tmp_path: Path) -> None:
    run = await write_tiny_run(sqlite_db)
    out_dir = tmp_path / "report"
    code, out, err = invoke(
        "report", run, "--bootstrap", "0", "--out", str(out_dir), "--db", sqlite_db.url, "--json"
    )
    assert code == ExitCode.OK, err
    written = json.loads(out)  # progress went to standard error
    assert written["id"] == run
    for kind in ("html", "markdown", "json"):
        assert Path(written[kind]).parent == out_dir.resolve() and Path(written[kind]).is_file()


async def test_sessions_list_json_uses_id(sqlite_db: Database) -> None:
    run = await write_tiny_run(sqlite_db)
    code, out, err = invoke("sessions", "list", run, "--db", sqlite_db.url, "--json")
    assert code == ExitCode.OK, err
    rows = json.loads(out)
    assert rows and all(row["id"].startswith("s") and "session" not in row for row in rows)
