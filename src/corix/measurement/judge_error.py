"""Judges whose error is measured: an LLM judge's rate corrected by its agreement with people.

Where trusted labels (people, by default) exist for a sample of the dialogues an LLM
judge rated, the judge's **sensitivity** (defects it finds among the trusted defects) and
**specificity** (non-defects it clears among the trusted non-defects) are estimated on
that sample, and the judge's raw rate is corrected with the Rogan–Gladen estimator::

    corrected = (raw + specificity − 1) / (sensitivity + specificity − 1)

clipped to [0, 1]. Its interval is a percentile bootstrap that resamples both samples —
the dialogues behind the raw rate and the calibration pairs — so it carries the judge's
error as well as the sampling of dialogues. A judge no better than chance on the sample
(sensitivity + specificity ≤ 1) cannot be corrected: the rate is then ``None``, said so.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel

METHOD = "Rogan–Gladen, percentile bootstrap over dialogues and calibration pairs"

__all__ = ["METHOD", "CorrectedRate", "corrected_rate", "rogan_gladen"]


class CorrectedRate(BaseModel):
    """A judge's defect rate beside its correction for the judge's measured error."""

    group: dict[str, str]
    judge: str
    reference: str
    n: int
    raw_rate: float | None
    n_calibration: int
    sensitivity: float | None
    specificity: float | None
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
    pairs it shares with ``trusted`` (dialogue key → trusted 0/1 verdict)."""
    keys = sorted(judged)
    pairs = sorted(key for key in keys if key in trusted)
    verdicts = np.array([judged[key] >= 0.5 for key in keys], dtype=float)
    judge_on_pairs = np.array([judged[key] >= 0.5 for key in pairs], dtype=bool)
    truth_on_pairs = np.array([trusted[key] >= 0.5 for key in pairs], dtype=bool)
    raw = float(verdicts.mean()) if keys else None
    base = CorrectedRate(
        group=dict(group),
        judge=judge,
        reference=reference,
        n=len(keys),
        raw_rate=raw,
        n_calibration=len(pairs),
        sensitivity=_share(judge_on_pairs, truth_on_pairs),
        specificity=_share(~judge_on_pairs, ~truth_on_pairs),
        corrected_rate=None,
        ci_low=None,
        ci_high=None,
    )
    if raw is None or base.sensitivity is None or base.specificity is None:
        return base.model_copy(
            update={"note": "no calibration pairs with both defects and non-defects"}
        )
    corrected = rogan_gladen(raw, base.sensitivity, base.specificity)
    if corrected is None:
        return base.model_copy(update={"note": "the judge is no better than chance here"})
    low, high = _bootstrap(
        verdicts, judge_on_pairs, truth_on_pairs, resamples, _seed(seed, group), confidence
    )
    return base.model_copy(update={"corrected_rate": corrected, "ci_low": low, "ci_high": high})


def _share(hits: np.ndarray, among: np.ndarray) -> float | None:
    return float(hits[among].mean()) if among.any() else None


def _seed(seed: int, group: Mapping[str, str]) -> list[int]:
    label = "|".join(f"{k}={v}" for k, v in sorted(group.items()))
    return [seed, zlib.crc32(label.encode())]


def _bootstrap(
    verdicts: np.ndarray,
    judge: np.ndarray,
    truth: np.ndarray,
    resamples: int,
    seed: Sequence[int],
    confidence: float,
) -> tuple[float | None, float | None]:
    if resamples <= 0:
        return None, None
    rng = np.random.default_rng(list(seed))
    raw = rng.binomial(len(verdicts), verdicts.mean(), size=resamples) / len(verdicts)
    picks = rng.integers(0, len(truth), size=(resamples, len(truth)))
    truth_r, judge_r = truth[picks], judge[picks]
    positives, negatives = truth_r.sum(axis=1), (~truth_r).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sensitivity = (judge_r & truth_r).sum(axis=1) / positives
        specificity = (~judge_r & ~truth_r).sum(axis=1) / negatives
        informative = sensitivity + specificity - 1
        corrected = np.clip((raw + specificity - 1) / informative, 0.0, 1.0)
    usable = np.isfinite(corrected) & (informative > 0)
    if not usable.any():
        return None, None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(corrected[usable], [tail, 100 - tail])
    return float(low), float(high)
