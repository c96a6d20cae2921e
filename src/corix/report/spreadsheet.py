"""CSV cells a spreadsheet would run: escaped, and folder names kept under their root.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula
to Excel, LibreOffice and Google Sheets (OWASP "CSV injection"); application replies and
tester text are hostile, so such a cell gets a leading ``'``, which spreadsheets show as
text. A plain number (``-3``, ``+0.5``) is left alone: it is data, not a formula.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from corix.errors import CorixError

__all__ = ["safe_folder", "spreadsheet_safe"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_UNSAFE_NAME_CHARS = re.compile(r"[^\w.-]+")


def spreadsheet_safe(value: Any) -> Any:
    """``value`` with a leading ``'`` when a spreadsheet would evaluate it; else as is."""
    if (
        isinstance(value, str)
        and value.startswith(_FORMULA_START)
        and not _PLAIN_NUMBER.fullmatch(value)
    ):
        return "'" + value
    return value


def safe_folder(root: Path, name: str) -> Path:
    """The folder ``root/name`` with ``name`` made one harmless path segment (separators,
    ``..`` and other characters replaced), so it always lies under ``root``."""
    segment = _UNSAFE_NAME_CHARS.sub("_", name).lstrip(".") or "_"
    folder = root / segment
    if folder.resolve().parent != root.resolve():  # cannot happen; kept as the guarantee
        raise CorixError(f"folder name '{name}' leaves {root}")
    return folder
