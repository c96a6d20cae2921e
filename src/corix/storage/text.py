"""The one boundary where untrusted text becomes storable.

Application replies, tester messages and judge output may carry bytes no database keeps:
NUL (PostgreSQL refuses it in text and JSON) and lone surrogates (not encodable as UTF-8,
refused by SQLite's driver and PostgreSQL alike); JSON values may carry NaN or Infinity,
which PostgreSQL's JSON refuses. They are replaced by U+FFFD here, in the
column types every untrusted column uses, so no write path can crash on them; writers
that want to record the replacement ask :func:`storable_fields` which fields changed.
Every other string a statement carries (names, form values used in lookups) is made
storable as it is sent to the driver (:func:`storable_parameters`, hooked into every
engine), so a NUL in a sign-in form finds no user instead of failing the request.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, TypeAlias

from sqlalchemy import JSON, Text
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# What serialised JSON shows of what storable_json replaces: the characters themselves,
# their escapes (a surrogate pair's too, which then costs only the walk) and the numbers.
_SUSPECT_JSON = re.compile(r"[\x00\ud800-\udfff]|\\u0000|\\u[dD][89a-fA-F]|NaN|Infinity")

__all__ = [
    "REPLACEMENT",
    "UntrustedJSON",
    "UntrustedText",
    "marked",
    "storable_fields",
    "storable_json",
    "storable_parameters",
    "storable_text",
]


def storable_text(text: str) -> str:
    """``text`` with NUL and lone surrogates replaced by U+FFFD."""
    return _UNSTORABLE.sub(REPLACEMENT, text) if _suspect(text) else text


def _suspect(text: str) -> bool:
    """Whether ``text`` may hold NUL or a lone surrogate. Nearly every text stored is ASCII
    without NUL, which two scans in C tell (``isascii`` reads a flag) faster than the
    regular expression, which runs on the rest."""
    return not text.isascii() or "\x00" in text


def storable_json(value: Any) -> Any:
    """``value`` with every string in it (keys included) made storable, and NaN and the
    infinities as strings: JSON has no such numbers and PostgreSQL refuses them."""
    # Exact types first: every turn's JSON passes here, nearly all of it plain dicts and
    # strings, and ``isinstance`` against ``Mapping`` is the slow way to recognize a dict.
    kind = type(value)
    if kind is str:
        return storable_text(value)
    if kind is dict:
        return {storable_json(key): storable_json(item) for key, item in value.items()}
    if kind is int or kind is bool or value is None:
        return value
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, Mapping):
        return {storable_json(key): storable_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [storable_json(item) for item in value]
    return value


def storable_parameters(parameters: Any) -> Any:
    """A statement's parameters (a mapping, a sequence, or a list of either for many rows)
    with every string made storable; the same object when nothing needs replacing."""
    if isinstance(parameters, Mapping):
        if not _any_needs_replacing(parameters.values()):
            return parameters
        return {key: _storable_value(value) for key, value in parameters.items()}
    if isinstance(parameters, list | tuple):
        if not _any_needs_replacing(parameters):
            return parameters
        return type(parameters)(_storable_value(value) for value in parameters)
    return parameters


def _any_needs_replacing(values: Iterable[Any]) -> bool:
    # Every row of every statement passes here: text and plain values are checked inline.
    search = _UNSTORABLE.search
    for value in values:
        kind = type(value)
        if kind is str:  # _suspect inline: a call per value costs as much as its test
            if (not value.isascii() or "\x00" in value) and search(value) is not None:
                return True
        elif kind not in _PLAIN and _needs_replacing(value):
            return True
    return False


_PLAIN = frozenset({int, float, bool, type(None), datetime})
"""Exact types that hold no text: ``isinstance`` against the ``Mapping`` ABC is the slow
way to tell them apart."""


def _needs_replacing(value: Any) -> bool:
    if isinstance(value, str):
        return _suspect(value) and _UNSTORABLE.search(value) is not None
    if isinstance(value, Mapping | list | tuple):
        return storable_parameters(value) is not value
    return False


def _storable_value(value: Any) -> Any:
    if isinstance(value, str):
        return storable_text(value)
    return storable_parameters(value)


def _suspect_json(text: str) -> bool:
    """Whether serialised JSON may show something :func:`storable_json` replaces. ASCII
    JSON without NUL, an escape or those two words cannot; scans in C tell that faster
    than the regular expression, which runs on the rest."""
    plain = "\x00" not in text and "\\u" not in text
    if text.isascii() and plain and "NaN" not in text and "Infinity" not in text:
        return False
    return _SUSPECT_JSON.search(text) is not None


def storable_fields(row: Mapping[str, Any], fields: Iterable[str]) -> list[str]:
    """The text ``fields`` of ``row`` that hold something :func:`storable_text` replaces."""
    return [
        name
        for name in fields
        if isinstance(value := row.get(name), str)
        and _suspect(value)
        and _UNSTORABLE.search(value) is not None
    ]


Columns: TypeAlias = dict[str, Any]
"""A row's values by column name, as SQLAlchemy Core inserts or updates them: the table
fixes the keys, the statement takes any value."""


def marked(row: Columns, fields: Iterable[str], *, into: str) -> Columns:
    """``row`` noting, in its JSON column ``into``, which ``fields`` had text replaced."""
    replaced = storable_fields(row, fields)
    if not replaced:
        return row
    return {**row, into: {**(row.get(into) or {}), "replaced_unstorable": replaced}}


class UntrustedText(TypeDecorator[str]):
    """``Text`` that stores untrusted text with unstorable characters replaced."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else storable_text(value)


class UntrustedJSON(TypeDecorator[Any]):
    """``JSON`` whose strings are made storable before they are written."""

    impl = JSON
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        return storable_json(value)

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], Any] | None:
        """Serialise the value as it is, and walk it with :func:`storable_json` only when
        its JSON text shows something that could need replacing: the same stored text,
        without copying every JSON value (a session's provenance, a turn's meta) twice."""
        serialise = self.impl_instance.bind_processor(dialect)
        if serialise is None:
            return super().bind_processor(dialect)

        def process(value: Any) -> Any:
            stored = serialise(value)
            if type(stored) is str and not _suspect_json(stored):
                return stored
            return serialise(storable_json(value))

        return process
