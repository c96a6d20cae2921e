"""The tester stage of the bootstrap: testers drawn whole, their dialogues not drawn again."""

from __future__ import annotations

import numpy as np
import pytest

from corix.measurement.defect_rates import WILSON, DialogueLabels, rate_interval
from corix.measurement.stats.bootstrap import cluster_resamples
from corix.measurement.stats.wilson import wilson_cc_bounds

KEYS = [f"d{i}" for i in range(1, 6)]


def test_one_dialogue_per_tester_draws_exactly_as_without_testers() -> None:
    plain = next(cluster_resamples(KEYS, 200, seed=4))
    tested = next(cluster_resamples(KEYS, 200, seed=4, testers=["t1", "t2", "t3", "t4", "t5"]))
    np.testing.assert_array_equal(plain.dialogues, tested.dialogues)


def test_a_testers_dialogues_are_drawn_only_with_the_tester() -> None:
    testers = ["a", "a", "b", "b", "b"]
    counts = next(cluster_resamples(KEYS, 500, seed=1, testers=testers)).dialogues
    a, b = counts[:2].sum(axis=0), counts[2:].sum(axis=0)
    # Each drawn copy of a tester brings as many dialogue draws as it has dialogues.
    assert set(np.unique(a)) <= {0, 2, 4} and set(np.unique(b)) <= {0, 3, 6}
    np.testing.assert_array_equal(a / 2 + b / 3, 2)  # two testers drawn per replicate
    assert (a == 0).any() and (b == 0).any()


def test_the_tester_stage_reproduces_the_bootstrap_of_tester_means() -> None:
    """Dialogues of a tester that all agree: the bootstrap of the overall mean is the
    bootstrap of k tester means, whose variance is (1/k)·(1/k)Σ(ȳ_t − ȳ)² by hand."""
    means = np.array([0.0, 0.2, 0.5, 0.9])
    keys = [f"{t}-{d}" for t in range(4) for d in range(3)]
    values = np.repeat(means, 3)
    counts = np.concatenate(
        [
            chunk.dialogues
            for chunk in cluster_resamples(
                keys, 8000, seed=2, testers=[key.split("-")[0] for key in keys]
            )
        ],
        axis=1,
    )
    replicates = values @ counts / counts.sum(axis=0)
    expected = np.mean((means - means.mean()) ** 2) / len(means)
    assert np.var(replicates) == pytest.approx(expected, rel=0.05)


def test_a_drawn_tester_brings_each_of_its_dialogues_once_per_draw() -> None:
    """No second stage: dialogues of one tester are drawn exactly as often as it is."""
    testers = ["a", "a", "b", "b", "b"]
    counts = next(cluster_resamples(KEYS, 300, seed=3, testers=testers)).dialogues
    np.testing.assert_array_equal(counts[0], counts[1])
    np.testing.assert_array_equal(counts[2], counts[4])


def test_no_tester_correlation_gives_the_independent_variance() -> None:
    """The double-counting check: 40 testers × 5 dialogues of fixed values with no tester
    structure. The bootstrap variance over testers is the cluster (CR0) variance
    Σ_g (T_g − ȳ·m)² / N², by hand; it is the dialogues' variance σ²/N within its
    sampling error, not twice it as a testers → dialogues bootstrap would give."""
    rng = np.random.default_rng(5)
    values = (rng.random(200) < 0.3).astype(float)
    keys = [f"d{i:03d}" for i in range(200)]
    testers = [f"t{i // 5:02d}" for i in range(200)]
    counts = np.concatenate(
        [c.dialogues for c in cluster_resamples(keys, 20000, seed=1, testers=testers)], axis=1
    )
    replicates = values @ counts / counts.sum(axis=0)
    totals = values.reshape(40, 5).sum(axis=1)
    cr0 = float(((totals - values.mean() * 5) ** 2).sum() / 200**2)
    assert np.var(replicates) == pytest.approx(cr0, rel=0.04)
    independent = values.var() / 200
    assert 0.7 < cr0 / independent < 1.3  # the 40 testers' own sampling error, not 2×


def test_a_rate_names_the_stages_it_resampled() -> None:
    keys = [f"d{i:02d}" for i in range(12)]
    values = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    labels = [(key, "judge", value) for key, value in zip(keys, values, strict=True)]
    alone = DialogueLabels(keys, values, labels, testers=[f"t{i}" for i in range(12)])
    assert rate_interval(alone, confidence=0.95, resamples=300, seed=0) == (
        *wilson_cc_bounds(4 / 12, 12, 0.95),
        WILSON,
    )
    clustered = DialogueLabels(keys, values, labels, testers=[f"t{i // 3}" for i in range(12)])
    low, high, method = rate_interval(clustered, confidence=0.95, resamples=300, seed=0)
    assert method == (
        "bootstrap over testers (k = 4, variance × k/(k−1)), corrected Wilson at the effective n"
    )
    # Three of one tester's dialogues hold three of the four defects: wider than Wilson.
    assert (
        high - low > wilson_cc_bounds(4 / 12, 12, 0.95)[1] - wilson_cc_bounds(4 / 12, 12, 0.95)[0]
    )
