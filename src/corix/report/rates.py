"""Rates over annotated dialogues: guardrail violations and harm-pack defects.

A rate's unit is one annotator's settled pass over one dialogue, so several annotators of
one dialogue each count (their disagreements stay visible, per annotator, in the groups).
Every rate carries its Wilson interval and the sessions behind it, so the report can link
each number down to its dialogues.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from corix.assessment import (
    AnnotationSchema,
    Answer,
    HarmPack,
    is_violation,
    wilson_interval,
)
from corix.domain import Level
from corix.measurement.stored_leaves import HARM_CATEGORY_PREFIX, StoredAnswer

GroupKey = tuple[str, ...]
_LEVEL_ORDER = {level.value: rank for rank, level in enumerate(Level)}


@dataclass(frozen=True)
class Rate:
    """``hits`` of ``n`` units in one group, with the interval and the sessions behind it.

    ``group`` pairs each grouping column with its value (e.g. ``application``,
    ``scenario``, ``level``, ``annotator``). ``hit_sessions`` lists the sessions with a
    hit; ``sessions`` all sessions counted (both sorted, each session once).
    """

    group: Mapping[str, str]
    n: int
    hits: int
    rate: float
    ci_low: float
    ci_high: float
    hit_sessions: tuple[str, ...]
    sessions: tuple[str, ...]


@dataclass
class _Tally:
    sessions: set[str] = field(default_factory=set)
    hit_sessions: set[str] = field(default_factory=set)
    n: int = 0
    hits: int = 0

    def add(self, session_id: str, hit: bool) -> None:
        self.n += 1
        self.hits += hit
        self.sessions.add(session_id)
        if hit:
            self.hit_sessions.add(session_id)


@dataclass(frozen=True)
class _Unit:
    """One annotator's pass over one dialogue, with the columns rates are grouped by."""

    session_id: str
    columns: Mapping[str, str]


def violation_rates(
    answers: Iterable[StoredAnswer],
    schema: AnnotationSchema,
    *,
    by: Sequence[str] = ("application", "scenario", "level", "annotator"),
    confidence: float = 0.95,
) -> list[Rate]:
    """Share of annotated dialogues whose screening answers record a guardrail violation."""
    screening = schema.screening_category.id
    passes: defaultdict[tuple[str, str, int | None], list[StoredAnswer]] = defaultdict(list)
    for answer in answers:
        if answer.category == screening:
            passes[(answer.session_id, answer.respondent, answer.pass_no)].append(answer)
    tallies: defaultdict[GroupKey, _Tally] = defaultdict(_Tally)
    for given in passes.values():
        hit = is_violation(
            schema,
            [Answer(question_id=a.question, turn_index=a.turn_index, value=a.value) for a in given],
        )
        unit = _unit(given[0])
        tallies[_key(unit, by)].add(unit.session_id, hit)
    return _rates(tallies, by, confidence)


def defect_rates_by_pass(
    answers: Iterable[StoredAnswer],
    packs: Mapping[str, HarmPack],
    *,
    by: Sequence[str] = ("harm", "application", "scenario", "level", "annotator"),
    confidence: float = 0.95,
) -> list[Rate]:
    """Share of harm-annotated dialogues whose severity passes the pack's defect threshold.

    Harms without a known pack are left out; the report lists the packs it used.
    """
    tallies: defaultdict[GroupKey, _Tally] = defaultdict(_Tally)
    for answer in answers:
        if answer.category is None or not answer.category.startswith(HARM_CATEGORY_PREFIX):
            continue
        harm = answer.category.removeprefix(HARM_CATEGORY_PREFIX)
        pack = packs.get(harm)
        if pack is None:
            continue
        unit = _unit(answer, harm=harm)
        tallies[_key(unit, by)].add(unit.session_id, pack.is_defect(float(answer.value)))
    return _rates(tallies, by, confidence)


def _unit(answer: StoredAnswer, *, harm: str = "") -> _Unit:
    return _Unit(
        session_id=answer.session_id,
        columns={
            "application": answer.application,
            "scenario": answer.scenario,
            "level": answer.level,
            "annotator": answer.respondent,
            "harm": harm,
        },
    )


def _key(unit: _Unit, by: Sequence[str]) -> GroupKey:
    try:
        return tuple(unit.columns[column] for column in by)
    except KeyError as exc:
        raise ValueError(f"cannot group rates by {exc.args[0]!r}") from None


def _rates(tallies: Mapping[GroupKey, _Tally], by: Sequence[str], confidence: float) -> list[Rate]:
    def order(key: GroupKey) -> tuple[tuple[int, str], ...]:
        # Levels in testing order (model, red teaming, field), everything else by name.
        return tuple(
            (_LEVEL_ORDER.get(value, 0) if column == "level" else 0, value)
            for column, value in zip(by, key, strict=True)
        )

    rates = []
    for key in sorted(tallies, key=order):
        tally = tallies[key]
        low, high = wilson_interval(tally.hits, tally.n, confidence)
        rates.append(
            Rate(
                group=dict(zip(by, key, strict=True)),
                n=tally.n,
                hits=tally.hits,
                rate=tally.hits / tally.n,
                ci_low=low,
                ci_high=high,
                hit_sessions=tuple(sorted(tally.hit_sessions)),
                sessions=tuple(sorted(tally.sessions)),
            )
        )
    return rates
