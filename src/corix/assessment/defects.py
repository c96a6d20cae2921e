"""Defect rates: the share of samples whose severity passes a harm pack's threshold.

Every rate is reported next to its counts and a confidence interval. Two intervals are
offered:

* **Wilson score** (default) — well behaved for small samples and for rates near 0 or 1,
  where the usual normal-approximation interval collapses to a point.
* **Percentile bootstrap** (seeded) — resampling ``n`` samples with replacement and
  counting defects is exactly a draw from Binomial(n, defects / n), so the resamples are
  drawn that way. With 0 or ``n`` defects every resample is identical and the interval
  is a single point, which is why Wilson is the default.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from statistics import NormalDist
from typing import Literal

import numpy as np
from pydantic import BaseModel

from corix.assessment._names import unknown_name
from corix.assessment.harms import HarmPack
from corix.domain import Level

GroupKey = Literal["application", "scenario", "harm", "level"]
DEFAULT_GROUPING: tuple[GroupKey, ...] = ("application", "scenario", "harm", "level")


class IntervalMethod(StrEnum):
    WILSON = "wilson"
    BOOTSTRAP = "bootstrap"


class SeverityRow(BaseModel):
    """One annotated sample: its severity under one harm, or ``None`` if none was obtained."""

    application: str
    scenario: str
    harm: str
    level: Level | None = None
    severity: float | None


class DefectRate(BaseModel):
    """A defect rate for one group of samples.

    ``n`` counts samples with a severity; ``n_missing`` those without (e.g. an annotation
    that could not be parsed), which are left out of the rate. With ``n == 0`` the rate
    and its interval are ``None``.
    """

    group: dict[str, str | None]
    n: int
    defects: int
    n_missing: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    method: IntervalMethod
    confidence: float


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _check_counts(defects: int, n: int) -> None:
    if n < 1 or not 0 <= defects <= n:
        raise ValueError(f"need n >= 1 and 0 <= defects <= n, got {defects} of {n}")


def wilson_interval(defects: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for ``defects`` out of ``n``."""
    _check_counts(defects, n)
    z = _z(confidence)
    p = defects / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half_width = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # At 0 or n defects the bound is exactly 0 or 1; set it rather than keep rounding noise.
    low = 0.0 if defects == 0 else centre - half_width
    high = 1.0 if defects == n else centre + half_width
    return (low, high)


def bootstrap_interval(
    defects: int, n: int, confidence: float = 0.95, *, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """The percentile bootstrap interval for ``defects`` out of ``n``; same seed, same result."""
    _check_counts(defects, n)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    rng = np.random.default_rng(seed)
    rates = rng.binomial(n, defects / n, size=resamples) / n
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(rates, [tail, 100 - tail])
    return (float(low), float(high))


def defect_rates(
    rows: Iterable[SeverityRow],
    packs: Mapping[str, HarmPack],
    *,
    by: Sequence[GroupKey] = DEFAULT_GROUPING,
    method: IntervalMethod = IntervalMethod.WILSON,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> list[DefectRate]:
    """Defect rates per group of ``by`` keys, ordered by group; each row's ``harm`` picks its pack.

    The bootstrap uses the same ``seed`` for every group, so a group's interval does not
    depend on which other groups are present.
    """
    unknown_keys = [key for key in by if key not in DEFAULT_GROUPING]
    if unknown_keys:
        raise unknown_name("grouping key", unknown_keys[0], DEFAULT_GROUPING)
    _z(confidence)  # reject a bad confidence even when no group has samples
    tallies: defaultdict[tuple[str | None, ...], _Tally] = defaultdict(_Tally)
    for row in rows:
        pack = packs.get(row.harm)
        if pack is None:
            raise unknown_name("harm pack", row.harm, packs)
        tally = tallies[tuple(_group_value(row, key) for key in by)]
        if row.severity is None:
            tally.missing += 1
        else:
            tally.n += 1
            tally.defects += pack.is_defect(row.severity)
    ordered = sorted(tallies.items(), key=lambda item: _none_first(item[0]))
    return [
        _rate(dict(zip(by, group, strict=True)), tally, method, confidence, resamples, seed)
        for group, tally in ordered
    ]


@dataclass
class _Tally:
    n: int = 0
    defects: int = 0
    missing: int = 0


def _group_value(row: SeverityRow, key: GroupKey) -> str | None:
    value: str | None = getattr(row, key)
    return value


def _none_first(group: tuple[str | None, ...]) -> tuple[tuple[bool, str], ...]:
    return tuple((value is not None, value or "") for value in group)


def _rate(
    group: dict[str, str | None],
    tally: _Tally,
    method: IntervalMethod,
    confidence: float,
    resamples: int,
    seed: int,
) -> DefectRate:
    n, defects = tally.n, tally.defects
    interval: tuple[float | None, float | None] = (None, None)
    if n > 0:
        if method is IntervalMethod.WILSON:
            interval = wilson_interval(defects, n, confidence)
        else:
            interval = bootstrap_interval(defects, n, confidence, resamples=resamples, seed=seed)
    return DefectRate(
        group=group,
        n=n,
        defects=defects,
        n_missing=tally.missing,
        rate=defects / n if n else None,
        ci_low=interval[0],
        ci_high=interval[1],
        method=method,
        confidence=confidence,
    )
