"""`corix packs validate NAME|PATH` and a complete `corix packs show`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corix.cli.main import app
from corix.registry import refresh_plugins
from corix.scenarios import PACK_FOLDERS, expand_model_tests, resolve_pack
from corix.scenarios.loader import builtin_pack_dir

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


def test_show_lists_the_tools_a_pack_gives_and_which_are_forbidden() -> None:
    shown = runner.invoke(app, ["packs", "show", "tv_spoilers"])
    flat = " ".join(shown.output.split())  # as read, however the terminal wrapped it
    tools = flat[flat.index("tools: 2 (run by corix from the pack)") : flat.index("model tests")]
    guide, forum = tools.split("post_to_forum:")
    assert "episode_guide: The plot of one episode" in guide and "forbidden" not in guide
    assert "forbidden: Posting in the viewer's name" in forum


def test_a_pack_a_plugin_registers_is_listed_and_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin's pack is in `packs list` as well as `packs show`, under its namespaced name."""
    folder = tmp_path / "spoilers"
    shutil.copytree(builtin_pack_dir() / "tv_spoilers", folder)
    manifest = folder / "pack.yaml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace("name: tv_spoilers", "name: spoiler_copy"),
        encoding="utf-8",
    )
    (tmp_path / "corix_plugin_packs.py").write_text(
        "from pathlib import Path\n"
        "from corix.scenarios import PACK_FOLDERS\n"
        "def register(plugin):\n"
        f"    plugin.add(PACK_FOLDERS, 'spoilers', Path({str(folder)!r}))\n",
        encoding="utf-8",
    )
    dist_info = tmp_path / "corix_plugin_packs-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: corix-plugin-packs\nVersion: 1.0\n", encoding="utf-8"
    )
    (dist_info / "entry_points.txt").write_text(
        "[corix.plugins]\npacks = corix_plugin_packs:register\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with PACK_FOLDERS.scope():
        refresh_plugins()
        listed = runner.invoke(app, ["packs", "list", "--json"])
        shown = runner.invoke(app, ["packs", "show", "corix_plugin_packs.spoilers", "--json"])
    assert listed.exit_code == 0, listed.output
    assert "spoiler_copy" in {pack["name"] for pack in json.loads(listed.output)}
    assert json.loads(shown.output)["name"] == "spoiler_copy"
