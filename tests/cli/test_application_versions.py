"""Versions through the CLI: a plan runs any version by its name; a changed spec under a
stored name is refused at preflight unless the plan asks for a new version."""

from __future__ import annotations

from pathlib import Path

import pytest

from corix.cli.common import run_cli
from corix.cli.exit_codes import ExitCode
from corix.cli.main import app
from corix.storage import Database, list_runs, run_applications
from corix.storage.applications import list_applications


def _run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db: Database, app_yaml: str
) -> tuple[int, str]:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"name: versions\nseed: 1\napplications:\n  - {app_yaml}\n"
        "scenarios: [tv_spoilers]\nlevels:\n  model_testing: {sessions: 1}\n",
        encoding="utf-8",
    )
    with pytest.raises(SystemExit) as end:
        run_cli(app, ["run", str(plan), "--db", db.url])
    printed = capsys.readouterr()
    return int(end.value.code or 0), printed.err


def test_versions_run_by_name_and_a_changed_spec_needs_new_version(
    any_db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, tmp_path, any_db, "{name: acme, spec: 'demo:guarded'}")[0] == 0
    code, err = _run(capsys, tmp_path, any_db, "{name: acme, spec: 'demo:unguarded'}")
    assert code == ExitCode.USAGE
    assert "plan.yaml:4" in err and "new_version: true" in err
    assert len(list_runs(any_db)) == 1  # refused before anything was stored
    changed = "{name: acme, spec: 'demo:unguarded', new_version: true}"
    assert _run(capsys, tmp_path, any_db, changed)[0] == 0
    by_name = "{name: acme v2, spec: 'demo:unguarded'}"  # the IntegrityError of old
    assert _run(capsys, tmp_path, any_db, by_name)[0] == 0
    code, err = _run(capsys, tmp_path, any_db, "{name: acme v2, spec: 'demo:guarded'}")
    assert code == ExitCode.USAGE and "'acme v2' is stored with another spec" in err
    stored = {a.name: a.spec for a in list_applications(any_db)}
    assert stored == {"acme": "demo:guarded", "acme v2": "demo:unguarded"}
    runs = list_runs(any_db)
    assert [r.status for r in runs] == ["complete"] * 3
    assert [run_applications(any_db, r.id) for r in runs] == [
        {"acme"},
        {"acme v2"},
        {"acme v2"},
    ]


def test_a_version_that_does_not_exist_is_refused_naming_those_that_do(
    any_db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "ver v9" with only "ver" stored used to run "ver" silently.
    assert _run(capsys, tmp_path, any_db, "{name: ver, spec: 'demo:guarded'}")[0] == 0
    changed = "{name: ver, spec: 'demo:unguarded', new_version: true}"
    assert _run(capsys, tmp_path, any_db, changed)[0] == 0
    code, err = _run(capsys, tmp_path, any_db, "{name: ver v9, spec: 'demo:guarded'}")
    assert code == ExitCode.USAGE
    assert "plan.yaml:4" in err
    assert "'ver v9' is not stored; the versions of 'ver' are: ver, ver v2" in err
    assert len(list_runs(any_db)) == 2  # refused before anything was stored


def test_a_new_application_may_not_be_named_like_a_version(
    any_db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(capsys, tmp_path, any_db, "{name: fresh v3, spec: 'demo:guarded'}")
    assert code == ExitCode.USAGE
    assert "register it as 'fresh'" in err
    assert list_applications(any_db) == []
