"""Questionnaire answers as measured: item descriptives, group differences, and the wording
an item was asked in.
"""

from corix.measurement.questionnaires.item_statistics import (
    GroupComparison,
    ItemSummary,
    compare_groups,
    describe_items,
    questionnaire_items,
)
from corix.measurement.questionnaires.wording import item_wordings

__all__ = [
    "GroupComparison",
    "ItemSummary",
    "compare_groups",
    "describe_items",
    "item_wordings",
    "questionnaire_items",
]
