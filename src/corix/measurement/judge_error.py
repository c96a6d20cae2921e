"""Judges whose error is measured: an LLM judge's rate corrected by its agreement with people.

Where trusted labels (people, by default) exist for a sample of the dialogues an LLM
judge rated, the judge's **sensitivity** (defects it finds among the trusted defects) and
**specificity** (non-defects it clears among the trusted non-defects) are estimated on
that sample. The published point correction is Rogan–Gladen's::

    corrected = (raw + specificity − 1) / (sensitivity + specificity − 1)

It is undefined for a judge no better than chance on the sample, and neither it nor a
bootstrap of it covers at low prevalence, where a handful of trusted defects decides the
sensitivity. So the rate and its interval come from the **posterior** of a latent-class
model of the whole judged sample: each dialogue is a defect with probability π; the
judge says "defect" with probability Se for a defect and 1 − Sp for a non-defect; on
the calibration dialogues the truth is seen, on the others it is not. The calibration
dialogues are part of the judged sample, counted once (not resampled as if they were
a second, independent sample). Priors: Jeffreys Beta(½, ½) on π, uniform on Se and Sp.
A Gibbs sampler (many short chains, vectorized) draws the posterior; the rate is its
median and the interval its equal-tailed credible interval. Fewer than
:data:`MIN_CALIBRATION` trusted defects (or non-defects) is said in ``note``, with
about how many labels of the reference source would give that many.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel

from corix.measurement.defect_rates import wilson_cc_bounds

METHOD = (
    "latent-class posterior over the judged sample with its calibration dialogues "
    "(Jeffreys prior on the rate, uniform on sensitivity and specificity), median and "
    "equal-tailed credible interval"
)
ACCURACY_INTERVAL = "Wilson, continuity-corrected, over the calibration dialogues"
MIN_ACCURACY = 0.8
"""A judge whose sensitivity or specificity on the calibration dialogues is under this is
flagged (``below_accuracy``): its raw rates should not be read as the people's."""
MIN_CALIBRATION = 10
"""Trusted defects and non-defects each needed before a correction is more than its prior:
with 10, a sensitivity near 0.8 is known to about ±0.13."""

_CHAINS = 200
_BURN_IN = 60

__all__ = [
    "ACCURACY_INTERVAL",
    "METHOD",
    "MIN_ACCURACY",
    "MIN_CALIBRATION",
    "CorrectedRate",
    "corrected_rate",
    "posterior_rates",
    "rogan_gladen",
]


class CorrectedRate(BaseModel):
    """A judge's defect rate beside its correction for the judge's measured error.

    ``corrected_rate`` is the posterior median, ``rogan_gladen`` the point correction by
    the formula (``None`` where undefined); ``calibration_defects`` counts the trusted
    defects among the calibration dialogues. The sensitivity's and specificity's intervals
    (:data:`ACCURACY_INTERVAL`) count the calibration dialogues as independent.
    """

    group: dict[str, str]
    judge: str
    reference: str
    n: int
    raw_rate: float | None
    n_calibration: int
    calibration_defects: int = 0
    sensitivity: float | None
    specificity: float | None
    sensitivity_low: float | None = None
    sensitivity_high: float | None = None
    specificity_low: float | None = None
    specificity_high: float | None = None
    accuracy_interval: str = ACCURACY_INTERVAL
    accuracy_floor: float = MIN_ACCURACY
    below_accuracy: bool | None = None
    """Sensitivity or specificity under :data:`MIN_ACCURACY`; ``None`` when either is
    unknown (no trusted defect or no trusted non-defect)."""
    rogan_gladen: float | None = None
    corrected_rate: float | None
    ci_low: float | None
    ci_high: float | None
    method: str = METHOD
    note: str | None = None


def rogan_gladen(raw: float, sensitivity: float, specificity: float) -> float | None:
    """The prevalence behind an observed ``raw`` rate; ``None`` for a judge at chance."""
    informative = sensitivity + specificity - 1
    if informative <= 0:
        return None
    return float(min(1.0, max(0.0, (raw + specificity - 1) / informative)))


