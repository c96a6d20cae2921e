"""Lookup errors that suggest the closest known name."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from corix.errors import UnknownNameError


def unknown_name(kind: str, name: str, known: Iterable[str]) -> UnknownNameError:
    """Build the error for ``name`` missing among ``known``, with a "did you mean" hint."""
    candidates = sorted(set(known))
    close = difflib.get_close_matches(name, candidates, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    listing = ", ".join(candidates) or "none"
    return UnknownNameError(f"unknown {kind} '{name}'.{hint} Known: {listing}.")
