"""Which dialogues people should label next to narrow a judge's corrected rates most.

An LLM judge's corrected rate (:mod:`corix.measurement.judges.corrected_rate`) in a cell rests
on every judged dialogue's verdict and on the people's labels, each of which shows the
truth behind one "yes" or one "no" of the judge. How much a further label in a stratum
(a cell's "yes" or "no" dialogues) narrows the cell's rate is read off the model's Fisher
information (:mod:`corix.measurement.sizing.label_information`) at what the labels so far
estimate. Over a harm's several cells the information is the partially pooled model's, as
the rates are computed: a label in one cell also narrows the others, as far as the pooling
learns from the labels so far that the judge errs alike in them
(:func:`corix.measurement.judges.judge_spread`). A rare harm's misses are then learnt
partly from the common harms' "no" dialogues, where they are cheaper to find, yet each
cell keeps labels of its own as long as the labels leave room for its judge to differ.

**Rule.** Labels go, a step of 1% of the budget at a time, to the cell and stratum where
they cut the most of the sum over cells of each rate's standard deviation relative to
its own now. Within a cell this is Neyman's allocation in the large-sample limit (a rare
harm's few "yes" verdicts, whose truth is least certain, get more than their share);
across cells it favours those whose interval a label shrinks most in proportion, so a
rare harm's narrow interval counts as much as a common harm's wide one (a sum of
absolute widths would hand every label to the common harms). Within a stratum the
dialogues are drawn at random (a seeded hash), so the labelled ones represent their
stratum. With a gate (``--gate``, a maximum rate), a cell whose corrected interval holds
the threshold counts :data:`GATE_WEIGHT` times in that sum: the gate's verdict on it is
still open, and its labels may settle it.

**Validity.** The choice depends only on what is observed for every dialogue (its cell and
the judge's verdict), so the latent-class posterior, pooled or not, stays valid: its
likelihood is the stratified design's (verdict shares × each stratum's share of defects)
in other coordinates, and the judge's sensitivity and specificity shown beside it are
weighted by the strata's inclusion probabilities. It holds for the cells and the harm the
plan was made for: read the corrected rates with the same ``--by`` and harm
(``benchmarks/bench_label_allocation.py`` checks coverage).

**Expected shrink.** A cell's expected width after the plan is its current corrected
width × (standard deviation after ÷ now), both from the same information.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from corix.measurement.core import Measurement
from corix.measurement.judges import CellCounts, CorrectedRate, judge_spread
from corix.measurement.labels import GUARDRAIL_VIOLATION
from corix.measurement.sizing.label_information import Information

RULE = (
    "labels to the cells and judge-verdict strata where they cut most of the cells' summed "
    "relative standard deviations (Fisher information of the corrected rate's model, "
    "partially pooled over the cells as the rates are; Neyman's allocation within a "
    "lone cell); dialogues drawn at random within a stratum"
)
BY_COLUMNS = ("application", "scenario", "level")
GATE_WEIGHT = 2.0
"""How many times a cell whose corrected interval holds the gate's threshold counts: its
labels may decide whether the gate passes."""

__all__ = [
    "BY_COLUMNS",
    "GATE_WEIGHT",
    "RULE",
    "CellPlan",
    "LabelPlan",
    "PlannedDialogue",
    "Stratum",
    "allocate",
    "allocate_with_shrinks",
    "pair_counts",
    "plan_labels",
]


@dataclass(frozen=True, slots=True)
class Stratum:
    """The dialogues of one cell the judge rated one way: all of them (``size``), the
    reference's labels among them (``defects`` of ``labelled``), and those still unlabelled."""

    size: int
    labelled: int
    defects: int
    unlabelled: tuple[str, ...]


class PlannedDialogue(BaseModel):
    session_id: str
    group: dict[str, str]
    judge_verdict: bool