def corrected_rate(
    group: Mapping[str, str],
    judged: Mapping[str, float],
    trusted: Mapping[str, float],
    *,
    judge: str,
    reference: str,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> CorrectedRate:
    """Correct ``judged`` (dialogue key → the judge's 0/1 verdict) with the calibration
    dialogues it shares with ``trusted`` (dialogue key → trusted 0/1 verdict).

    ``resamples`` posterior draws are kept (none: no rate and no interval)."""
    keys = sorted(judged)
    pairs = sorted(key for key in keys if key in trusted)
    verdicts = np.array([judged[key] >= 0.5 for key in keys], dtype=bool)
    judge_on_pairs = np.array([judged[key] >= 0.5 for key in pairs], dtype=bool)
    truth_on_pairs = np.array([trusted[key] >= 0.5 for key in pairs], dtype=bool)
    raw = float(verdicts.mean()) if keys else None
    sensitivity = _share(judge_on_pairs, truth_on_pairs)
    specificity = _share(~judge_on_pairs, ~truth_on_pairs)
    base = CorrectedRate(
        group=dict(group),
        judge=judge,
        reference=reference,
        n=len(keys),
        raw_rate=raw,
        n_calibration=len(pairs),
        calibration_defects=int(truth_on_pairs.sum()),
        sensitivity=sensitivity,
        specificity=specificity,
        **_bounds("sensitivity", judge_on_pairs[truth_on_pairs], confidence),
        **_bounds("specificity", ~judge_on_pairs[~truth_on_pairs], confidence),
        below_accuracy=(
            None
            if sensitivity is None or specificity is None
            else min(sensitivity, specificity) < MIN_ACCURACY
        ),
        rogan_gladen=(
            None
            if raw is None or sensitivity is None or specificity is None
            else rogan_gladen(raw, sensitivity, specificity)
        ),
        corrected_rate=None,
        ci_low=None,
        ci_high=None,
    )
    if raw is None or resamples <= 0:
        return base
    counts = _Counts.of(verdicts, judge_on_pairs, truth_on_pairs)
    draws = posterior_rates(counts.as_tuple(), resamples, _seed(seed, group))
    tail = (1 - confidence) / 2
    low, median, high = np.quantile(draws, [tail, 0.5, 1 - tail])
    return base.model_copy(
        update={
            "corrected_rate": float(median),
            "ci_low": float(low),
            "ci_high": float(high),
            "note": _thin(counts, float(median), reference),
        }
    )


class _Counts:
    """The data the model sees: calibration cells (judge × truth) and the judge's verdicts
    on the other dialogues."""

    def __init__(self, cells: tuple[int, int, int, int], positives: int, negatives: int) -> None:
        self.cells = cells  # judge yes & defect, judge no & defect, judge yes & clean, no & clean
        self.positives = positives
        self.negatives = negatives

    @classmethod
    def of(cls, verdicts: np.ndarray, judge: np.ndarray, truth: np.ndarray) -> _Counts:
        cells = (
            int((judge & truth).sum()),
            int((~judge & truth).sum()),
            int((judge & ~truth).sum()),
            int((~judge & ~truth).sum()),
        )
        positives = int(verdicts.sum()) - cells[0] - cells[2]
        negatives = len(verdicts) - int(verdicts.sum()) - cells[1] - cells[3]
        return cls(cells, positives, negatives)

    def as_tuple(self) -> tuple[int, int, int, int, int, int]:
        return (*self.cells, self.positives, self.negatives)


def posterior_rates(
    counts: tuple[int, int, int, int, int, int], draws: int, seed: Sequence[int] | int
) -> np.ndarray:
    """``draws`` posterior draws of the defect rate π (see the module docstring).

    ``counts``: calibration dialogues (judge yes & defect, judge no & defect, judge yes &
    clean, judge no & clean), then the judge's yes and no on the other dialogues.
    """
    tp, fn, fp, tn, yes, no = counts
    rng = np.random.default_rng(seed)
    chains = min(_CHAINS, draws)
    per_chain = math.ceil(draws / chains)
    n_cal = tp + fn + fp + tn
    # Start every chain at the calibration's estimates, shrunk off the edges.
    se = np.full(chains, (tp + 1) / (tp + fn + 2))
    sp = np.full(chains, (tn + 1) / (tn + fp + 2))
    pi = np.full(chains, (tp + fn + 0.5) / (n_cal + 1))
    kept = []
    for step in range(_BURN_IN + per_chain):
        flagged = pi * se
        missed = pi * (1 - se)
        hidden_yes = rng.binomial(yes, flagged / (flagged + (1 - pi) * (1 - sp)))
        hidden_no = rng.binomial(no, missed / (missed + (1 - pi) * sp))
        defects = tp + fn + hidden_yes + hidden_no
        pi = rng.beta(0.5 + defects, 0.5 + n_cal + yes + no - defects)
        se = rng.beta(1 + tp + hidden_yes, 1 + fn + hidden_no)
        sp = rng.beta(1 + tn + no - hidden_no, 1 + fp + yes - hidden_yes)
        if step >= _BURN_IN:
            kept.append(pi)
    return np.concatenate(kept)[:draws]


def _thin(counts: _Counts, rate: float, reference: str) -> str | None:
    tp, fn, fp, tn = counts.cells
    defects, clean = tp + fn, fp + tn
    if defects >= MIN_CALIBRATION and clean >= MIN_CALIBRATION:
        return None
    rate = min(max(rate, 1e-3), 1 - 1e-3)
    needed = math.ceil(max(MIN_CALIBRATION / rate, MIN_CALIBRATION / (1 - rate)))
    return (
        f"calibration too thin to correct: {defects} {reference}-labelled defects and {clean} "
        f"non-defects (need {MIN_CALIBRATION} of each: about {needed} {reference} labels at "
        "this rate)"
    )


def _bounds(name: str, hits: np.ndarray, confidence: float) -> dict[str, float | None]:
    """``{name}_low`` and ``{name}_high``: the interval of the share of ``hits``."""
    if not len(hits):
        return {f"{name}_low": None, f"{name}_high": None}
    low, high = wilson_cc_bounds(float(hits.mean()), len(hits), confidence)
    return {f"{name}_low": low, f"{name}_high": high}


def _share(hits: np.ndarray, among: np.ndarray) -> float | None:
    return float(hits[among].mean()) if among.any() else None


def _seed(seed: int, group: Mapping[str, str]) -> list[int]:
    label = "|".join(f"{k}={v}" for k, v in sorted(group.items()))
    return [seed, zlib.crc32(label.encode())]
