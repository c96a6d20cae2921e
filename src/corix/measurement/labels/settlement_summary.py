"""What a measurement settled: the annotators behind it, ties, resolutions, left-out dialogues.

The specification says how labels are to be settled; a :class:`Settlement` says what that
did to this record. Every output prints it beside the specification's headline, so a
number always comes with the annotators it is made of, how many repeats tied, how many
disagreements a senior resolved (or left open), and how many dialogues were not
measurable and why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from corix.measurement.labels.settle import RESOLVED, UNRESOLVED, SettledRecord
from corix.storage import MeasuredDialogue, StoredPass, StoredResolution

__all__ = ["AnnotatorInput", "Settlement", "not_measurable_reason", "settlement_of"]


@dataclass(frozen=True, slots=True)
class AnnotatorInput:
    """One annotator whose labels the measurement holds.

    ``dialogues`` counts the measurable dialogues it labelled; ``passes`` its successful
    passes (every repeat counts) and ``failed`` the passes that failed.
    """

    name: str
    kind: str
    guideline_version: str | None
    dialogues: int
    passes: int
    failed: int

    def text(self, name: Callable[[str], str] = str) -> str:
        version = f" {self.guideline_version}" if self.guideline_version else ""
        return f"{name(self.name)} ({self.kind}{version}, {self.dialogues} dialogues)"


@dataclass(frozen=True, slots=True)
class Settlement:
    """What settling the record under the specification's ``rule`` gave."""

    rule: str
    annotators: tuple[AnnotatorInput, ...]
    label_ties: int
    """Labels (annotator × item) whose values tied; the rule broke the tie."""
    verdict_ties: int
    """Verdicts (annotator × dialogue × harm) whose passes tied."""
    resolved: int
    """Disputed answers a senior resolved (the resolution settles the label)."""
    unresolved: int
    """Disputed answers a senior left open (the disagreement is kept)."""
    measured: int
    """Dialogues measured."""
    not_measurable: dict[str, int]
    """Dialogues left out as not measurable, per reason."""

    def text(self, name: Callable[[str], str] = str) -> str:
        """One line for the top of an output; ``name`` words annotators' stored names."""
        who = "; ".join(a.text(name) for a in self.annotators) or "none"
        left_out = sum(self.not_measurable.values())
        reasons = ", ".join(f"{reason} {n}" for reason, n in self.not_measurable.items())
        return (
            f"annotators: {who}. Settled by {self.rule}: {self.label_ties} tied labels, "
            f"{self.verdict_ties} tied verdicts; resolutions: {self.resolved} resolved, "
            f"{self.unresolved} unresolved; {self.measured} dialogues measured, "
            f"{left_out} not measurable" + (f" ({reasons})" if reasons else "")
        )

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "annotators": [
                {
                    "name": a.name,
                    "kind": a.kind,
                    "guideline_version": a.guideline_version,
                    "dialogues": a.dialogues,
                    "passes": a.passes,
                    "failed": a.failed,
                }
                for a in self.annotators
            ],
            "label_ties": self.label_ties,
            "verdict_ties": self.verdict_ties,
            "resolved": self.resolved,
            "unresolved": self.unresolved,
            "measured": self.measured,
            "not_measurable": dict(self.not_measurable),
        }


def not_measurable_reason(dialogue: MeasuredDialogue) -> str:
    """The kind of reason a dialogue is not measurable (``app_error``, ``no application
    reply``, …), without the error text."""
    return (dialogue.not_measurable or "").split(":", 1)[0]


def settlement_of(
    rule: str,
    passes: Iterable[StoredPass],
    dialogues: Sequence[MeasuredDialogue],
    resolutions: Sequence[StoredResolution],
    record: SettledRecord,
) -> Settlement:
    """The settlement of ``record``, made from the selected ``passes`` under ``rule``."""
    measurable = {d.session_id for d in dialogues if d.not_measurable is None}
    labelled: dict[tuple[str, str, str | None], set[str]] = {}
    counts: Counter[tuple[str, str, str | None, bool]] = Counter()
    for stored in passes:
        if stored.session_id not in measurable:
            continue
        version = stored.provenance.get("guideline_version")
        key = (stored.annotator, stored.annotator_kind, None if version is None else str(version))
        labelled.setdefault(key, set()).add(stored.session_id)
        counts[(*key, stored.status == "ok")] += 1
    annotators = tuple(
        AnnotatorInput(
            name=name,
            kind=kind,
            guideline_version=version,
            dialogues=len(sessions),
            passes=counts[(name, kind, version, True)],
            failed=counts[(name, kind, version, False)],
        )
        for (name, kind, version), sessions in sorted(labelled.items(), key=str)
    )
    latest = {
        (r.session_id, r.category, r.question_id, r.turn_index): r.status
        for r in resolutions
        if r.session_id in measurable
    }
    left_out = Counter(not_measurable_reason(d) for d in dialogues if d.not_measurable is not None)
    return Settlement(
        rule=rule,
        annotators=annotators,
        label_ties=sum(label.settled.tie for label in record.labels),
        verdict_ties=sum(verdict.settled.tie for verdict in record.verdicts),
        resolved=sum(status == RESOLVED for status in latest.values()),
        unresolved=sum(status == UNRESOLVED for status in latest.values()),
        measured=len(measurable),
        not_measurable=dict(sorted(left_out.items())),
    )
