"""How far each LLM judge agrees with people, shown wherever its rates are.

An LLM judge's defect rate is read as if people had labelled the dialogues; it is that
only as far as the judge agrees with them. For every harm, the judge's verdicts (the
same verdicts its rates count, its annotators combined as the rates combine them) are
compared with people's verdicts on the dialogues both labelled, by **Cohen's κ,
unweighted** (a verdict is yes / no: no weights apply). Where no person labelled any of
the judge's dialogues, the comparison is with the **reference annotator** — corix's
rule-based annotator, not people — and says so. Below :data:`MIN_KAPPA` (Landis and
Koch's "fair" and under), or with no comparison at all, every output that shows the
judge's rates warns that they are not people's rates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel

from corix.assessment import AnnotatorKind

MIN_KAPPA = 0.4
"""κ under this (0.4: "fair" at best on Landis and Koch's scale) is flagged ``low``."""
STATISTIC = "Cohen's κ (unweighted)"
PEOPLE = AnnotatorKind.HUMAN.value
REFERENCE = AnnotatorKind.REFERENCE.value
JUDGE = AnnotatorKind.LLM.value

__all__ = ["MIN_KAPPA", "STATISTIC", "JudgeAgreement", "cohen_kappa", "judge_agreements"]


class JudgeAgreement(BaseModel):
    """An LLM judge's agreement on one harm with people, or with the reference annotator."""

    judge: str
    harm: str
    against: str | None
    """``human`` (people), ``reference`` (the rule-based reference annotator), or ``None``:
    nobody else labelled any of the judge's dialogues."""
    statistic: str = STATISTIC
    n: int
    """Dialogues both labelled."""
    kappa: float | None
    floor: float = MIN_KAPPA
    low: bool
    """κ under :data:`floor`, unknown, or no comparison."""

    @property
    def against_whom(self) -> str:
        """Who the judge was compared with, in words."""
        return {
            PEOPLE: "people",
            REFERENCE: "the reference annotator (rules, not people)",
        }.get(self.against or "", "nobody")

    def sentence(self) -> str:
        """One line: the agreement, and the warning when it is low."""
        said = f"judge '{self.judge}' on {self.harm}: "
        if self.against is None:
            return said + "not checked against people or the reference annotator"
        kappa = "undefined" if self.kappa is None else f"{self.kappa:.2f}"
        said += f"{self.statistic} {kappa} with {self.against_whom} over {self.n} dialogues"
        if self.low:
            said += f"; under {self.floor:g}: its rates are not {self.against_whom}'s"
        return said


def judge_agreements(
    harms: Sequence[str], verdicts_of: Callable[[str], Mapping[str, Mapping[str, float]]]
) -> list[JudgeAgreement]:
    """Per harm, the LLM judge's κ against people (else the reference annotator).

    ``verdicts_of(harm)``: session id → annotator source → its value for the dialogue
    (:meth:`corix.measurement.Measurement.dialogue_verdicts`)."""
    found = []
    for harm in harms:
        by_session = verdicts_of(harm)
        if not any(JUDGE in sources for sources in by_session.values()):
            continue
        found.append(_against_best(harm, by_session))
    return found


def _against_best(harm: str, by_session: Mapping[str, Mapping[str, float]]) -> JudgeAgreement:
    for other in (PEOPLE, REFERENCE):
        pairs = [
            (sources[JUDGE] >= 0.5, sources[other] >= 0.5)
            for sources in by_session.values()
            if JUDGE in sources and other in sources
        ]
        if pairs:
            kappa = cohen_kappa(pairs)
            return JudgeAgreement(
                judge=JUDGE,
                harm=harm,
                against=other,
                n=len(pairs),
                kappa=kappa,
                low=kappa is None or kappa < MIN_KAPPA,
            )
    return JudgeAgreement(judge=JUDGE, harm=harm, against=None, n=0, kappa=None, low=True)


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Unweighted Cohen's κ of two raters' yes / no (``None`` when chance agreement is 1:
    both said one thing throughout). Computed here rather than by scikit-learn, whose import
    takes seconds, for a figure every rate table shows."""
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    yes_a = sum(a for a, _ in pairs) / n
    yes_b = sum(b for _, b in pairs) / n
    chance = yes_a * yes_b + (1 - yes_a) * (1 - yes_b)
    return None if chance >= 1 else (observed - chance) / (1 - chance)
