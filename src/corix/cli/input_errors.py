"""Errors of the user's files and machine, told as what to do: never "internal error".

An ``OSError`` that reaches the command line comes from a path the user gave (an output
that exists, a folder that does not, a file without permission) or from their machine;
a ``UnicodeDecodeError`` from a file that is not text. Both are bad input (exit 2).
"""

from __future__ import annotations

import errno
from pathlib import Path

__all__ = ["describe_input_error"]

_HINTS = {
    errno.EEXIST: "it already exists; remove it or choose another path",
    errno.EISDIR: "it is a folder; give a file path",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.ENOENT: "no such file or folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "no space left on the device",
}


def describe_input_error(exc: BaseException) -> str | None:
    """One line for an error caused by the user's files or machine, else ``None``."""
    if isinstance(exc, UnicodeDecodeError):
        return f"the input is not UTF-8 text ({exc.reason} at byte {exc.start})"
    if not isinstance(exc, OSError):
        return None
    reason = _HINTS.get(exc.errno or 0) or exc.strerror or str(exc) or type(exc).__name__
    if exc.errno == errno.EEXIST and exc.filename and Path(str(exc.filename)).is_file():
        reason = "a file is in the way where a folder is wanted; remove it or choose a folder"
    if exc.filename is None:
        return f"cannot proceed: {reason}"
    return f"cannot use '{exc.filename}': {reason}"
