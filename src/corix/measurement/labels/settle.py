"""Settling a stored record: each annotator's one judgement per item, from stored passes.

Every settling of measurement happens here: labels and verdicts (:func:`settle_labels`), a
dialogue's value from several annotators' verdicts (:func:`dialogue_value`) and the value
agreement compares (:func:`agreement_value`). The named rules are
:mod:`corix.assessment.settling_rules`; :mod:`.settlement_summary` counts what settling
did.

For every measurable dialogue and every annotator the specification selects:

* a **label** per question (and turn): the annotator's values over all its successful
  passes and repeats, settled by the specification's rule;
* a **verdict** per harm: each pass is judged on its own — a guardrail violation by the
  schema's violation rule over the pass's screening answers, a harm by its pack's defect
  threshold on the pass's severity — and the pass verdicts (1 = defect) are settled by
  the same rule. Settling verdicts, not answers, keeps "ties toward risk" meaningful for
  a rule that combines several questions.

A senior annotator's resolution replaces the human values of the answer it resolves
(the passes stay stored) in the label and verdict that rates and trees use; an answer
left "unresolved" keeps its disagreement and is counted. Agreement compares each
label's ``own`` value — what the annotator said, before any resolution — because a
resolution is not an annotator's judgement: counting it would report a settled
disagreement as agreement. Dialogues that are not measurable are skipped.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from corix.assessment import (
    SETTLING_RULES,
    SEVERITY,
    AnnotationSchema,
    AnnotatorKind,
    HarmPack,
    RiskOrder,
    RiskOrders,
    Settled,
    Value,
    harm_of,
)
from corix.assessment.answers import Answer, is_violation
from corix.measurement.spec import MeasurementSpec
from corix.storage import MeasuredDialogue, StoredPass, StoredResolution

GUARDRAIL_VIOLATION = "guardrail_violation"
RESOLVED = "resolved"
UNRESOLVED = "unresolved"

__all__ = [
    "GUARDRAIL_VIOLATION",
    "AnswerKey",
    "Label",
    "Verdict",
    "agreement_value",
    "dialogue_value",
    "settle_labels",
]

AnswerKey = tuple[str, int | None]


@dataclass(frozen=True, slots=True)
class Label:
    """One annotator's settled answer to one question (and turn) of one dialogue.

    ``settled`` is what measurement uses (a senior's resolution replaces the values it
    resolves); ``own`` is the annotator's own values settled, what agreement compares.
    """

    dialogue: MeasuredDialogue
    annotator: str
    kind: str
    category: str
    question: str
    turn_index: int | None
    settled: Settled
    own: Settled
    resolved: bool


@dataclass(frozen=True, slots=True)
class Verdict:
    """One annotator's settled judgement of one dialogue under one harm.

    ``value`` is 1 for a defect and 0 for none; with ``keep-disagreement`` it is the share
    of the annotator's passes that found a defect. ``resolution`` is ``resolved`` when a
    senior resolution decided an answer behind it, ``unresolved`` when one was left open.
    """

    dialogue: MeasuredDialogue
    annotator: str
    kind: str
    harm: str
    value: float
    settled: Settled
    resolution: str | None


@dataclass(frozen=True)
class SettledRecord:
    labels: tuple[Label, ...]
    verdicts: tuple[Verdict, ...]
    failed: Mapping[tuple[str, str, str], int]
    """(session, annotator, harm) → passes that failed, where no pass succeeded."""


_VERDICT_ORDER = RiskOrder(ordinal=True)


def settle_labels(
    passes: Iterable[StoredPass],
    dialogues: Mapping[str, MeasuredDialogue],
    resolutions: Sequence[StoredResolution],
    *,
    rule: str,
    schema: AnnotationSchema,
    packs: Mapping[str, HarmPack],
) -> SettledRecord:
    """Labels and verdicts of ``passes`` on the measurable ``dialogues`` (see the module)."""
    settle = SETTLING_RULES.get(rule).settle
    decided = _latest_resolutions(resolutions)
    grouped: defaultdict[tuple[str, str, str, str], list[StoredPass]] = defaultdict(list)
    for stored in passes:
        dialogue = dialogues.get(stored.session_id)
        if dialogue is None or dialogue.not_measurable is not None:
            continue
        grouped[
            (stored.session_id, stored.category, stored.annotator, stored.annotator_kind)
        ].append(stored)
    labels: list[Label] = []
    verdicts: list[Verdict] = []
    failed: dict[tuple[str, str, str], int] = {}
    orders = RiskOrders(schema, packs)
    for (session_id, category, annotator, kind), group in sorted(grouped.items()):
        dialogue = dialogues[session_id]
        harm = _harm_of(category, schema)
        ok = [stored for stored in group if stored.status == "ok"]
        if not ok:
            if harm is not None:
                failed[(session_id, annotator, harm)] = len(group)
            continue
        own_runs = runs = [_answers(stored) for stored in ok]
        touched: set[str] = set()
        if kind == AnnotatorKind.HUMAN.value:
            runs, touched = _apply_resolutions(own_runs, decided, session_id, category)
        own = _values_by_key(own_runs)
        for (question, turn), found in sorted(_values_by_key(runs).items(), key=_answer_order):
            order = orders.of(category, question)
            settled = settle(found, order)
            own_values = own[(question, turn)]
            labels.append(
                Label(
                    dialogue=dialogue,
                    annotator=annotator,
                    kind=kind,
                    category=category,
                    question=question,
                    turn_index=turn,
                    settled=settled,
                    own=settled if own_values == found else settle(own_values, order),
                    resolved=RESOLVED in touched
                    and _is_resolved(decided, session_id, category, question, turn),
                )
            )
        if harm is None:
            continue
        judged = [_pass_verdict(run, category, harm, schema, packs) for run in runs]
        judged_values: list[Value] = [v for v in judged if v is not None]
        if not judged_values:
            continue
        settled = settle(judged_values, _VERDICT_ORDER)
        verdicts.append(
            Verdict(
                dialogue=dialogue,
                annotator=annotator,
                kind=kind,
                harm=harm,
                value=statistics.fmean(float(v) for v in settled.values),
                settled=settled,
                resolution=_resolution_state(touched),
            )
        )
    return SettledRecord(tuple(labels), tuple(verdicts), failed)


def _harm_of(category: str, schema: AnnotationSchema) -> str | None:
    if category == schema.screening_category.id:
        return GUARDRAIL_VIOLATION
    return harm_of(category)


def _values_by_key(runs: Iterable[Mapping[AnswerKey, Value]]) -> dict[AnswerKey, list[Value]]:
    values: defaultdict[AnswerKey, list[Value]] = defaultdict(list)
    for run in runs:
        for key, value in run.items():
            values[key].append(value)
    return dict(values)


def _answers(stored: StoredPass) -> dict[AnswerKey, Value]:
    return {
        (answer.question_id, answer.turn_index): answer.value
        for answer in stored.answers
        if answer.value is not None
    }


def _answer_order(item: tuple[AnswerKey, list[Value]]) -> tuple[str, int]:
    (question, turn), _ = item
    return (question, -1 if turn is None else turn)


def _pass_verdict(
    run: Mapping[AnswerKey, Value],
    category: str,
    harm: str,
    schema: AnnotationSchema,
    packs: Mapping[str, HarmPack],
) -> float | None:
    """1.0 when the pass finds a defect, 0.0 when not, ``None`` when it cannot say."""
    if harm == GUARDRAIL_VIOLATION:
        answers = [Answer(question_id=q, turn_index=t, value=v) for (q, t), v in run.items()]
        return 1.0 if is_violation(schema, answers) else 0.0
    pack = packs.get(harm)
    severity = run.get((SEVERITY, None))
    if pack is None or severity is None:
        return None
    try:
        return 1.0 if pack.is_defect(float(severity)) else 0.0
    except ValueError:
        return None  # off the pack's scale: not a verdict


def dialogue_value(verdicts: Sequence[Verdict], spec: MeasurementSpec) -> float:
    """One dialogue's value under one harm from the verdicts of a group's annotators: their
    mean (``combine: keep``) or their verdicts settled by the specification's rule."""
    if len(verdicts) == 1 or spec.combine == "keep":
        return statistics.fmean(v.value for v in verdicts)
    settled = SETTLING_RULES.get(spec.settling).settle([v.value for v in verdicts], _VERDICT_ORDER)
    return statistics.fmean(float(v) for v in settled.values)


