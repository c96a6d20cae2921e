"""Errors raised to users. Each carries enough context to fix the input."""

from __future__ import annotations

from pathlib import Path


class CorixError(Exception):
    """Base class for errors that the CLI prints without a traceback."""


class ConfigError(CorixError):
    """A configuration file is malformed: names the file, the field and the line."""

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        field: str | None = None,
        line: int | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.field = field
        self.line = line
        self.reason = message
        where = []
        if self.path:
            where.append(self.path + (f":{line}" if line else ""))
        if field:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class UnknownNameError(CorixError, KeyError):
    """A name was looked up in a registry and not found."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])
