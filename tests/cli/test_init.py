"""`corix init`: a starter plan that passes its own check offline, never overwriting."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import invoke

from corix.cli.exit_codes import ExitCode


def test_the_starter_plan_passes_the_preflight_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("init")
    assert code == ExitCode.OK, err
    plan = tmp_path / "plan.yaml"
    assert "wrote plan.yaml" in out
    text = plan.read_text(encoding="utf-8")
    assert text.startswith("# ") and "gates:" in text  # commented, and shows the gates block
    code, out, err = invoke("run", "--check", "plan.yaml")
    assert code == ExitCode.OK, out + err
    assert "is ready" in out
    assert not (tmp_path / ".corix").exists()  # the check stored nothing


def test_an_existing_file_is_never_overwritten(tmp_path: Path) -> None:
    plan = tmp_path / "mine.yaml"
    plan.write_text("name: mine\n", encoding="utf-8")
    code, _, err = invoke("init", str(plan))
    assert code == ExitCode.USAGE
    assert "already exists" in err and str(plan) in err
    assert plan.read_text(encoding="utf-8") == "name: mine\n"


def test_a_folder_gets_plan_yaml_and_a_missing_folder_is_named(tmp_path: Path) -> None:
    code, _, err = invoke("init", str(tmp_path))
    assert code == ExitCode.OK, err
    assert (tmp_path / "plan.yaml").is_file()
    code, _, err = invoke("init", str(tmp_path / "nope" / "plan.yaml"))
    assert code == ExitCode.USAGE
    assert "is not a folder" in err and "nope" in err
