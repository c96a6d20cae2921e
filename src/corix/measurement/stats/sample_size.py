"""How many dialogues a question needs: interval width, power, and testers' clustering.

* **Width, assured.** The smallest ``n`` at which the interval ``corix defects``
  reports is at most the requested width with a stated probability (the *assurance*,
  default 0.8) at an assumed rate ``p``: the interval itself, not an approximation of
  it. With one dialogue per tester that is the continuity-corrected Wilson interval
  (Newcombe 1998, "Two-sided confidence intervals for the single proportion", Stat.
  Med. 17:857, method 4), weighed exactly over the Binomial(n, p) counts. With ``m``
  dialogues per tester it is the cluster interval of
  :mod:`corix.measurement.defect_rates` (the variance over testers times k/(k−1),
  corrected Wilson at the effective n), in its large-replicate limit (the CR1 variance
  the bootstrap estimates), over simulated studies whose testers' own rates are
  Beta-distributed with intra-class correlation ``ρ`` (a fixed seed: the same answer
  every time). A width met only *on average* is missed in about half of the runs.
* **Width, expected.** The smallest ``n`` whose *expected* plain Wilson width is at most
  the width (exact): the tuning of the sequential rule (:mod:`corix.measurement.stopping.rules`).
* **Power.** Dialogues per application for a two-sided two-proportion z-test to detect
  ``p`` against ``p + δ`` with the requested power (Fleiss, Levin & Paik, *Statistical
  Methods for Rates and Proportions*, 3rd ed., §4.2, without continuity correction).
  Across ``m`` comparisons the test runs at ``α/m``, Holm's first and strictest step
  (Holm 1979), so every comparison keeps its power whatever order Holm takes them in.
* **Clustering.** When each tester contributes ``m`` dialogues whose verdicts correlate
  with intra-class correlation ``ρ``, the variance of a rate grows by the design effect
  ``1 + (m − 1)ρ`` (Kish 1965, *Survey Sampling*, §5.4), so the counts above are
  multiplied by it. ``ρ`` is given or estimated from an earlier run with the one-way
  ANOVA estimator (Donner 1986, "A review of inference procedures for the intraclass
  correlation coefficient in the one-way random effects model", Int. Stat. Rev. 54:67).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np

DEFAULT_ASSURANCE = 0.8
_SIMULATED_STUDIES = 4000
_RESAMPLES = 1000  # the measurement specification's default bootstrap

__all__ = [
    "DEFAULT_ASSURANCE",
    "design_effect",
    "expected_wilson_width",
    "icc_anova",
    "n_for_assured_width",
    "n_for_difference",
    "n_for_width",
    "width_assurance",
    "wilson_widths",
]

_MAX_N = 1_000_000


def design_effect(per_tester: float, icc: float) -> float:
    """Kish's design effect ``1 + (m − 1)ρ`` for ``m`` dialogues per tester."""
    if per_tester < 1 or not 0 <= icc <= 1:
        raise ValueError(f"need m >= 1 and 0 <= icc <= 1, got m={per_tester}, icc={icc}")
    return 1 + (per_tester - 1) * icc


def wilson_widths(defects: np.ndarray, n: float, confidence: float) -> np.ndarray:
    """Widths of the Wilson intervals of ``defects`` (an array of counts) out of ``n``."""
    from scipy.stats import norm  # scipy loads where used: a run never needs it

    z = float(norm.ppf(0.5 + confidence / 2))
    rate = defects / n
    denominator = 1 + z * z / n
    centre = (rate + z * z / (2 * n)) / denominator
    half = z / denominator * np.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    low = np.where(rate <= 0, 0.0, np.maximum(0.0, centre - half))
    high = np.where(rate >= 1, 1.0, np.minimum(1.0, centre + half))
    return np.asarray(high - low, dtype=float)


def expected_wilson_width(n: int, rate: float, confidence: float = 0.95) -> float:
    """The mean width of the Wilson interval over Binomial(``n``, ``rate``) counts."""
    from scipy.stats import binom

    counts = np.arange(n + 1)
    weights = binom.pmf(counts, n, rate)
    return float(weights @ wilson_widths(counts.astype(float), n, confidence))


def n_for_width(rate: float, width: float, confidence: float = 0.95, *, deff: float = 1.0) -> int:
    """Dialogues for an expected Wilson width of at most ``width`` at ``rate``, times the
    design effect ``deff`` (rounded up)."""
    if not 0 < width < 1 or not 0 <= rate <= 1:
        raise ValueError(f"need 0 < width < 1 and 0 <= rate <= 1, got {width}, {rate}")
    independent = _smallest(lambda n: expected_wilson_width(n, rate, confidence) <= width)
    return math.ceil(independent * deff)


