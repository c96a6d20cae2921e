"""How far simulated testers are from human testers, per cell (application × scenario × level).

Who counts as what: a session whose source is ``human`` (a person testing through the web
app) is a *human tester's*; ``simulated`` (an LLM or template-driven persona) is a
*simulated tester's*. ``scripted`` model-testing scripts are neither (they do not play a
user), and ``imported`` dialogues are left out because corix cannot tell who made them.

In every cell with measurable dialogues of both kinds, per annotator group and harm:
each kind's defect rate as the core computes it (:func:`defect_rates`: the clustered
bootstrap with testers — people, persona instances — as clusters, corrected Wilson at the
effective n), and their difference (simulated − human) with Newcombe's hybrid score
interval (1998, method 10) built from those two intervals, so the difference carries the
same clustering. Beside them, dialogue features with a two-sample test and an effect size:
turns, mean user message length, the share of the application's replies that refuse and
the turn of the first prohibited release (:mod:`dialogue_features`; Mann–Whitney U, Cliff's
delta), the share of dialogues with a violation as the annotators settled it (Fisher's
exact test, risk difference) and each questionnaire item both kinds answered
(Mann–Whitney U, Cliff's delta). The feature tests treat dialogues as
independent: when testers hold several dialogues their p-values are too small. Persona
templates are ranked by their distance to the human testers: the mean |Cliff's delta| of
their dialogues against the people's over turns and user message length.

The rule: simulation can stand in for people in a cell when every rate difference's
interval lies within ±δ (a user setting, :data:`DEFAULT_DELTA` by default). Features do not
enter the rule; they say where the two populations differ.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel

from corix.measurement.core import DEFAULT_RATE_GROUPING, Measurement
from corix.measurement.defect_rates import DefectRate, defect_rates
from corix.measurement.labels import GUARDRAIL_VIOLATION
from corix.measurement.simulation.calibration import (
    CellCalibration,
    SampledDialogue,
    calibrate_cell,
)
from corix.measurement.simulation.features import (
    REFUSAL_SHARE,
    TURNS,
    USER_LENGTH,
    VIOLATION_TURN,
    DialogueShape,
    dialogue_shapes,
)
from corix.storage import Database, MeasuredDialogue, questionnaire_answers

HUMAN = "human"
SIMULATED = "simulated"
DEFAULT_DELTA = 0.10
CALIBRATION_REPLICATES = 400
"""Fewer than the rates' bootstrap: each replicate solves for the weights again."""
CALIBRATION_FEATURES = (TURNS, USER_LENGTH, REFUSAL_SHARE)
DIFFERENCE_INTERVAL = "Newcombe hybrid score (method 10) from the two rates' intervals"
RULE = "simulation stands in when every rate difference's interval lies within ±δ"
_MANN_WHITNEY = "Mann–Whitney U, two-sided"
_CLIFF = "Cliff's delta (simulated vs human)"

__all__ = [
    "DEFAULT_DELTA",
    "HUMAN",
    "SIMULATED",
    "CellGap",
    "FeatureGap",
    "RateGap",
    "SimulationGap",
    "TemplateDistance",
    "newcombe_difference",
    "simulation_gap_per_cell",
]


class RateGap(BaseModel):
    """One annotator group's rate under one harm in one cell, from each kind of tester."""

    group: dict[str, str]
    human: DefectRate
    simulated: DefectRate
    difference: float | None
    """Simulated rate − human rate; ``None`` when either has no measurable dialogue."""
    ci_low: float | None
    ci_high: float | None
    within_delta: bool | None


class FeatureGap(BaseModel):
    """One dialogue feature of a cell: each kind's summary, a two-sample test, an effect."""

    feature: str
    summary: str
    """What ``human`` and ``simulated`` hold: ``median`` or ``share``."""
    human: float
    simulated: float
    human_n: int
    simulated_n: int
    test: str
    p_value: float
    effect_size: str
    effect: float


class TemplateDistance(BaseModel):
    """How far one persona template's dialogues in a cell are from the human testers':
    the mean of |Cliff's delta| over turns and user message length (0: alike, 1: every
    dialogue of one kind above every dialogue of the other)."""

    template: str
    dialogues: int
    distance: float
    effects: dict[str, float]
    """Feature → Cliff's delta (this template's dialogues vs human)."""