class CellPlan(BaseModel):
    """One cell's labels: how many it has, how many the plan adds per stratum, and its
    corrected interval's width now and as expected after the plan."""

    group: dict[str, str]
    judged: int
    judge_yes: int
    labelled_yes: int
    labelled_no: int
    add_yes: int
    add_no: int
    corrected_rate: float | None
    width_now: float | None
    width_expected: float | None
    undecided_gate: bool = False
    """The gate's threshold lies inside the cell's corrected interval: its labels may
    decide the gate, so the plan counts the cell :data:`GATE_WEIGHT` times."""

    @property
    def shrink(self) -> float | None:
        """The expected relative narrowing (0.3: 30% narrower)."""
        if self.width_now is None or self.width_expected is None or self.width_now <= 0:
            return None
        return 1 - self.width_expected / self.width_now


class LabelPlan(BaseModel):
    judge: str
    reference: str
    harm: str
    by: list[str]
    budget: int
    gate: float | None = None
    rule: str = RULE
    cells: list[CellPlan]
    dialogues: list[PlannedDialogue]


def allocate(
    strata: Sequence[tuple[Stratum, Stratum]],
    budget: int,
    weights: Sequence[float] | None = None,
    information: Information | None = None,
) -> list[tuple[int, int]]:
    """Labels to add per cell's (judge yes, judge no) strata under :data:`RULE`, each
    cell's relative standard deviation counted ``weights[cell]`` times (once each).
    ``information`` (default: :func:`cells_information` of the strata) ends holding the
    labels added, so the expected standard deviations can be read off it."""
    if information is None:
        information = cells_information([pair_counts(pair) for pair in strata])
    scale = information.sd()
    scale[scale <= 0] = 1.0
    if weights is not None:
        scale = scale / np.asarray(weights, dtype=float)
    added = [[0, 0] for _ in strata]
    # Labels go in steps of 1% of the budget: the rule's choice moves slowly with them.
    step, left = max(1, budget // 100), budget
    while left > 0:
        now = information.sd()
        # (the cut in the cells' summed relative standard deviations a label, cell, stratum, labels)
        options = []
        for at, pair in enumerate(strata):
            for h in (0, 1):
                take = min(step, left, len(pair[h].unlabelled) - added[at][h])
                if take > 0:
                    cut = float(((now - information.sd_after(at, h, take)) / scale).sum())
                    options.append((cut / take, at, h, take))
        if not options:
            break
        _, at, h, take = max(options, key=lambda option: option[0])
        information.add(at, h, take)
        added[at][h] += take
        left -= take
    return [(yes, no) for yes, no in added]


def allocate_with_shrinks(
    strata: Sequence[tuple[Stratum, Stratum]],
    budget: int,
    weights: Sequence[float] | None = None,
    seed: int = 0,
) -> tuple[list[tuple[int, int]], np.ndarray]:
    """:func:`allocate`'s labels, and each cell's expected standard deviation after them ÷
    now (NaN for a cell with none now), from the same information."""
    information = cells_information([pair_counts(pair) for pair in strata], seed)
    before = information.sd()
    added = allocate(strata, budget, weights, information)
    return added, information.sd() / np.where(before > 0, before, np.nan)


def cells_information(cells: Sequence[CellCounts], seed: int = 0) -> Information:
    """The information of a harm's cells as their corrected rates are computed: partially
    pooled, with the judge's spread over cells the pooling learns from these labels,
    where there are several; a lone cell's own."""
    spread = judge_spread(cells, seed) if len(cells) > 1 else None
    return Information(cells, spread)


def pair_counts(pair: tuple[Stratum, Stratum]) -> CellCounts:
    """A cell's data in the form the corrected rate's models take."""
    yes, no = pair
    return CellCounts(
        tp=yes.defects,
        fn=no.defects,
        fp=yes.labelled - yes.defects,
        tn=no.labelled - no.defects,
        yes=yes.size - yes.labelled,
        no=no.size - no.labelled,
    )


def plan_labels(
    measurement: Measurement,
    *,
    judge: str,
    reference: str,
    budget: int,
    harm: str = GUARDRAIL_VIOLATION,
    by: Sequence[str] = BY_COLUMNS,
    seed: int = 0,
    gate: float | None = None,
) -> LabelPlan:
    """The dialogues ``reference`` should label next (at most ``budget``) for ``judge``'s
    corrected rates of ``harm`` per ``by`` cell, with each cell's expected narrowing;
    cells whose corrected interval holds ``gate`` (a maximum rate) count more."""
    cell_of = {d.session_id: tuple(getattr(d, c) for c in by) for d in measurement.dialogues}
    verdicts = measurement.dialogue_verdicts(harm)
    corrected = {
        tuple(r.group[c] for c in by): r
        for r in measurement.judge_corrected(judge, reference, by=by)
        if r.group["harm"] == harm
    }
    keys = sorted({cell_of[s] for s, v in verdicts.items() if judge in v})
    strata = [_strata(verdicts, cell_of, key, judge, reference, seed) for key in keys]
    undecided = [_undecided(corrected.get(key), gate) for key in keys]
    weights = [GATE_WEIGHT if u else 1.0 for u in undecided]
    added, shrinks = allocate_with_shrinks(strata, budget, weights, seed)
    cells, dialogues = [], []
    for key, pair, (yes, no), u, shrink in zip(
        keys, strata, added, undecided, shrinks, strict=True
    ):
        group = dict(zip(by, key, strict=True))
        plan = _cell_plan(group, pair, (yes, no), corrected.get(key), float(shrink))
        cells.append(plan.model_copy(update={"undecided_gate": u}))
        for stratum, count, verdict in ((pair[0], yes, True), (pair[1], no, False)):
            dialogues += [
                PlannedDialogue(session_id=s, group=group, judge_verdict=verdict)
                for s in stratum.unlabelled[:count]
            ]
    return LabelPlan(
        judge=judge,
        reference=reference,
        harm=harm,
        by=list(by),
        budget=budget,
        gate=gate,
        cells=cells,
        dialogues=dialogues,
    )


def _undecided(corrected: CorrectedRate | None, gate: float | None) -> bool:
    """Whether ``gate`` lies in the corrected interval, where labels may still decide it."""
    if gate is None or corrected is None or corrected.ci_low is None:
        return False
    return corrected.ci_high is not None and corrected.ci_low <= gate <= corrected.ci_high


def _strata(
    verdicts: Mapping[str, Mapping[str, float]],
    cell_of: Mapping[str, tuple[str, ...]],
    key: tuple[str, ...],
    judge: str,
    reference: str,
    seed: int,
) -> tuple[Stratum, Stratum]:
    members = {s: v for s, v in verdicts.items() if cell_of[s] == key and judge in v}
    pair = []
    for flagged in (True, False):
        mine = {s: v for s, v in members.items() if (v[judge] >= 0.5) == flagged}
        labelled = [v[reference] >= 0.5 for v in mine.values() if reference in v]
        open_ = sorted(
            (s for s, v in mine.items() if reference not in v), key=lambda s: _rank(seed, s)
        )
        pair.append(Stratum(len(mine), len(labelled), sum(labelled), tuple(open_)))
    return pair[0], pair[1]


def _rank(seed: int, session_id: str) -> str:
    """A reproducible random order of session ids."""
    return hashlib.sha256(f"{seed}/{session_id}".encode()).hexdigest()


def _cell_plan(
    group: dict[str, str],
    pair: tuple[Stratum, Stratum],
    added: tuple[int, int],
    corrected: CorrectedRate | None,
    shrink: float,
) -> CellPlan:
    """``shrink``: the cell's rate's standard deviation after the plan ÷ now (NaN: unknown)."""
    width = None
    if corrected is not None and corrected.ci_low is not None and corrected.ci_high is not None:
        width = corrected.ci_high - corrected.ci_low
    return CellPlan(
        group=group,
        judged=pair[0].size + pair[1].size,
        judge_yes=pair[0].size,
        labelled_yes=pair[0].labelled,
        labelled_no=pair[1].labelled,
        add_yes=added[0],
        add_no=added[1],
        corrected_rate=None if corrected is None else corrected.corrected_rate,
        width_now=width,
        width_expected=None if width is None or math.isnan(shrink) else width * shrink,
    )
