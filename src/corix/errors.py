"""Errors raised to users. Each carries enough context to fix the input."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
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


class ConfigErrors(ConfigError):
    """Every problem found in one configuration file, each with its own line.

    Reads as its first problem (``path``, ``field``, ``line``) for code that wants one;
    ``problems`` holds them all, and the command line prints one line each.
    """

    def __init__(self, problems: Sequence[ConfigError]) -> None:
        first = problems[0]
        super().__init__(first.reason, path=first.path, field=first.field, line=first.line)
        self.problems = list(problems)
        self.args = ("; ".join(map(str, problems)),)

    def __str__(self) -> str:
        return str(self.args[0])


class UnknownNameError(CorixError, KeyError):
    """A name was looked up in a registry and not found."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def closest_name(name: str, known: Iterable[str]) -> str | None:
    """The known name ``name`` most likely meant: a plugin's name given without its
    namespace (``judge`` for ``acme.judge``), else the closest spelling, else ``None``."""
    candidates = sorted(set(known))
    namespaced = [candidate for candidate in candidates if candidate.endswith(f".{name}")]
    if len(namespaced) == 1:
        return namespaced[0]
    close = difflib.get_close_matches(name, candidates, n=1)
    return close[0] if close else None


def unknown_name(kind: str, name: str, known: Iterable[str]) -> UnknownNameError:
    """``unknown KIND 'x'. Did you mean 'y'? Known: …`` — the one wording of a lookup miss."""
    candidates = sorted(set(known))
    close = closest_name(name, candidates)
    hint = f" Did you mean '{close}'?" if close else ""
    listing = ", ".join(candidates) or "none"
    return UnknownNameError(f"unknown {kind} '{name}'.{hint} Known: {listing}.")
