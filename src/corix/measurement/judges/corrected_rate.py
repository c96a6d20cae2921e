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
about how many labels of the reference source would give that many. Over several cells
of a harm, :mod:`corix.measurement.judges.pooling` learns the judge's error from all of them.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel

from corix.measurement.stats import wilson_cc_bounds

METHOD = (
    "latent-class posterior over the judged sample with its calibration dialogues "
    "(Jeffreys prior on the rate, uniform on sensitivity and specificity), median and "
    "equal-tailed credible interval"
)
ACCURACY_INTERVAL = (
    "Wilson, continuity-corrected, at Kish's effective number of calibration dialogues "
    "weighted by their verdict stratum"
)
MIN_ACCURACY = 0.8
"""A judge whose sensitivity or specificity on the calibration dialogues is under this is
flagged (``below_accuracy``): its raw rates should not be read as the people's."""
MIN_CALIBRATION = 10
"""Trusted defects and non-defects each needed before a correction is more than its prior:
with 10, a sensitivity near 0.8 is known to about ±0.13."""

CHAINS = 200
BURN_IN = 60

__all__ = [
    "ACCURACY_INTERVAL",
    "METHOD",
    "MIN_ACCURACY",
    "MIN_CALIBRATION",
    "CorrectedRate",
    "corrected_rate",
    "latent_class_draws",
    "posterior_rates",
    "rogan_gladen",
]


class CorrectedRate(BaseModel):
    """A judge's defect rate beside its correction for the judge's measured error.

    ``corrected_rate`` is the posterior median, ``rogan_gladen`` the point correction by
    the formula (``None`` where undefined); ``calibration_defects`` counts the trusted
    defects among the calibration dialogues. The sensitivity and specificity weight each
    calibration dialogue by its verdict stratum's judged dialogues per calibration one, so
    a plan that oversampled the judge's "yes" (:mod:`corix.measurement.sizing.label_plan`) does
    not lean them toward it; their intervals are :data:`ACCURACY_INTERVAL`.
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
    pooled_cells: int = 1
    """The cells of the harm whose labels the rate learnt the judge's error from
    (:mod:`corix.measurement.judges.pooling`); 1: this cell's alone."""
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
    weights = _weights(verdicts, judge_on_pairs)
    sensitivity = _share(judge_on_pairs, truth_on_pairs, weights)
    specificity = _share(~judge_on_pairs, ~truth_on_pairs, weights)
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
        **_bounds("sensitivity", sensitivity, weights[truth_on_pairs], confidence),
        **_bounds("specificity", specificity, weights[~truth_on_pairs], confidence),
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
    counts = CellCounts.of(verdicts, judge_on_pairs, truth_on_pairs)
    draws = posterior_rates(counts.as_tuple(), resamples, group_seed(seed, group))
    tail = (1 - confidence) / 2
    low, median, high = np.quantile(draws, [tail, 0.5, 1 - tail])
    return base.model_copy(
        update={
            "corrected_rate": float(median),
            "ci_low": float(low),
            "ci_high": float(high),
            "note": thin_note(counts, float(median), reference),
        }
    )


@dataclass(frozen=True, slots=True)
class CellCounts:
    """The data the model sees in one cell: calibration dialogues (judge yes & defect,
    judge no & defect, judge yes & clean, judge no & clean), then the judge's yes and no
    on the other dialogues."""

    tp: int
    fn: int
    fp: int
    tn: int
    yes: int
    no: int

    @classmethod
    def of(cls, verdicts: np.ndarray, judge: np.ndarray, truth: np.ndarray) -> CellCounts:
        tp, fn = int((judge & truth).sum()), int((~judge & truth).sum())
        fp, tn = int((judge & ~truth).sum()), int((~judge & ~truth).sum())
        yes = int(verdicts.sum()) - tp - fp
        return cls(tp, fn, fp, tn, yes, len(verdicts) - int(verdicts.sum()) - fn - tn)

    @property
    def judged(self) -> int:
        return self.tp + self.fn + self.fp + self.tn + self.yes + self.no

    @property
    def judge_yes(self) -> int:
        return self.tp + self.fp + self.yes

    def as_tuple(self) -> tuple[int, int, int, int, int, int]:
        return (self.tp, self.fn, self.fp, self.tn, self.yes, self.no)


ErrorPrior = Callable[[np.random.Generator, np.ndarray], tuple[Any, Any]]
"""Given the chains' current sensitivities (or specificities), chains × cells, the two
parameters of the Beta each is drawn from next."""


def _uniform(_rng: np.random.Generator, _shares: np.ndarray) -> tuple[float, float]:
    return 1.0, 1.0


def posterior_rates(
    counts: tuple[int, int, int, int, int, int], draws: int, seed: Sequence[int] | int
) -> np.ndarray:
    """``draws`` posterior draws of the defect rate π (see the module docstring).

    ``counts``: calibration dialogues (judge yes & defect, judge no & defect, judge yes &
    clean, judge no & clean), then the judge's yes and no on the other dialogues.
    """
    return latent_class_draws(np.array([counts]), draws, seed)[:, 0]


