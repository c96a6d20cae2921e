"""`corix packs validate NAME|PATH` and a complete `corix packs show`."""

from __future__ import annotations

from typer.testing import CliRunner

from corix.cli.main import app
from corix.scenarios import expand_model_tests, resolve_pack

runner = CliRunner()


def test_a_built_in_pack_validates_by_name() -> None:
    result = runner.invoke(app, ["packs", "validate", "tv_spoilers"])
    assert result.exit_code == 0, result.output
    assert "tv_spoilers is valid" in result.output


def test_show_says_how_many_tests_it_left_out_and_lists_them_all_on_request() -> None:
    total = len(expand_model_tests(resolve_pack("tv_spoilers"), 0))
    short = runner.invoke(app, ["packs", "show", "tv_spoilers"], env={"COLUMNS": "300"})
    assert f"and {total - 10} more (--all lists them)" in short.output
    assert "questionnaires" in short.output and "personas" in short.output
    full = runner.invoke(app, ["packs", "show", "tv_spoilers", "--all"], env={"COLUMNS": "300"})
    assert "more (--all" not in full.output
    assert full.output.count("tv_spoilers/") == total
