"""JSON read from places a user controls: environment variables and JSON Lines files.

Errors name the variable, or the file and line, so bad input is fixed without guessing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from corix.errors import ConfigError, CorixError

TOO_DEEP = "nested too deeply"


def json_object_from_env(variable: str) -> dict[str, Any] | None:
    """The JSON object in ``$variable``, or ``None`` when the variable is unset or empty."""
    raw = os.environ.get(variable)
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CorixError(f"${variable} is not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise CorixError(f"${variable} is not valid JSON: {TOO_DEEP}") from None
    if not isinstance(value, dict):
        raise CorixError(f"${variable} must hold a JSON object")
    return value


def jsonl_records(text: str, path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Each non-blank line of a JSON Lines file as ``(line number, object)``.

    Lines end at ``\n`` only (a ``\r`` before it is dropped): JSON allows U+2028, U+2029,
    U+0085 and form feeds inside strings, where ``str.splitlines`` would cut the line.
    """
    records = []
    for line, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw, parse_constant=_refuse_constant)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"not valid JSON: {exc.msg}", path=path, line=line) from None
        except ValueError as exc:
            raise ConfigError(str(exc), path=path, line=line) from None
        except RecursionError:
            raise ConfigError(f"not valid JSON: {TOO_DEEP}", path=path, line=line) from None
        if not isinstance(record, dict):
            raise ConfigError("expected a JSON object", path=path, line=line)
        records.append((line, record))
    return records


def _refuse_constant(name: str) -> Any:
    # Python's json accepts NaN and Infinity, which are not JSON and not labels.
    raise ValueError(f"{name} is not a valid value (JSON has no {name})")
