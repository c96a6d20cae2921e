"""The exit codes of the ``corix`` command, documented in README.md."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode"]


class ExitCode(IntEnum):
    """What a script calling ``corix`` may rely on."""

    OK = 0
    """Everything asked for ran."""
    INTERNAL_ERROR = 1
    """A bug in corix: one line names it; ``corix --debug …`` shows the traceback."""
    USAGE = 2
    """A bad invocation or bad input (file, option, id, database URL); nothing was changed."""
    FAILURES = 3
    """A run or annotation finished, but some sessions or passes failed
    (``--allow-failures`` turns this into 0)."""
    FAILED = 4
    """A run produced nothing usable: every session failed, or it stopped on an error."""
    CANCELLED = 5
    """The run was cancelled by ``corix runs cancel``."""
    GATE_FAILED = 6
    """``corix gate``: a defect rate passed its threshold (or a gated harm was not measured)."""
    STORAGE = 7
    """The database stopped taking writes (full disk, read-only, locked, gone): the run
    stopped (``interrupted``); ``corix run --resume RUN`` finishes it once it works."""
    TAKEN_OVER = 8
    """Another process took the run over while this one was paused or cut off (a stopped
    process, a laptop lid, a stalled VM): this one stopped calling models at once and its
    writes since were refused; the new holder finishes the run."""
    INTERRUPTED = 130
    """Stopped by Ctrl-C or SIGTERM; ``corix run --resume RUN`` finishes it."""
    OUTPUT_CLOSED = 141
    """The reader of standard output stopped reading (``corix export RUN | head``): what
    it read is whole, the rest was not written (as a Unix tool stopped by SIGPIPE)."""
