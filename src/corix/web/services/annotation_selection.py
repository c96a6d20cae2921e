"""Which sessions of a series go to human annotators: the admin's choice, never automatic.

- ``all``: every human session (red teaming, field testing); automated runs stay out,
  so starting one never floods the annotators' queues.
- ``sample``: a stratified sample of N complete sessions per application × scenario ×
  level, from every source, reproducible (:mod:`corix.storage.web.selection`).
- ``plan``: the series' label plan, written by ``corix plan labels --assign``: the
  dialogues whose labels narrow an LLM judge's corrected rates most.
- ``none``: no session; tasks already claimed can still be finished.

Only measurable sessions are chosen: a dialogue the application never answered says
nothing about it, so it would waste a pass.
"""

from __future__ import annotations

from enum import StrEnum

from corix.storage.web.selection import EVERY_HUMAN_SESSION, LABEL_PLAN, SAMPLE


class HumanAnnotation(StrEnum):
    ALL_HUMAN = EVERY_HUMAN_SESSION
    SAMPLE = SAMPLE
    PLAN = LABEL_PLAN
    NONE = "none"

    @property
    def label(self) -> str:
        return SELECTION_LABELS[self]


SELECTION_LABELS = {
    HumanAnnotation.ALL_HUMAN: "Every human session (automated runs stay out)",
    HumanAnnotation.SAMPLE: "A stratified sample of N per application × scenario × level",
    HumanAnnotation.PLAN: "The label plan of corix plan labels --assign",
    HumanAnnotation.NONE: "None",
}

__all__ = ["SELECTION_LABELS", "HumanAnnotation"]
