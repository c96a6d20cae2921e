"""Element ids inside the report, so that every number can link to what is behind it.

Ids are built from names that come from configuration and storage (applications, node
ids, session ids), joined by dots. A part with characters outside ``[A-Za-z0-9_@-]`` has
them replaced, and a short hash of the original parts keeps two different names from
colliding.
"""

from __future__ import annotations

import hashlib
import re

_UNSAFE = re.compile(r"[^A-Za-z0-9_@-]+")


def anchor(kind: str, *parts: str) -> str:
    safe = [_UNSAFE.sub("-", part) for part in parts]
    slug = ".".join((kind, *safe))
    if safe == list(parts):
        return slug
    raw = "\x1f".join(parts).encode("utf-8")
    return f"{slug}.{hashlib.sha1(raw, usedforsecurity=False).hexdigest()[:6]}"


def session_anchor(session_id: str) -> str:
    return anchor("s", session_id)


def group_anchor(application: str, level: str | None = None, scenario: str | None = None) -> str:
    """The sessions of an application, optionally narrowed to a level and a scenario."""
    parts = [application, *(part for part in (level, scenario) if part is not None)]
    return anchor("g", *parts)


def rates_anchor(section: str, application: str) -> str:
    """An application's first row in a table of rates (``section``: violations or a harm)."""
    return anchor("r", section, application)


def node_anchor(tree: str, application: str, node_id: str) -> str:
    return anchor("n", tree, application, node_id)
