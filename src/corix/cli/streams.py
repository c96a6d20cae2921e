"""Standard output and error as whatever is on the other end takes them.

A terminal or a pipe that cannot encode a character gets it escaped as JSON does
(``\\u2013``), so a table, a line of JSON or an error message is never lost to an
encoding error; JSON stays valid. A reader that stops reading (``corix export RUN | head``)
ends the command quietly with ``ExitCode.OUTPUT_CLOSED``, as a Unix tool killed by SIGPIPE.
"""

from __future__ import annotations

import codecs
import io
import os
import sys

from typer._click.utils import PacifyFlushWrapper

__all__ = ["escape_unencodable", "output_was_closed", "silence_closed_output"]

_ESCAPE = "corix-json-escape"


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    escaped = []
    for char in error.object[error.start : error.end]:
        code = ord(char)
        if code > 0xFFFF:  # outside the basic plane: a surrogate pair, as JSON writes it
            code -= 0x10000
            escaped.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            escaped.append(f"\\u{code:04x}")
    return "".join(escaped), error.end


codecs.register_error(_ESCAPE, _json_escape)


def escape_unencodable() -> None:
    """Make standard output and error escape what their encoding cannot write."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors=_ESCAPE)


def output_was_closed() -> bool:
    """Whether the command stopped because its reader closed standard output.

    The command line's parser stops a command on a broken pipe itself, with exit 1 (its
    own convention); it marks the case by wrapping standard output to swallow later errors.
    """
    return isinstance(sys.stdout, PacifyFlushWrapper)


def silence_closed_output() -> None:
    """Point standard output at the null device, so nothing fails flushing it at exit."""
    try:
        fileno = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
    except (OSError, ValueError):  # not a file (a test's buffer): nothing to flush
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)