class CellGap(BaseModel):
    """Human against simulated testers in one application × scenario × level."""

    cell: dict[str, str]
    human_dialogues: int
    simulated_dialogues: int
    human_testers: int
    simulated_testers: int
    rates: list[RateGap]
    features: list[FeatureGap]
    templates: list[TemplateDistance]
    """Persona templates from the closest to the human testers to the furthest."""
    stands_in: bool | None
    """Whether simulation may stand in here (see the rule); ``None`` when no rate compares."""
    calibration: CellCalibration | None
    """The simulated rates with the persona templates reweighted to the human testers'
    features; ``None`` without a feature both kinds have."""


class SimulationGap(BaseModel):
    """Every cell with both kinds of testers, under one rule."""

    delta: float
    confidence: float
    rule: str
    difference_interval: str
    human_sources: list[str]
    simulated_sources: list[str]
    cells: list[CellGap]


def newcombe_difference(
    p1: float, low1: float, high1: float, p2: float, low2: float, high2: float
) -> tuple[float, float]:
    """The interval of ``p1 − p2`` from each proportion's own interval (Newcombe 1998, 10)."""
    d = p1 - p2
    low = d - math.hypot(p1 - low1, high2 - p2)
    high = d + math.hypot(high1 - p1, p2 - low2)
    return max(-1.0, low), min(1.0, high)


def simulation_gap_per_cell(
    db: Database,
    measurement: Measurement,
    *,
    delta: float = DEFAULT_DELTA,
    replicates: int = CALIBRATION_REPLICATES,
) -> SimulationGap:
    """The simulation gap of every cell of ``measurement`` with human and simulated testers;
    ``replicates``: the calibrated rates' bootstrap replicates."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    cells: defaultdict[tuple[str, str, str], dict[str, list[MeasuredDialogue]]] = defaultdict(
        lambda: {HUMAN: [], SIMULATED: []}
    )
    for dialogue in measurement.dialogues:
        if dialogue.not_measurable is None and dialogue.source in (HUMAN, SIMULATED):
            cells[_cell(dialogue)][dialogue.source].append(dialogue)
    compared = {key: kinds for key, kinds in cells.items() if all(kinds.values())}
    # Every report asks: a record without both kinds in one cell costs no rate or query.
    rates = {kind: _rates_of(measurement, kind) for kind in (HUMAN, SIMULATED)} if compared else {}
    sessions = [d.session_id for kinds in compared.values() for ds in kinds.values() for d in ds]
    lengths = dialogue_shapes(db, sessions) if compared else {}
    answers = _answers(db, sessions) if compared else {}
    found = []
    for key in sorted(compared, key=lambda k: (k[0], k[1], _LEVELS.get(k[2], 9), k[2])):
        kinds = compared[key]
        gaps = _rate_gaps(key, rates, delta)
        features = [
            *_length_features(kinds, lengths),
            *_violation_features(gaps),
            *_questionnaire_features(kinds, answers),
        ]
        comparable = [gap.within_delta for gap in gaps if gap.within_delta is not None]
        found.append(
            CellGap(
                cell=dict(zip(("application", "scenario", "level"), key, strict=True)),
                human_dialogues=len(kinds[HUMAN]),
                simulated_dialogues=len(kinds[SIMULATED]),
                human_testers=_testers(kinds[HUMAN]),
                simulated_testers=_testers(kinds[SIMULATED]),
                rates=gaps,
                features=features,
                templates=_template_distances(kinds, lengths),
                stands_in=all(comparable) if comparable else None,
                calibration=_calibration(kinds, lengths, gaps, measurement, replicates),
            )
        )
    return SimulationGap(
        delta=delta,
        confidence=measurement.spec.spec.confidence,
        rule=f"{RULE} (δ = {delta:g})",
        difference_interval=DIFFERENCE_INTERVAL,
        human_sources=[HUMAN],
        simulated_sources=[SIMULATED],
        cells=found,
    )


_LEVELS = {"model_testing": 0, "red_teaming": 1, "field_testing": 2}
_CELL_KEYS = ("application", "scenario", "level")
_GroupKey = tuple[tuple[str, str], ...]
_MEAN_FEATURES = (REFUSAL_SHARE,)
"""Features mostly zero, whose medians would hide a difference: summarized by their mean."""


def _cell(dialogue: MeasuredDialogue) -> tuple[str, str, str]:
    return dialogue.application, dialogue.scenario, dialogue.level


def _testers(dialogues: Sequence[MeasuredDialogue]) -> int:
    """Distinct testers; a dialogue with no known tester is a tester of its own."""
    return len({d.tester or f"dialogue {d.session_id}" for d in dialogues})


def _rates_of(measurement: Measurement, kind: str) -> dict[_GroupKey, DefectRate]:
    """The core's rates over one kind of tester's dialogues, by their group's values."""
    verdicts = [v for v in measurement.verdicts if v.dialogue.source == kind]
    dialogues = [d for d in measurement.dialogues if d.source == kind]
    found = defect_rates(
        verdicts,
        dialogues,
        measurement.record.failed,
        measurement.spec.spec,
        by=DEFAULT_RATE_GROUPING,
    )
    return {tuple(rate.group.items()): rate for rate in found}


