"""Calibrated simulation: persona templates reweighted so the simulated testers look like the
human testers on chosen dialogue features, and the simulated rate under those weights.

Entropy balancing (Hainmueller 2012) at the level of persona templates: every simulated
dialogue of template t gets the weight ``exp(λ · x̄_t)`` (``x̄_t`` the template's mean
features, standardized), with λ chosen so that the weighted means of the simulated
dialogues equal the human testers' means. Weights are as close to uniform (the raw
simulated population) as the constraints allow, in the Kullback–Leibler sense; with as many
templates as constraints + 1 they are the unique weights that match. A template is
reweighted as a whole, so a feature the human mean lies outside the templates' range of
cannot be matched: the cell then has no calibrated rate and says so.

The calibrated rate is the weighted share of simulated dialogues with a defect. Its interval
is a percentile bootstrap that resamples the human testers and the simulated testers (persona
instances) as clusters and estimates the weights again in each replicate, so it carries the
weighting's uncertainty; replicates in which the features cannot be matched are dropped and
counted. The effective number of simulated dialogues after weighting is Kish's
``(Σw)² / Σw²``. Where the replicates show no spread (no defect, or only defects, in every
one) the percentile interval would be a point; it is then continuity-corrected Wilson's at
the group's effective n, as every other rate's interval is when nothing varies.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel

from corix.measurement.stats import wilson_cc_bounds

CALIBRATION_METHOD = (
    "entropy balancing of persona templates on the features' means; interval: percentile "
    "bootstrap over human and simulated testers, weights estimated again in each replicate"
)
MATCH_TOLERANCE = 1e-4
"""Largest standardized gap between a weighted mean and the human mean that counts as matched."""
_MAX_ITERATIONS = 50
"""Newton steps converge in a handful where weights exist; where they do not (the target on
or outside the templates' hull in several features at once), this bounds the search."""

__all__ = [
    "CALIBRATION_METHOD",
    "CalibratedRate",
    "CellCalibration",
    "SampledDialogue",
    "calibrate_cell",
    "entropy_weights",
    "kish_ess",
]


@dataclass(frozen=True)
class SampledDialogue:
    """One dialogue as calibration sees it: who made it, its features, its defects."""

    tester: str
    template: str
    features: tuple[float, ...]
    defects: frozenset[int]
    """Indexes of the rates (harm × annotator group) under which it is a defect."""
    rated: frozenset[int]
    """Indexes of the rates it counts in."""


class CalibratedRate(BaseModel):
    """One rate of the cell: the raw simulated share beside the calibrated one."""

    group: dict[str, str]
    raw_rate: float | None
    calibrated_rate: float | None
    ci_low: float | None
    ci_high: float | None


class CellCalibration(BaseModel):
    """The simulated testers of one cell reweighted to look like its human testers."""

    features: list[str]
    """The features balanced."""
    left_out: list[str]
    """Features not balanced: the templates do not differ on them, or there are too few
    templates to balance them too."""
    human_means: list[float]
    raw_means: list[float]
    template_weights: dict[str, float]
    """Each template's share of the weight (raw: its share of the dialogues); empty when
    the features cannot be matched."""
    effective_n: float | None
    """Kish's effective number of simulated dialogues after weighting."""
    simulated_dialogues: int
    replicates: int
    unmatched_replicates: int
    rates: list[CalibratedRate]
    note: str | None
    method: str = CALIBRATION_METHOD


def kish_ess(weights: Sequence[float]) -> float:
    """Kish's effective sample size ``(Σw)² / Σw²``."""
    total = math.fsum(weights)
    return total * total / math.fsum(w * w for w in weights)


def entropy_weights(
    features: Sequence[Sequence[float]], target: Sequence[float]
) -> list[float] | None:
    """Weights (summing to 1) closest to uniform whose weighted feature means equal
    ``target``, each dialogue's weight ``exp(λ · features)``; ``None`` when no such weights
    exist (the target outside the features' hull) or the solver does not reach them."""
    import numpy as np  # loaded on use, with scipy
    from scipy.optimize import minimize

    x = np.asarray(features, dtype=float) - np.asarray(target, dtype=float)
    scale = x.std(axis=0)
    varying = scale > 0
    if np.any(np.abs(x[:, ~varying]).max(axis=0, initial=0.0) > 0):
        return None  # a constant feature that differs from the target cannot be matched
    z = x[:, varying] / scale[varying]
    if z.shape[1] == 0:
        return [1.0 / len(x)] * len(x)

    def dual(lam: np.ndarray) -> tuple[float, np.ndarray]:
        # log Σ exp(z·λ) is convex in λ; its gradient is the weighted mean of z
        scores = z @ lam
        top = scores.max()
        w = np.exp(scores - top)
        total = w.sum()
        return float(top + np.log(total)), (w @ z) / total

    def hessian(lam: np.ndarray) -> np.ndarray:
        w = _normalized(z @ lam)
        mean = w @ z
        return np.asarray((z * w[:, None]).T @ z - np.outer(mean, mean))

    if np.any(z.min(axis=0) >= 0) or np.any(z.max(axis=0) <= 0):
        return None  # the target is not inside every feature's range: no weights reach it
    with np.errstate(all="ignore"):  # an unreachable target sends λ off to infinity
        found = minimize(
            dual,
            np.zeros(z.shape[1]),
            jac=True,
            hess=hessian,
            method="Newton-CG",
            options={"maxiter": _MAX_ITERATIONS},
        )
        w = _normalized(z @ found.x)
    if not np.all(np.isfinite(w)) or np.abs(w @ z).max() > MATCH_TOLERANCE:
        return None
    return [float(v) for v in w]


def _normalized(scores: Any) -> Any:
    import numpy as np

    w = np.exp(scores - scores.max())
    return w / w.sum()


def calibrate_cell(
    human: Sequence[SampledDialogue],
    simulated: Sequence[SampledDialogue],
    feature_names: Sequence[str],
    groups: Sequence[Mapping[str, str]],
    *,
    confidence: float,
    replicates: int,
    seed: int,
) -> CellCalibration:
    """Reweight ``simulated``'s templates to ``human``'s feature means; each rate of
    ``groups`` raw and calibrated, the calibrated one with its bootstrap interval.

    Templates are reweighted as wholes, so k templates can match at most k − 1 features:
    the features whose template means differ are balanced in the order given, up to that
    many; the others are named in ``left_out``."""
    kept = _balanceable(simulated, len(feature_names))
    human, simulated = _only(human, kept), _only(simulated, kept)
    weights = _template_weights(human, simulated) if kept else None
    draws: list[list[float | None]] = []
    unmatched = 0
    rng = random.Random(seed)
    for _ in range(replicates if kept else 0):
        h, s = _resample(human, rng), _resample(simulated, rng)
        replicate = _template_weights(h, s)
        if replicate is None:
            unmatched += 1
            continue
        draws.append([_weighted_rate(s, replicate, at) for at in range(len(groups))])
    rates = []
    for at, group in enumerate(groups):
        uniform = [1.0] * len(simulated)
        values = sorted(value for draw in draws if (value := draw[at]) is not None)
        low, high = _percentiles(values, confidence) if values else (None, None)
        if weights is not None and low is not None and low == high:
            low, high = _no_spread_bounds(simulated, weights, at, confidence)
        rates.append(
            CalibratedRate(
                group=dict(group),
                raw_rate=_weighted_rate(simulated, uniform, at),
                calibrated_rate=None if weights is None else _weighted_rate(simulated, weights, at),
                ci_low=None if weights is None else low,
                ci_high=None if weights is None else high,
            )
        )
    return CellCalibration(
        features=[feature_names[at] for at in kept],
        left_out=[name for at, name in enumerate(feature_names) if at not in kept],
        human_means=_means(human),
        raw_means=_means(simulated),
        template_weights=_shares(simulated, weights),
        effective_n=None if weights is None else kish_ess(weights),
        simulated_dialogues=len(simulated),
        replicates=replicates,
        unmatched_replicates=unmatched,
        rates=rates,
        note=None if weights is not None else (_UNMATCHED if kept else _NOTHING_TO_BALANCE),
    )


def _balanceable(simulated: Sequence[SampledDialogue], features: int) -> list[int]:
    """The features whose template means differ, in order, at most one fewer than there
    are templates."""
    by_template: defaultdict[str, list[SampledDialogue]] = defaultdict(list)
    for dialogue in simulated:
        by_template[dialogue.template].append(dialogue)
    means = [_means(found) for found in by_template.values()]
    varying = [at for at in range(features) if len({round(m[at], 9) for m in means}) > 1]
    return varying[: len(by_template) - 1]


def _only(dialogues: Sequence[SampledDialogue], kept: Sequence[int]) -> list[SampledDialogue]:
    return [
        replace(dialogue, features=tuple(dialogue.features[at] for at in kept))
        for dialogue in dialogues
    ]


_NOTHING_TO_BALANCE = (
    "the persona templates do not differ on any feature (or there is one template): nothing "
    "to reweight"
)
_UNMATCHED = (
    "the human testers' feature means lie outside what reweighting the persona templates can "
    "reach: no calibrated rate"
)


def _no_spread_bounds(
    dialogues: Sequence[SampledDialogue], weights: Sequence[float], at: int, confidence: float
) -> tuple[float, float]:
    """Corrected Wilson at the effective n of the dialogues rated in group ``at``: what an
    absence of spread still leaves open."""
    rated = [w for d, w in zip(dialogues, weights, strict=True) if at in d.rated]
    rate = _weighted_rate(dialogues, weights, at)
    assert rate is not None  # a group with replicates has rated dialogues
    return wilson_cc_bounds(rate, kish_ess(rated), confidence)


def _template_weights(
    human: Sequence[SampledDialogue], simulated: Sequence[SampledDialogue]
) -> list[float] | None:
    """Each simulated dialogue's weight: its template's mean features balanced to the
    human means."""
    by_template: defaultdict[str, list[SampledDialogue]] = defaultdict(list)
    for dialogue in simulated:
        by_template[dialogue.template].append(dialogue)
    template_means = {t: _means(found) for t, found in by_template.items()}
    rows = [template_means[d.template] for d in simulated]
    return entropy_weights(rows, _means(human))


def _means(dialogues: Sequence[SampledDialogue]) -> list[float]:
    return [
        math.fsum(column) / len(dialogues)
        for column in zip(*(d.features for d in dialogues), strict=True)
    ]


def _weighted_rate(
    dialogues: Sequence[SampledDialogue], weights: Sequence[float], at: int
) -> float | None:
    counted = [(d, w) for d, w in zip(dialogues, weights, strict=True) if at in d.rated]
    total = math.fsum(w for _, w in counted)
    if total <= 0:
        return None
    return math.fsum(w for d, w in counted if at in d.defects) / total


def _shares(
    dialogues: Sequence[SampledDialogue], weights: Sequence[float] | None
) -> dict[str, float]:
    if weights is None:
        return {}
    found: defaultdict[str, float] = defaultdict(float)
    for dialogue, weight in zip(dialogues, weights, strict=True):
        found[dialogue.template] += weight
    total = math.fsum(found.values())
    return {template: found[template] / total for template in sorted(found)}


def _resample(dialogues: Sequence[SampledDialogue], rng: random.Random) -> list[SampledDialogue]:
    """A bootstrap sample of whole testers (clusters), as many as there are."""
    by_tester: defaultdict[str, list[SampledDialogue]] = defaultdict(list)
    for dialogue in dialogues:
        by_tester[dialogue.tester].append(dialogue)
    testers = sorted(by_tester)
    return [d for _ in testers for d in by_tester[rng.choice(testers)]]


def _percentiles(values: Sequence[float], confidence: float) -> tuple[float, float]:
    tail = (1 - confidence) / 2
    last = len(values) - 1
    return values[round(tail * last)], values[round((1 - tail) * last)]
