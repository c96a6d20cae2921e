"""The wording a questionnaire item was asked in, read from the pack the run stored.

Packs word an item differently per scenario under one id (``q_helpful``: "helped me plan
my journey" vs "helped me plan meals"); questionnaire statistics pool only identically
worded items, so leaves carry the wording.
"""

from __future__ import annotations

from collections.abc import Mapping

from corix.scenarios import ScenarioPack

__all__ = ["ItemWordings", "item_wordings"]

ItemWordings = Mapping[tuple[str, str], str]
"""(level, item id) → the item's text."""


def item_wordings(pack: ScenarioPack) -> ItemWordings:
    """The text of every questionnaire item of ``pack``, by level and item id."""
    questionnaires = pack.questionnaires
    return {
        (level, item.id): item.text
        for level in ("field_testing", "red_teaming")
        for item in getattr(questionnaires, level)
    }