def _rate_gaps(
    cell: tuple[str, str, str],
    rates: dict[str, dict[_GroupKey, DefectRate]],
    delta: float,
) -> list[RateGap]:
    wanted = dict(zip(_CELL_KEYS, cell, strict=True))
    gaps = []
    for key, human in rates[HUMAN].items():
        if any(human.group[k] != v for k, v in wanted.items()):
            continue
        simulated = rates[SIMULATED].get(key)
        if simulated is None:
            continue
        difference = low = high = None
        within = None
        if human.rate is not None and simulated.rate is not None:
            assert human.ci_low is not None and human.ci_high is not None
            assert simulated.ci_low is not None and simulated.ci_high is not None
            difference = simulated.rate - human.rate
            low, high = newcombe_difference(
                simulated.rate,
                simulated.ci_low,
                simulated.ci_high,
                human.rate,
                human.ci_low,
                human.ci_high,
            )
            within = -delta <= low and high <= delta
        gaps.append(
            RateGap(
                group=human.group,
                human=human,
                simulated=simulated,
                difference=difference,
                ci_low=low,
                ci_high=high,
                within_delta=within,
            )
        )
    return gaps


def _answers(db: Database, session_ids: Sequence[str]) -> dict[tuple[str, str, bool], float]:
    """(session, item, simulated respondent) → the mean numeric answer to the item."""
    values: defaultdict[tuple[str, str, bool], list[float]] = defaultdict(list)
    for answer in questionnaire_answers(db, session_ids):
        if answer.value is not None:
            values[(answer.session_id, answer.item_id, answer.simulated)].append(answer.value)
    return {key: statistics.fmean(found) for key, found in values.items()}


def _mann_whitney(feature: str, human: list[float], simulated: list[float]) -> FeatureGap:
    from scipy import stats  # loaded on use: importing scipy costs about a second

    result = stats.mannwhitneyu(simulated, human, alternative="two-sided")
    cliff = 2 * float(result.statistic) / (len(simulated) * len(human)) - 1
    mean = feature in _MEAN_FEATURES
    summarize = statistics.fmean if mean else statistics.median
    return FeatureGap(
        feature=feature,
        summary="mean" if mean else "median",
        human=summarize(human),
        simulated=summarize(simulated),
        human_n=len(human),
        simulated_n=len(simulated),
        test=_MANN_WHITNEY,
        p_value=float(result.pvalue),
        effect_size=_CLIFF,
        effect=cliff,
    )


def _length_features(
    kinds: dict[str, list[MeasuredDialogue]], lengths: dict[str, DialogueShape]
) -> list[FeatureGap]:
    """Each feature of :mod:`dialogue_features` both kinds of dialogue have (the violation
    turn only where the packet check finds a violation)."""
    found = []
    for feature in (TURNS, USER_LENGTH, REFUSAL_SHARE, VIOLATION_TURN):
        human = _values(kinds[HUMAN], lengths, feature)
        simulated = _values(kinds[SIMULATED], lengths, feature)
        if human and simulated:
            found.append(_mann_whitney(feature, human, simulated))
    return found


def _values(
    dialogues: Sequence[MeasuredDialogue], lengths: dict[str, DialogueShape], feature: str
) -> list[float]:
    found = (lengths[d.session_id].features.get(feature) for d in dialogues)
    return [value for value in found if value is not None]


