"""The tester stage of the bootstrap: testers, then dialogues within testers."""

from __future__ import annotations

import numpy as np
import pytest

from corix.measurement.bootstrap import two_stage_resamples
from corix.measurement.defect_rates import (
    WILSON,
    DialogueLabels,
    rate_interval,
    wilson_cc_bounds,
)

KEYS = [f"d{i}" for i in range(1, 6)]


def test_one_dialogue_per_tester_draws_exactly_as_without_testers() -> None:
    plain = next(two_stage_resamples(KEYS, 200, seed=4))
    tested = next(two_stage_resamples(KEYS, 200, seed=4, testers=["t1", "t2", "t3", "t4", "t5"]))
    np.testing.assert_array_equal(plain.dialogues, tested.dialogues)


def test_a_testers_dialogues_are_drawn_only_with_the_tester() -> None:
    testers = ["a", "a", "b", "b", "b"]
    counts = next(two_stage_resamples(KEYS, 500, seed=1, testers=testers)).dialogues
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
            for chunk in two_stage_resamples(
                keys, 8000, seed=2, testers=[key.split("-")[0] for key in keys]
            )
        ],
        axis=1,
    )
    replicates = values @ counts / counts.sum(axis=0)
    expected = np.mean((means - means.mean()) ** 2) / len(means)
    assert np.var(replicates) == pytest.approx(expected, rel=0.05)


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
    assert method.startswith("bootstrap over testers → dialogues,")
    # Three of one tester's dialogues hold three of the four defects: wider than Wilson.
    assert (
        high - low > wilson_cc_bounds(4 / 12, 12, 0.95)[1] - wilson_cc_bounds(4 / 12, 12, 0.95)[0]
    )
