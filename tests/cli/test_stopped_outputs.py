"""An export stopped half-way (Ctrl-C) leaves no file that looks complete, and says so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import invoke

from corix.storage import Database
from support.run_builder import write_tiny_run


@pytest.fixture
async def tiny_url(sqlite_db: Database) -> str:
    await write_tiny_run(sqlite_db)
    return sqlite_db.url


def _stops_after_one(real: Any) -> Any:
    def stopping(*args: Any, **kwargs: Any) -> Iterator[Any]:
        yield next(iter(real(*args, **kwargs)))
        raise KeyboardInterrupt

    return stopping


def test_a_stopped_jsonl_export_leaves_no_file(
    tiny_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import corix.report

    monkeypatch.setattr(corix.report, "export_jsonl", _stops_after_one(corix.report.export_jsonl))
    out = tmp_path / "exports" / "sessions.jsonl"
    out.parent.mkdir()
    code, _, err = invoke("export", "run-tiny", "-o", str(out), "--db", tiny_url)
    assert code == 130
    assert list(out.parent.iterdir()) == []  # neither a half file nor a temporary one
    assert f"stopped: {out} not written" in " ".join(err.split())


class _CtrlCAfterOneSession:
    """A progress tracker through which a Ctrl-C arrives once a session is exported."""

    def planned(self, total: int) -> None:
        pass

    def advance(self) -> None:
        raise KeyboardInterrupt

    def close(self) -> None:
        pass


def test_a_stopped_table_export_leaves_no_table(
    tiny_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import corix.cli.export_cmd

    monkeypatch.setattr(
        corix.cli.export_cmd, "progress_for", lambda *_a, **_k: _CtrlCAfterOneSession()
    )
    out = tmp_path / "tables"
    out.mkdir()
    code, _, err = invoke("export", "run-tiny", "--format", "csv", "-o", str(out), "--db", tiny_url)
    assert code == 130
    assert list(out.iterdir()) == []  # neither header-only tables nor temporary files
    assert f"stopped: nothing written in {out}" in " ".join(err.split())
    monkeypatch.undo()
    code, _, _ = invoke("export", "run-tiny", "--format", "csv", "-o", str(out), "--db", tiny_url)
    assert code == 0 and (out / "sessions.csv").read_text(encoding="utf-8").count("\n") > 1


def test_progress_goes_to_stderr_with_its_rate_and_time_left(tiny_url: str, tmp_path: Path) -> None:
    out = tmp_path / "sessions.jsonl"
    code, stdout, stderr = invoke("export", "run-tiny", "-o", str(out), "--db", tiny_url)
    assert code == 0
    assert " ".join(stdout.split()) == f"wrote 4 sessions to {out}"
    assert "exporting sessions: 4/4 done after" in stderr and "/s, about 0 s left)" in stderr