def _template_distances(
    kinds: dict[str, list[MeasuredDialogue]], lengths: dict[str, DialogueShape]
) -> list[TemplateDistance]:
    by_template: defaultdict[str, list[str]] = defaultdict(list)
    for dialogue in kinds[SIMULATED]:
        by_template[lengths[dialogue.session_id].template].append(dialogue.session_id)
    found = []
    for template, sessions in by_template.items():
        effects = {}
        for feature in (TURNS, USER_LENGTH):
            human = [lengths[d.session_id].features[feature] for d in kinds[HUMAN]]
            simulated = [lengths[s].features[feature] for s in sessions]
            effects[feature] = _mann_whitney(feature, human, simulated).effect
        distance = statistics.fmean(abs(effect) for effect in effects.values())
        found.append(
            TemplateDistance(
                template=template, dialogues=len(sessions), distance=distance, effects=effects
            )
        )
    return sorted(found, key=lambda t: (t.distance, t.template))


def _violation_features(gaps: Sequence[RateGap]) -> list[FeatureGap]:
    """The share of dialogues with a guardrail violation, per annotator group."""
    found = []
    for gap in gaps:
        if gap.group["harm"] != GUARDRAIL_VIOLATION or gap.difference is None:
            continue
        h_yes, h_n = len(gap.human.defect_dialogues), gap.human.n
        s_yes, s_n = len(gap.simulated.defect_dialogues), gap.simulated.n
        from scipy import stats  # loaded on use

        result = stats.fisher_exact([[s_yes, s_n - s_yes], [h_yes, h_n - h_yes]])
        who = gap.group.get("source") or gap.group.get("annotator") or "all annotators"
        found.append(
            FeatureGap(
                feature=f"reached a violation (by {who})",
                summary="share",
                human=h_yes / h_n,
                simulated=s_yes / s_n,
                human_n=h_n,
                simulated_n=s_n,
                test="Fisher's exact, two-sided",
                p_value=float(result.pvalue),
                effect_size="risk difference (simulated − human)",
                effect=s_yes / s_n - h_yes / h_n,
            )
        )
    return found


def _questionnaire_features(
    kinds: dict[str, list[MeasuredDialogue]], answers: dict[tuple[str, str, bool], float]
) -> list[FeatureGap]:
    """Each numeric questionnaire item answered by people and by simulated testers."""
    items = sorted({item for _session, item, _simulated in answers})
    found = []
    for item in items:
        human = [
            answers[(d.session_id, item, False)]
            for d in kinds[HUMAN]
            if (d.session_id, item, False) in answers
        ]
        simulated = [
            answers[(d.session_id, item, True)]
            for d in kinds[SIMULATED]
            if (d.session_id, item, True) in answers
        ]
        if human and simulated:
            found.append(_mann_whitney(f"questionnaire: {item}", human, simulated))
    return found


def _calibration(
    kinds: dict[str, list[MeasuredDialogue]],
    lengths: dict[str, DialogueShape],
    gaps: Sequence[RateGap],
    measurement: Measurement,
    replicates: int,
) -> CellCalibration | None:
    """Simulated templates reweighted on the features every dialogue of the cell has."""
    dialogues = [d for found in kinds.values() for d in found]
    features = [
        f
        for f in CALIBRATION_FEATURES
        if all(f in lengths[d.session_id].features for d in dialogues)
    ]
    if not features:
        return None

    def sampled(dialogue: MeasuredDialogue, kind: str) -> SampledDialogue:
        shape = lengths[dialogue.session_id]
        rates = [gap.human if kind == HUMAN else gap.simulated for gap in gaps]
        return SampledDialogue(
            tester=dialogue.tester or f"dialogue {dialogue.session_id}",
            template=shape.template,
            features=tuple(shape.features[f] for f in features),
            defects=frozenset(
                at for at, r in enumerate(rates) if dialogue.session_id in r.defect_dialogues
            ),
            rated=frozenset(at for at, r in enumerate(rates) if dialogue.session_id in r.dialogues),
        )

    spec = measurement.spec.spec
    return calibrate_cell(
        [sampled(d, HUMAN) for d in kinds[HUMAN]],
        [sampled(d, SIMULATED) for d in kinds[SIMULATED]],
        features,
        [gap.group for gap in gaps],
        confidence=spec.confidence,
        replicates=replicates,
        seed=spec.seed,
    )