def width_assurance(
    n: int,
    rate: float,
    width: float,
    confidence: float = 0.95,
    *,
    per_tester: int = 1,
    icc: float = 0.0,
    resamples: int = _RESAMPLES,
) -> float:
    """The probability that the interval reported on ``n`` dialogues (``per_tester`` from
    each tester) is at most ``width`` wide when the rate is ``rate``; with testers the
    variance a bootstrap of ``resamples`` replicates reads carries its own noise, a
    χ²(B − 1)/(B − 1) factor."""
    from corix.measurement.stats.wilson import wilson_cc_arrays

    if per_tester <= 1:
        from scipy.stats import binom

        counts = np.arange(n + 1, dtype=float)
        low, high = wilson_cc_arrays(counts / n, np.full(n + 1, float(n)), confidence)
        return float(binom.pmf(counts, n, rate) @ (high - low <= width))
    testers = math.ceil(n / per_tester)
    rng = np.random.default_rng([testers, per_tester])
    own = np.full((_SIMULATED_STUDIES, testers), rate)
    if icc > 0 and 0 < rate < 1:
        scale = (1 - icc) / icc
        own = rng.beta(rate * scale, (1 - rate) * scale, own.shape)
    defects = rng.binomial(per_tester, own).astype(float)
    total = testers * per_tester
    estimate = defects.sum(axis=1) / total
    variance = ((defects - estimate[:, None] * per_tester) ** 2).sum(axis=1) / total**2
    variance *= testers / (testers - 1) if testers > 1 else 1.0
    variance *= rng.chisquare(resamples - 1, len(variance)) / (resamples - 1)
    spread = estimate * (1 - estimate)
    effective = np.where(
        (variance > 0) & (spread > 0), spread / np.where(variance > 0, variance, 1.0), total
    )
    low, high = wilson_cc_arrays(estimate, np.minimum(effective, total), confidence)
    return float(np.mean(high - low <= width))


@functools.lru_cache(maxsize=256)  # a plan's cells often share their rate and design
def n_for_assured_width(
    rate: float,
    width: float,
    confidence: float = 0.95,
    *,
    assurance: float = DEFAULT_ASSURANCE,
    per_tester: int = 1,
    icc: float = 0.0,
) -> int:
    """Dialogues (a whole number of testers) whose reported interval is at most ``width``
    wide with probability at least ``assurance`` at ``rate``."""
    if not 0 < width < 1 or not 0 <= rate <= 1 or not 0 < assurance < 1:
        raise ValueError(
            f"need 0 < width < 1, 0 <= rate <= 1, 0 < assurance < 1; got {width}, {rate}, "
            f"{assurance}"
        )
    m = max(1, per_tester)
    testers = _smallest(
        lambda k: (
            width_assurance(k * m, rate, width, confidence, per_tester=m, icc=icc) >= assurance
        )
    )
    return testers * m


def n_for_difference(
    rate: float,
    difference: float,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    comparisons: int = 1,
    deff: float = 1.0,
) -> int:
    """Dialogues per application to detect ``rate`` against ``rate + difference`` (or
    ``rate − difference`` when that would pass 1) with a two-sided z-test at
    ``alpha / comparisons``, times the design effect (rounded up)."""
    if not 0 < difference < 1 or not 0 < power < 1 or comparisons < 1:
        raise ValueError("need 0 < difference < 1, 0 < power < 1 and comparisons >= 1")
    p1 = rate
    p2 = rate + difference if rate + difference <= 1 else rate - difference
    if not 0 <= p2 <= 1:
        raise ValueError(f"cannot move rate {rate} by {difference} within [0, 1]")
    from scipy.stats import norm

    z_alpha = float(norm.ppf(1 - alpha / comparisons / 2))
    z_beta = float(norm.ppf(power))
    mean = (p1 + p2) / 2
    numerator = z_alpha * math.sqrt(2 * mean * (1 - mean)) + z_beta * math.sqrt(
        p1 * (1 - p1) + p2 * (1 - p2)
    )
    independent = math.ceil((numerator / difference) ** 2)
    return math.ceil(independent * deff)


def icc_anova(groups: Sequence[Sequence[float]]) -> float:
    """The one-way ANOVA estimate of the intra-class correlation of values in ``groups``
    (clamped at 0; groups of one value add to the within-group degrees of freedom only
    through the group count)."""
    sizes = np.array([len(g) for g in groups], dtype=float)
    if len(groups) < 2 or sizes.sum() <= len(groups):
        raise ValueError("need at least two groups and one group with two values")
    values = [np.asarray(g, dtype=float) for g in groups]
    grand = float(np.concatenate(values).mean())
    total, k = float(sizes.sum()), len(groups)
    between = sum(len(v) * (float(v.mean()) - grand) ** 2 for v in values) / (k - 1)
    within = sum(float(((v - v.mean()) ** 2).sum()) for v in values) / (total - k)
    m0 = (total - float((sizes**2).sum()) / total) / (k - 1)
    if between + (m0 - 1) * within == 0:
        return 0.0
    return max(0.0, (between - within) / (between + (m0 - 1) * within))


def _smallest(enough: Callable[[int], bool]) -> int:
    """The smallest ``n >= 1`` with ``enough(n)``, by doubling then bisection."""
    high = 1
    while not enough(high):
        high *= 2
        if high > _MAX_N:
            raise ValueError(f"needs more than {_MAX_N} dialogues")
    low = high // 2
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high
