"""The wording a questionnaire item was asked in, read from the registered scenario packs.

Packs word an item differently per scenario under one id (``q_helpful``: "helped me plan
my journey" vs "helped me plan meals"); questionnaire statistics pool only identically
worded items, so leaves carry the wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from corix.scenarios.loader import PACK_FOLDERS, resolve_pack

__all__ = ["item_wording"]


def item_wording(scenario: str, level: str, item_id: str) -> str:
    """The item's text in ``scenario``'s pack at ``level``; ``""`` when the pack is not
    registered or lacks the item (such answers pool by id alone)."""
    return _pack_items(scenario).get((level, item_id), "")


@cache
def _pack_items(scenario: str) -> Mapping[tuple[str, str], str]:
    # Registered packs are package data that does not change while corix runs.
    if scenario not in PACK_FOLDERS:
        return {}
    questionnaires = resolve_pack(scenario).questionnaires
    return {
        (level, item.id): item.text
        for level in ("field_testing", "red_teaming")
        for item in getattr(questionnaires, level)
    }
