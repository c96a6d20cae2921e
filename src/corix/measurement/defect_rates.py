"""Defect rates over dialogues, with intervals that carry the real uncertainty.

The unit is the dialogue: a rate's ``n`` counts the measurable dialogues of its group
that have a verdict. A dialogue's value is its annotators' verdicts combined as the
specification says (``keep``: their mean; ``settle``: one settled verdict), so the rate
is the mean over dialogues and ``defects`` may be fractional when annotators disagree.

Intervals:

* one 0/1 verdict per dialogue, each from its own tester — the **Wilson** score interval
  with continuity correction on ``defects`` of ``n`` (plain Wilson under-covers with
  few dialogues and rare defects);
* otherwise — a **cluster bootstrap** (testers when some produced several dialogues,
  each drawn tester bringing all its dialogues, else dialogues, each bringing all its
  labels; drawn by stable keys so reruns give identical intervals) estimates the
  variance of the rate, times k/(k−1) for k testers (a bootstrap over k clusters
  understates it by (k−1)/k: the CR1 factor); the interval is corrected Wilson's at the
  *effective* sample size ``rate·(1−rate)/variance``, never more than the dialogues
  for 0/1 values, nor the labels for annotators' means. With no defect seen it is
  Wilson's at n dialogues: never a point. Plain percentile intervals collapse to a point
  when few or no defects are seen; Wilson's form does not. The interval's name says what
  was drawn. Annotators are never drawn again within a dialogue: its value already
  carries their disagreement, and a second stage would count it twice. Under
  ``combine: settle`` the interval covers the expected settled rate and is never
  narrower than Wilson's on the settled dialogues. ``benchmarks/coverage_study.py``
  measures the coverage.

Dialogues that are not measurable are counted per group, with their reasons, and left
out of ``n``. A cell whose dialogues were none of them measurable is still a rate, with
``n`` = 0 and no value, so no table or gate drops it.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from corix.measurement.labels import (
    RESOLVED,
    UNRESOLVED,
    Verdict,
    dialogue_value,
    not_measurable_reason,
)
from corix.measurement.spec import MeasurementSpec
from corix.measurement.stats import (
    cluster_resamples,
    few_testers_warning,
    resampled_unit,
    wilson_cc_bounds,
)
from corix.storage import MeasuredDialogue

RATE_COLUMNS = ("source", "annotator", "harm", "application", "scenario", "level")
WILSON = "wilson, continuity-corrected"
NOT_MEASURED = "not measured"

__all__ = [
    "DIALOGUE_BOOTSTRAP",
    "NOT_MEASURED",
    "RATE_COLUMNS",
    "WILSON",
    "DefectRate",
    "DialogueLabels",
    "bootstrap_method",
    "defect_rates",
    "rate_interval",
]


class DefectRate(BaseModel):
    """A defect rate of one group, with what it is made of.

    ``group`` names the grouping columns' values; ``annotators`` who labelled its
    dialogues; ``dialogues`` the sessions counted in ``n`` and ``defect_dialogues`` those
    with a defect value above 0; ``not_measurable`` the group's dialogues left out and
    ``not_measurable_reasons`` why; ``failed`` the dialogues whose every pass failed;
    ``testers`` how many produced its dialogues (an unnamed one counts as its own) and
    ``warning`` says when they are too few for the interval to be trusted; ``ties`` the
    verdicts whose values tied; ``resolved`` / ``unresolved`` the verdicts
    with a senior resolution applied / left open.
    """

    group: dict[str, str]
    annotators: list[str]
    n: int
    defects: float
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    interval: str
    confidence: float
    testers: int
    warning: str | None
    n_labels: int
    ties: int
    resolved: int
    unresolved: int
    failed: int
    not_measurable: int
    not_measurable_reasons: dict[str, int]
    dialogues: list[str]
    defect_dialogues: list[str]

    @property
    def who(self) -> str:
        """Whose labels the rate holds: its annotator source or annotator (``all`` if pooled)."""
        return self.group.get("source") or self.group.get("annotator") or "all annotators"


@dataclass(frozen=True)
class DialogueLabels:
    """One group's dialogues (in key order) and its labels (dialogue key, annotator, value).

    ``testers`` names who produced each dialogue ("" when unknown: a tester of its own),
    so dialogues of one tester are resampled together. A dialogue's value is its
    annotators' mean (``keep``) or their settled verdict (``settle``).
    """

    keys: list[str]
    values: list[float]
    labels: list[tuple[str, str, float]]
    testers: list[str] | None = None


def bootstrap_method(unit: str, testers: int | None = None) -> str:
    """How an interval from a bootstrap over ``unit`` is named in outputs; ``testers``:
    the number of testers it was expanded for, when testers were drawn."""
    expanded = "" if testers is None else f" (k = {testers}, variance × k/(k−1))"
    return f"bootstrap over {unit}{expanded}, corrected Wilson at the effective n"


DIALOGUE_BOOTSTRAP = bootstrap_method(resampled_unit(testers=False))


def tester_count(testers: Sequence[str] | None, n: int) -> int:
    """How many testers produced ``n`` dialogues (an unnamed one is a tester of its own)."""
    if testers is None:
        return n
    named = [tester for tester in testers if tester]
    return len(set(named)) + n - len(named)


def rate_interval(
    data: DialogueLabels, *, confidence: float, resamples: int, seed: int
) -> tuple[float, float, str]:
    """The interval of the mean of ``data.values`` (see the module docstring).

    The resampled unit is the dialogue, or its tester: a dialogue's value (its
    annotators' mean under ``keep``) carries their disagreement once, so annotators are
    never drawn again, and labels of one dialogue never count as independent draws."""
    n = len(data.keys)
    values = np.asarray(data.values, dtype=float)
    rate = float(values.mean())
    clustered = data.testers is not None and _shared(data.testers)
    binary = bool(np.isin(values, (0.0, 1.0)).all())
    if (binary and not clustered) or resamples == 0:
        low, high = wilson_cc_bounds(rate, n, confidence)
        return low, high, WILSON
    replicates: list[np.ndarray] = []
    testers = data.testers if clustered else None
    for chunk in cluster_resamples(data.keys, resamples, seed, testers=testers):
        replicates.append(values @ chunk.dialogues / chunk.dialogues.sum(axis=0))
    variance = float(np.var(np.concatenate(replicates), ddof=1))
    k = tester_count(testers, n) if clustered else None
    if k is not None and k > 1:
        # A bootstrap over k clusters understates the variance by (k−1)/k: the CR1 factor.
        variance *= k / (k - 1)
    effective = n if variance <= 0 or rate in (0.0, 1.0) else rate * (1 - rate) / variance
    # A mean of several annotators' 0/1 labels varies less than one 0/1 value, so its
    # effective n may pass the dialogues, through their measured spread alone (the labels
    # bound it); a 0/1 value per dialogue never counts for more than one dialogue.
    bound = n if binary else max(n, len(data.labels))
    low, high = wilson_cc_bounds(rate, min(effective, float(bound)), confidence)
    return low, high, bootstrap_method(resampled_unit(testers=clustered), k)


def _shared(testers: Sequence[str]) -> bool:
    """Whether some tester produced more than one of the dialogues."""
    named = [tester for tester in testers if tester]
    return len(set(named)) < len(named)


def defect_rates(
    verdicts: Sequence[Verdict],
    dialogues: Sequence[MeasuredDialogue],
    failed: Mapping[tuple[str, str, str], int],
    spec: MeasurementSpec,
    *,
    by: Sequence[str],
) -> list[DefectRate]:
    """Rates per group of ``by`` columns (a subset of :data:`RATE_COLUMNS`)."""
    unknown = [column for column in by if column not in RATE_COLUMNS]
    if unknown:
        raise ValueError(f"cannot group rates by {unknown[0]!r}; known: {', '.join(RATE_COLUMNS)}")
    columns = _grouping(by, spec)
    grouped: defaultdict[tuple[str, ...], list[Verdict]] = defaultdict(list)
    for verdict in verdicts:
        grouped[_key(verdict, columns, spec)].append(verdict)
    rates = []
    for key in sorted(grouped, key=_order(columns)):
        members = grouped[key]
        group = dict(zip(columns, key, strict=True))
        rates.append(_rate(group, members, dialogues, failed, spec))
    unmeasured = _unmeasured_groups(set(grouped), columns, dialogues)
    rates.extend(
        _empty_rate(dict(zip(columns, key, strict=True)), dialogues, spec) for key in unmeasured
    )
    return sorted(rates, key=lambda rate: _order(columns)(tuple(rate.group.values())))


_CELL_COLUMNS = ("application", "scenario", "level")


def _unmeasured_groups(
    found: set[tuple[str, ...]], columns: Sequence[str], dialogues: Sequence[MeasuredDialogue]
) -> list[tuple[str, ...]]:
    """Groups of a cell (application, scenario, level) none of whose dialogues was
    measurable, per harm and annotator group seen elsewhere. They are rates too (``n`` =
    0), so a table or a gate never drops them silently."""
    cell_at = [i for i, column in enumerate(columns) if column in _CELL_COLUMNS]
    if not cell_at:
        return []
    rest_at = [i for i, column in enumerate(columns) if column not in _CELL_COLUMNS]
    harm_at = [i for i in rest_at if columns[i] == "harm"]
    cell_columns = [columns[i] for i in cell_at]

    def cell_of(dialogue: MeasuredDialogue) -> tuple[str, ...]:
        return tuple(getattr(dialogue, column) for column in cell_columns)

    measurable = {cell_of(d) for d in dialogues if not d.not_measurable}
    cells = {cell_of(d) for d in dialogues} - measurable
    covered = {(tuple(k[i] for i in harm_at), tuple(k[i] for i in cell_at)) for k in found}
    missing = []
    for rest in sorted({tuple(k[i] for i in rest_at) for k in found}):
        harm = tuple(rest[rest_at.index(i)] for i in harm_at)
        for cell in sorted(cells):
            if (harm, cell) in covered:
                continue
            key = [""] * len(columns)
            for i, value in zip(rest_at, rest, strict=True):
                key[i] = value
            for i, value in zip(cell_at, cell, strict=True):
                key[i] = value
            missing.append(tuple(key))
    return missing


def _empty_rate(
    group: dict[str, str], dialogues: Sequence[MeasuredDialogue], spec: MeasurementSpec
) -> DefectRate:
    cell = {c: v for c, v in group.items() if c in _CELL_COLUMNS}
    left_out = [d for d in dialogues if d.not_measurable and _in_cell(d, cell)]
    return DefectRate(
        group=group,
        annotators=[],
        n=0,
        defects=0.0,
        rate=None,
        ci_low=None,
        ci_high=None,
        interval=NOT_MEASURED,
        confidence=spec.confidence,
        testers=0,
        warning=None,
        n_labels=0,
        ties=0,
        resolved=0,
        unresolved=0,
        failed=0,
        not_measurable=len(left_out),
        not_measurable_reasons=dict(
            sorted(Counter(not_measurable_reason(d) for d in left_out).items())
        ),
        dialogues=[],
        defect_dialogues=[],
    )


def _grouping(by: Sequence[str], spec: MeasurementSpec) -> tuple[str, ...]:
    """``by`` with the annotator column the specification groups by, which is never dropped."""
    who = {"source": ("source",), "annotator": ("annotator",), "all": ()}[spec.group_annotators_by]
    return (*who, *[column for column in by if column not in ("source", "annotator")])


def _key(verdict: Verdict, columns: Sequence[str], spec: MeasurementSpec) -> tuple[str, ...]:
    values = {
        "source": verdict.kind,
        "annotator": verdict.annotator,
        "harm": verdict.harm,
        "application": verdict.dialogue.application,
        "scenario": verdict.dialogue.scenario,
        "level": verdict.dialogue.level,
    }
    return tuple(values[column] for column in columns)


_LEVEL_ORDER = {"model_testing": 0, "red_teaming": 1, "field_testing": 2}


def _order(columns: Sequence[str]) -> Callable[[tuple[str, ...]], tuple[tuple[int, str], ...]]:
    def order(key: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
        return tuple(
            (_LEVEL_ORDER.get(value, 9) if column == "level" else 0, value)
            for column, value in zip(columns, key, strict=True)
        )

    return order


def _rate(
    group: dict[str, str],
    members: list[Verdict],
    dialogues: Sequence[MeasuredDialogue],
    failed: Mapping[tuple[str, str, str], int],
    spec: MeasurementSpec,
) -> DefectRate:
    by_dialogue: defaultdict[str, list[Verdict]] = defaultdict(list)
    for verdict in members:
        by_dialogue[verdict.dialogue.key].append(verdict)
    keys = sorted(by_dialogue)
    values = [dialogue_value(by_dialogue[key], spec) for key in keys]
    labels = [
        (key, verdict.annotator, verdict.value) for key in keys for verdict in by_dialogue[key]
    ]
    testers = [by_dialogue[key][0].dialogue.tester for key in keys]
    data = DialogueLabels(keys, values, labels, testers=testers)
    low, high, method = rate_interval(
        data, confidence=spec.confidence, resamples=spec.bootstrap, seed=spec.seed
    )
    cell = {c: v for c, v in group.items() if c in _CELL_COLUMNS}
    left_out = [d for d in dialogues if d.not_measurable and _in_cell(d, cell)]
    annotators = sorted({v.annotator for v in members})
    sessions = {key: by_dialogue[key][0].dialogue.session_id for key in keys}
    return DefectRate(
        group=group,
        annotators=annotators,
        n=len(keys),
        defects=float(sum(values)),
        rate=statistics.fmean(values),
        ci_low=low,
        ci_high=high,
        interval=method,
        confidence=spec.confidence,
        testers=tester_count(testers, len(keys)),
        warning=few_testers_warning(tester_count(testers, len(keys))),
        n_labels=len(labels),
        ties=sum(v.settled.tie for v in members),
        resolved=sum(v.resolution == RESOLVED for v in members),
        unresolved=sum(v.resolution == UNRESOLVED for v in members),
        failed=_failed_in(failed, group, annotators, dialogues, cell),
        not_measurable=len(left_out),
        not_measurable_reasons=dict(
            sorted(Counter(not_measurable_reason(d) for d in left_out).items())
        ),
        dialogues=sorted(sessions.values()),
        defect_dialogues=sorted(
            sessions[key] for key, value in zip(keys, values, strict=True) if value > 0
        ),
    )


def _in_cell(dialogue: MeasuredDialogue, cell: Mapping[str, str]) -> bool:
    return all(getattr(dialogue, column) == value for column, value in cell.items())


def _failed_in(
    failed: Mapping[tuple[str, str, str], int],
    group: Mapping[str, str],
    annotators: Sequence[str],
    dialogues: Sequence[MeasuredDialogue],
    cell: Mapping[str, str],
) -> int:
    sessions = {d.session_id for d in dialogues if _in_cell(d, cell)}
    harm = group.get("harm")
    return sum(
        1
        for session_id, annotator, failed_harm in failed
        if session_id in sessions
        and annotator in annotators
        and (harm is None or failed_harm == harm)
    )
