"""Files appear whole or not at all: a stopped writer leaves no file that looks complete."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from corix.config import atomic_open, write_atomically


def test_a_finished_write_appears_under_its_name_with_ordinary_permissions(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    write_atomically(target, "whole\n")
    assert target.read_text(encoding="utf-8") == "whole\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert [path.name for path in tmp_path.iterdir()] == ["out.txt"]


def _stopped_half_way(target: Path) -> None:
    with atomic_open(target, encoding="utf-8") as handle:
        handle.write("half a line")
        raise KeyboardInterrupt


def test_a_stopped_write_leaves_nothing_and_the_earlier_file_as_it_was(tmp_path: Path) -> None:
    fresh, earlier = tmp_path / "fresh.jsonl", tmp_path / "earlier.jsonl"
    earlier.write_text("old\n", encoding="utf-8")
    for target in (fresh, earlier):
        with pytest.raises(KeyboardInterrupt):
            _stopped_half_way(target)
    assert not fresh.exists()
    assert earlier.read_text(encoding="utf-8") == "old\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["earlier.jsonl"]


def test_a_bad_path_is_named_as_given_not_as_the_temporary_file(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "out.csv"
    with pytest.raises(FileNotFoundError) as raised:
        write_atomically(missing, "x")
    assert raised.value.filename == str(missing)
    with pytest.raises(IsADirectoryError) as raised_dir:
        write_atomically(tmp_path, "x")
    assert raised_dir.value.filename == str(tmp_path)
