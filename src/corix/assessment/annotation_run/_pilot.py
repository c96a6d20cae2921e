"""Adaptive repeats' pilot: the judge's noise, measured once before any item may stop.

The stopping rule needs the judge's noise (:func:`~corix.assessment.stability.change_probability`).
Measured as items finish, it would depend on which finished first — the number of
workers, their speed, the order of completion — so the same seed could ask different
repeats. Instead a pilot runs first: a seeded sample of the run's sessions (the same for
the same seed and sessions, whatever runs them) gets the first two repeats of every item
that is asked whatever the screening says (the screening itself, ungated categories,
harms). Their stored pairs give one bound (:class:`~corix.assessment.stability.JudgeNoise`),
read back from the database, so a local run, a resumed one and one spread over any number
of Ray workers stop every item after the same repeats.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from corix.assessment.annotation_run._job import AnnotationJob
from corix.assessment.annotation_run._summary import AnnotationTally
from corix.assessment.annotation_run.repeat_consensus import answers_of
from corix.assessment.stability import JudgeNoise

PILOT_SESSIONS = 200
"""Sessions in the pilot: at four items a session, about 800 pairs of runs (100 sessions
left the bound loose enough to cost 0.02–0.05× more calls at noise 0.2)."""

PILOT_REPEATS = 2
"""Repeats the pilot asks of each item: their disagreement measures the noise."""


def pilot_sessions(session_ids: Sequence[str], seed: int) -> list[str]:
    """The pilot's sessions: the first :data:`PILOT_SESSIONS` in an order drawn from
    ``seed``, independent of the order ``session_ids`` come in."""

    def draw(session_id: str) -> bytes:
        return hashlib.sha256(f"{seed}/pilot/{session_id}".encode()).digest()

    return sorted(session_ids, key=draw)[:PILOT_SESSIONS]


def measured_noise(job: AnnotationJob, session_ids: Sequence[str]) -> float:
    """The judge noise the stopping rule assumes: the bound from the stored first two
    repeats of the pilot's items (``job.options.judge_noise`` until 30 pairs are known).
    ``job`` must have loaded what is stored for ``session_ids``."""
    noise = JudgeNoise(assumed=job.options.judge_noise)
    for session_id in sorted(session_ids):
        for target in job.pilot_targets():
            for pass_no in range(job.options.passes):
                stored = job.stored_repeats(session_id, target, pass_no)
                first, second = stored.get(0), stored.get(1)
                if first is None or second is None or not (first.ok and second.ok):
                    continue
                scale = job.scale(target)
                answers = {a.key: a.value for a in answers_of(second)}
                for answer in answers_of(first):
                    points = scale(answer.key[0])
                    other = answers.get(answer.key)
                    if points is not None and answer.value is not None and other is not None:
                        noise.add_pair(answer.value, other, len(points))
    return noise.bound()


def count_pilot(tally: AnnotationTally, pilot: AnnotationTally) -> None:
    """Add the pilot's work to the main pass's ``tally``: its calls and the passes it
    stored, which the main pass found stored and counted as stored before this run."""
    for target, counts in pilot.targets.items():
        into = tally.targets[target]
        into.stored += counts.stored
        into.failed += counts.failed
        into.already_stored -= counts.stored + counts.failed
        into.cut_replies += counts.cut_replies
        into.cut_dialogues += counts.cut_dialogues
    tally.prompt_tokens += pilot.prompt_tokens
    tally.completion_tokens += pilot.completion_tokens
    tally.model_calls += pilot.model_calls
