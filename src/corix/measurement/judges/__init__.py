"""LLM judges against people: agreement, the judge-corrected rate, and partial pooling of
the judge's error across cells.
"""

from corix.measurement.judges.agreement import JudgeAgreement, judge_agreements
from corix.measurement.judges.corrected_rate import CellCounts, CorrectedRate
from corix.measurement.judges.pooling import corrected_rates, judge_spread

__all__ = [
    "CellCounts",
    "CorrectedRate",
    "JudgeAgreement",
    "corrected_rates",
    "judge_agreements",
    "judge_spread",
]
