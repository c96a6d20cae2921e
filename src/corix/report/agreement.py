"""Agreement between the annotators of a run, per question, for every pair of annotators.

An item is one dialogue (dialogue-level questions) or one turn (turn-level questions).
Each annotator is compared through its settled labels from the measurement core, so it
counts once per item whatever its repeats. Free-text questions are left out: exact
agreement of prose means nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from corix.assessment import QuestionType
from corix.assessment.agreement import AgreementReport
from corix.measurement import Measurement


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of annotators ``a`` and ``b``, one report per question both answered."""

    a: str
    b: str
    reports: tuple[AgreementReport, ...]


def annotator_agreement(measurement: Measurement) -> list[PairAgreement]:
    """Every pair of annotators with labels (sorted by name)."""
    text = {q.id for q in measurement.schema.questions() if q.type is QuestionType.TEXT}
    pairs = []
    for a, b in combinations(sorted(measurement.annotators()), 2):
        reports = measurement.agreement(a, b, exclude=text)
        pairs.append(PairAgreement(a, b, tuple(r for r in reports if r.n_items)))
    return pairs
