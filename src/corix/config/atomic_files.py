"""Files that appear whole or not at all.

Every file corix writes for a person (an export, a report, a release, a sized plan) is
written under a hidden temporary name in its own folder and renamed over the real name
only once complete. A command stopped half-way (Ctrl-C, a full disk, an error) leaves
no file that looks complete: the temporary one is removed, and a file that was already
there is left as it was.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_open", "atomic_path", "write_atomically"]


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path``, renamed to ``path`` when the block ends normally
    and removed when it does not (for writers that take a path, such as Parquet's)."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    try:
        handle, temporary = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".partial", dir=path.parent
        )
    except OSError as exc:  # named by the path asked for, not the temporary one
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    os.close(handle)
    partial = Path(temporary)
    try:
        yield partial
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    # mkstemp makes the file private (0600): give it the permissions a plain open would.
    umask = os.umask(0)
    os.umask(umask)
    partial.chmod(0o666 & ~umask)
    os.replace(partial, path)


@contextmanager
def atomic_open(path: Path, mode: str = "w", **options: Any) -> Iterator[IO[Any]]:
    """``path.open(mode, **options)``, but the file appears under its name only once the
    block has ended normally and the file is closed."""
    with atomic_path(path) as partial, partial.open(mode, **options) as handle:
        yield handle


def write_atomically(path: Path, content: str | bytes, *, encoding: str = "utf-8") -> None:
    """``path.write_text`` / ``path.write_bytes``, whole or not at all."""
    if isinstance(content, bytes):
        with atomic_open(path, "wb") as handle:
            handle.write(content)
    else:
        with atomic_open(path, "w", encoding=encoding) as handle:
            handle.write(content)
