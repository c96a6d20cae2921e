"""Saying what a stopped command left behind.

Files are written whole or not at all (``corix.config.atomic_open``); when a command
stops half-way (Ctrl-C, a full disk, a bug), these lines say which outputs were not written, and
for a folder of files which ones were, so nothing left looks like a finished export.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from corix.cli.common import err_console
from corix.errors import CorixError

__all__ = ["telling_what_was_left"]


@contextmanager
def telling_what_was_left(output: Path | None) -> Iterator[None]:
    """Around the writing of ``output`` (a file, or a folder of files)."""
    if output is None:
        yield
        return
    started = time.time()
    existed = output.exists()
    try:
        yield
    except (CorixError, typer.Exit, OSError):
        raise  # bad input or a path the error names: nothing of the output was written
    except BaseException:
        _tell(output, existed, started)
        raise


def _tell(output: Path, existed: bool, started: float) -> None:
    if output.is_dir():
        written = sorted(
            path.name
            for path in output.iterdir()
            if path.is_file() and not path.name.startswith(".") and path.stat().st_mtime >= started
        )
        if written:
            line = f"stopped: only {', '.join(written)} written in {output}; the set is incomplete"
        else:
            line = f"stopped: nothing written in {output}"
    elif existed:
        line = f"stopped: {output} not written; the earlier file is unchanged"
    else:
        line = f"stopped: {output} not written"
    err_console.print(line, highlight=False, soft_wrap=True)