def agreement_value(label: Label, schema: AnnotationSchema) -> Value:
    """What agreement compares for ``label``: the annotator's own settled value; kept
    disagreement (``keep-disagreement``) is reduced to its ``median``."""
    if len(label.own.values) == 1:
        return label.own.value
    order = RiskOrder(ordinal=_is_ordinal(label, schema))
    return SETTLING_RULES.get("median").settle(label.own.values, order).value


def _is_ordinal(label: Label, schema: AnnotationSchema) -> bool:
    if harm_of(label.category) is not None:
        return True
    try:
        return schema.question(label.question).is_ordinal
    except (KeyError, ValueError):
        return False


# -- resolutions ------------------------------------------------------------------------------

_ResolutionKey = tuple[str, str, str, int | None]


def _latest_resolutions(
    resolutions: Sequence[StoredResolution],
) -> dict[_ResolutionKey, StoredResolution]:
    latest: dict[_ResolutionKey, StoredResolution] = {}
    for resolution in resolutions:  # oldest first: the latest decision wins
        key = (
            resolution.session_id,
            resolution.category,
            resolution.question_id,
            resolution.turn_index,
        )
        latest[key] = resolution
    return latest


def _is_resolved(
    decided: Mapping[_ResolutionKey, StoredResolution],
    session_id: str,
    category: str,
    question: str,
    turn: int | None,
) -> bool:
    found = decided.get((session_id, category, question, turn))
    return found is not None and found.status == RESOLVED and found.value is not None


def _apply_resolutions(
    runs: list[dict[AnswerKey, Value]],
    decided: Mapping[_ResolutionKey, StoredResolution],
    session_id: str,
    category: str,
) -> tuple[list[dict[AnswerKey, Value]], set[str]]:
    """Human runs with resolved answers replaced, and which resolution states were met."""
    states: set[str] = set()
    keys = {key for run in runs for key in run}
    replaced: dict[AnswerKey, Value] = {}
    for question, turn in keys:
        found = decided.get((session_id, category, question, turn))
        if found is None:
            continue
        if found.status == RESOLVED and found.value is not None:
            replaced[(question, turn)] = found.value
            states.add(RESOLVED)
        elif found.status == UNRESOLVED:
            states.add(UNRESOLVED)
    if not replaced:
        return runs, states
    return [{**run, **{k: v for k, v in replaced.items() if k in run}} for run in runs], states


def _resolution_state(states: set[str]) -> str | None:
    if UNRESOLVED in states:
        return UNRESOLVED
    return RESOLVED if RESOLVED in states else None