def latent_class_draws(
    counts: np.ndarray,
    draws: int,
    seed: Sequence[int] | int,
    priors: tuple[ErrorPrior, ErrorPrior] = (_uniform, _uniform),
) -> np.ndarray:
    """``draws`` × cells posterior draws of each cell's rate, ``counts`` a row of
    :meth:`CellCounts.as_tuple` per cell: the Gibbs sampler that fills in the unlabelled
    dialogues' truth, then draws π, Se and Sp; ``priors`` give Se's and Sp's Beta (uniform,
    or one learnt across the cells)."""
    tp, fn, fp, tn, yes, no = counts.T
    n_cal = tp + fn + fp + tn
    rng = np.random.default_rng(seed)
    chains = min(CHAINS, draws)
    per_chain = math.ceil(draws / chains)
    # Start every chain at the calibration's estimates, shrunk off the edges.
    se = np.tile((tp + 1) / (tp + fn + 2), (chains, 1))
    sp = np.tile((tn + 1) / (tn + fp + 2), (chains, 1))
    pi = np.tile((tp + fn + 0.5) / (n_cal + 1), (chains, 1))
    kept = []
    for step in range(BURN_IN + per_chain):
        flagged = pi * se
        missed = pi * (1 - se)
        hidden_yes = rng.binomial(yes, flagged / (flagged + (1 - pi) * (1 - sp)))
        hidden_no = rng.binomial(no, missed / (missed + (1 - pi) * sp))
        defects = tp + fn + hidden_yes + hidden_no
        pi = rng.beta(0.5 + defects, 0.5 + n_cal + yes + no - defects)
        a, b = priors[0](rng, se)
        se = rng.beta(a + tp + hidden_yes, b + fn + hidden_no)
        a, b = priors[1](rng, sp)
        sp = rng.beta(a + tn + no - hidden_no, b + fp + yes - hidden_yes)
        if step >= BURN_IN:
            kept.append(pi)
    return np.concatenate(kept)[:draws]


def thin_note(
    counts: CellCounts, rate: float, reference: str, *, pooled_cells: int = 1
) -> str | None:
    """What too few trusted defects or non-defects mean, or ``None``; a cell pooled with
    others is told that it leans on them rather than that it cannot be corrected."""
    tp, fn, fp, tn = counts.tp, counts.fn, counts.fp, counts.tn
    defects, clean = tp + fn, fp + tn
    if defects >= MIN_CALIBRATION and clean >= MIN_CALIBRATION:
        return None
    rate = min(max(rate, 1e-3), 1 - 1e-3)
    needed = math.ceil(max(MIN_CALIBRATION / rate, MIN_CALIBRATION / (1 - rate)))
    found = f"{defects} {reference}-labelled defects and {clean} non-defects"
    alone = f"need {MIN_CALIBRATION} of each: about {needed} {reference} labels at this rate"
    if pooled_cells > 1:
        return (
            f"calibration thin in this cell: {found}; its judge's error leans on the other "
            f"{pooled_cells - 1} cells of the harm ({alone} to stand alone)"
        )
    return f"calibration too thin to correct: {found} ({alone})"


def _weights(verdicts: np.ndarray, judge_on_pairs: np.ndarray) -> np.ndarray:
    """Each calibration dialogue's weight: its verdict stratum's judged dialogues per
    calibration dialogue (the inverse of its inclusion probability, for a sample drawn
    at random within the judge's verdicts, as a label plan draws)."""
    flagged = judge_on_pairs.sum()
    per_yes = verdicts.sum() / flagged if flagged else 0.0
    cleared = len(judge_on_pairs) - flagged
    per_no = (len(verdicts) - verdicts.sum()) / cleared if cleared else 0.0
    return np.where(judge_on_pairs, per_yes, per_no).astype(float)


def _bounds(
    name: str, share: float | None, weights: np.ndarray, confidence: float
) -> dict[str, float | None]:
    """``{name}_low`` and ``{name}_high``: the interval of a weighted ``share`` at Kish's
    effective number of dialogues."""
    if share is None or not weights.sum():
        return {f"{name}_low": None, f"{name}_high": None}
    effective = weights.sum() ** 2 / (weights**2).sum()
    low, high = wilson_cc_bounds(share, float(effective), confidence)
    return {f"{name}_low": low, f"{name}_high": high}


def _share(hits: np.ndarray, among: np.ndarray, weights: np.ndarray) -> float | None:
    total = weights[among].sum()
    return float(weights[hits & among].sum() / total) if among.any() and total else None


def group_seed(seed: int, group: Mapping[str, str]) -> list[int]:
    """A random stream per group: cells of one run draw independently."""
    label = "|".join(f"{k}={v}" for k, v in sorted(group.items()))
    return [seed, zlib.crc32(label.encode())]
