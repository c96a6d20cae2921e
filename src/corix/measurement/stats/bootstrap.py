"""Cluster bootstrap: testers, or dialogues when each has its own tester.

The dialogue is the unit: every replicate draws dialogues with replacement within each
stratum (an application), so it has as many dialogues per stratum as the data. When
dialogues share a *tester* (the person, the persona instance or the script that produced
them), their outcomes are correlated, so the draw is of testers with replacement, each
drawn tester bringing all its own dialogues. Its dialogues are *not* drawn again within
it: the spread of the testers' totals already holds the within-tester variance, and a
second stage would count it twice (with no tester correlation, a testers → dialogues
bootstrap came out √2 too wide; Davison & Hinkley 1997, *Bootstrap Methods*, §3.8;
Field & Welsh 2007, JRSS-B 69:369). For the same reason the annotators of a dialogue are
not drawn again either: a drawn dialogue brings all its labels, and its value (its
annotators' mean) already carries their disagreement once. With one dialogue per tester
the tester stage is the dialogue stage, and the draws are exactly those without testers.
Draws follow *keys*, not positions: sorted dialogue keys per stratum and a random stream
per stratum derived from the seed and the stratum's name, so the same data gives the
same intervals on every rerun, in any row order.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from corix.measurement.stats.arrays import FloatArray, IntArray

MIN_TESTERS = 5
"""Below this many testers the spread between testers is too poorly known for an
interval over them to be trusted: outputs say so beside the interval."""

_MAX_CHUNK_CELLS = 1 << 21  # rows × replicates per chunk: 16 MiB of float64, a few copies live

__all__ = [
    "MIN_TESTERS",
    "Resample",
    "cluster_resamples",
    "expanded_percentile_interval",
    "few_testers_warning",
    "percentile_interval",
    "resampled_unit",
]


@dataclass(frozen=True)
class Resample:
    """One chunk of bootstrap replicates (columns).

    ``dialogues[d, r]``: how often dialogue ``d`` is drawn in replicate ``r``; a drawn
    dialogue brings every label and answer about it.
    """

    dialogues: FloatArray

    @property
    def size(self) -> int:
        return int(self.dialogues.shape[1])


def cluster_resamples(
    dialogue_keys: Sequence[str],
    n_resamples: int,
    seed: int,
    *,
    strata: Sequence[str] | None = None,
    testers: Sequence[str] | None = None,
) -> Iterator[Resample]:
    """Yield :class:`Resample` chunks until ``n_resamples`` replicates are drawn.

    ``dialogue_keys`` are distinct, stable names of the dialogues (a plan's work-item key,
    not a random session id); rows of every chunk follow their order. ``strata`` (one per
    dialogue, e.g. its application) keeps each stratum's dialogue count fixed; without
    it all dialogues form one stratum. ``testers`` (one per dialogue; "" for a dialogue
    of its own) makes the tester the unit: a stratum's testers are drawn with
    replacement, and a tester drawn ``c`` times brings each of its dialogues ``c`` times.

    The same keys, strata and seed give identical chunks, whatever their order.
    """
    if n_resamples < 0:
        raise ValueError(f"n_resamples must be ≥ 0, got {n_resamples}")
    if len(set(dialogue_keys)) != len(dialogue_keys):
        raise ValueError("dialogue keys must be distinct")
    stratum_of = list(strata) if strata is not None else [""] * len(dialogue_keys)
    if len(stratum_of) != len(dialogue_keys):
        raise ValueError("strata must give one stratum per dialogue")
    tester_of = list(testers) if testers is not None else [""] * len(dialogue_keys)
    if len(tester_of) != len(dialogue_keys):
        raise ValueError("testers must give one tester per dialogue")
    plan = _Plan.build(dialogue_keys, stratum_of, tester_of, seed)
    chunk = max(1, min(n_resamples, _MAX_CHUNK_CELLS // max(1, len(dialogue_keys))))
    done = 0
    while done < n_resamples:
        size = min(chunk, n_resamples - done)
        yield plan.draw(size)
        done += size


@dataclass
class _Stratum:
    """One stratum's rows and random stream (drawn replicate by replicate, so chunking
    never changes the draws)."""

    rng: np.random.Generator
    dialogues: IntArray  # row numbers, in key order
    # Each dialogue's tester number (in the order of ``dialogues``); None when every
    # tester has one dialogue (the draw is of dialogues).
    testers: int = 0
    tester_of: IntArray | None = None


@dataclass
class _Plan:
    n_dialogues: int
    strata: list[_Stratum]

    @classmethod
    def build(
        cls,
        keys: Sequence[str],
        stratum_of: Sequence[str],
        tester_of: Sequence[str],
        seed: int,
    ) -> _Plan:
        members: dict[str, list[int]] = {}
        for row in sorted(range(len(keys)), key=lambda r: keys[r]):
            members.setdefault(stratum_of[row], []).append(row)
        strata = []
        for name in sorted(members):
            # A stream per stratum: adding an application leaves the others' draws alone.
            rng = np.random.default_rng([seed, zlib.crc32(name.encode()), 0])
            stratum = _Stratum(rng, np.asarray(members[name], dtype=np.int64))
            _add_testers(stratum, members[name], keys, tester_of)
            strata.append(stratum)
        return cls(len(keys), strata)

    def draw(self, size: int) -> Resample:
        counts = np.zeros((self.n_dialogues, size))
        for stratum in self.strata:
            if stratum.tester_of is None:
                counts[stratum.dialogues] = _uniform_counts(
                    stratum.rng, len(stratum.dialogues), size
                ).T
            else:
                tester_draws = _uniform_counts(stratum.rng, stratum.testers, size)
                counts[stratum.dialogues] = tester_draws[:, stratum.tester_of].T
        return Resample(counts)


def _uniform_counts(rng: np.random.Generator, m: int, size: int) -> IntArray:
    """How often each of ``m`` items is drawn in ``m`` draws with replacement, per replicate
    (``size × m``)."""
    picks = rng.integers(0, m, size=(size, m)) + (np.arange(size) * m)[:, None]
    counts: IntArray = np.bincount(picks.ravel(), minlength=size * m).reshape(size, m)
    return counts


def _add_testers(
    stratum: _Stratum, rows: Sequence[int], keys: Sequence[str], tester_of: Sequence[str]
) -> None:
    """Set the stratum's tester draw when some tester has more than one dialogue.

    Testers are numbered in the order of their names, so draws follow keys, not row
    positions."""
    names = [tester_of[row] or f"\x00{keys[row]}" for row in rows]  # rows in key order
    if len(set(names)) == len(names):
        return
    order = {name: number for number, name in enumerate(sorted(set(names)))}
    stratum.testers = len(order)
    stratum.tester_of = np.asarray([order[name] for name in names], dtype=np.int64)


def few_testers_warning(testers: int) -> str | None:
    """The warning an interval over ``testers`` testers carries, if any."""
    if testers >= MIN_TESTERS:
        return None
    return (
        f"only {testers} tester{'s' if testers != 1 else ''} (fewer than {MIN_TESTERS}): "
        "the interval is not to be trusted"
    )


def resampled_unit(*, testers: bool) -> str:
    """What a bootstrap drew, for outputs to name."""
    return "testers" if testers else "dialogues"


def percentile_interval(replicates: FloatArray, confidence: float) -> tuple[FloatArray, FloatArray]:
    """Percentile interval per row of ``units × replicates``; NaN rows (never non-empty) stay NaN.

    Replicates in which a node was empty are left out.
    """
    tail = (1.0 - confidence) / 2 * 100
    low = np.full(replicates.shape[0], np.nan)
    high = np.full(replicates.shape[0], np.nan)
    observed = ~np.all(np.isnan(replicates), axis=1)
    if observed.any():
        low[observed], high[observed] = np.nanpercentile(
            replicates[observed], [tail, 100 - tail], axis=1
        )
    return low, high


def expanded_percentile_interval(
    replicates: FloatArray, confidence: float, clusters: int
) -> tuple[FloatArray, FloatArray]:
    """The *expanded* percentile interval (Hesterberg, 2015) over ``clusters`` top-stage
    units: the tails are taken at ``Φ(−√(k/(k−1))·t₍k−1₎)`` instead of ``(1−confidence)/2``.

    A bootstrap over k clusters understates a mean's variance by (k−1)/k and ignores that
    the spread itself is estimated; with a handful of testers the plain percentile
    interval under-covers badly. Expanding the levels corrects both as the t interval would.
    """
    from scipy import stats  # loaded on use: importing scipy costs about a second

    if clusters < 2:
        return percentile_interval(replicates, confidence)
    quantile = stats.t.ppf(0.5 + confidence / 2, clusters - 1)
    tail = float(stats.norm.cdf(-math.sqrt(clusters / (clusters - 1)) * quantile))
    return percentile_interval(replicates, 1 - 2 * tail)
