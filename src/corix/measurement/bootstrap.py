"""Cluster bootstrap: resample dialogues (all of a dialogue's leaves move together).

Dialogues are resampled with replacement within each application, so every replicate
has as many dialogues per application as the data. Replicates are produced in chunks
to bound memory: a chunk is a (dialogues × replicates) matrix of draw counts.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from corix.measurement.leaves import IntArray
from corix.measurement.summarizers import FloatArray

_MAX_CHUNK_CELLS = 1 << 23  # dialogues × replicates per chunk: 64 MiB of float64


def cluster_resamples(
    dialogue_unit: IntArray, replicates: int, rng: np.random.Generator
) -> Iterator[FloatArray]:
    """Yield draw-count matrices (dialogues × replicates in chunk) until ``replicates``."""
    n_dialogues = len(dialogue_unit)
    members = [np.flatnonzero(dialogue_unit == unit) for unit in np.unique(dialogue_unit)]
    chunk = max(1, min(replicates, _MAX_CHUNK_CELLS // max(1, n_dialogues)))
    done = 0
    while done < replicates:
        size = min(chunk, replicates - done)
        counts = np.zeros((n_dialogues, size))
        for dialogues in members:
            m = len(dialogues)
            draws = rng.integers(0, m, size=(size, m)) + (np.arange(size) * m)[:, None]
            drawn = np.bincount(draws.ravel(), minlength=size * m).reshape(size, m)
            counts[dialogues] = drawn.T
        yield counts
        done += size


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
