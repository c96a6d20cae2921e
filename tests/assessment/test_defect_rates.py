"""Defect rates and their intervals, against hand-derived values."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from corix.assessment import (
    DefectRate,
    HarmPack,
    IntervalMethod,
    SeverityRow,
    bootstrap_interval,
    builtin_harm_packs,
    defect_rates,
    wilson_interval,
)
from corix.domain import Level
from corix.errors import UnknownNameError

Z95 = 1.959963984540054


def test_wilson_two_of_ten_by_hand() -> None:
    # p = 0.2, z² = 3.841459, n = 10
    # denominator = 1 + z²/n = 1.3841459
    # centre = (0.2 + z²/20) / 1.3841459 = 0.3920729 / 1.3841459 = 0.2832598
    # half = z / 1.3841459 * sqrt(0.2 * 0.8 / 10 + z² / 400)
    #      = 1.4160090 * sqrt(0.016 + 0.0096036) = 1.4160090 * 0.1600114 = 0.2265776
    # interval = (0.0566822, 0.5098374)
    low, high = wilson_interval(2, 10)
    assert low == pytest.approx(0.0566822, abs=1e-6)
    assert high == pytest.approx(0.5098374, abs=1e-6)


def test_wilson_at_the_edges_by_hand() -> None:
    # 0 of 10: centre = half = (z²/20) / 1.3841459 = 0.1387664, so (0, 0.2775328).
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775328), abs=1e-6)
    # n of n mirrors 0 of n.
    assert wilson_interval(10, 10) == pytest.approx((1 - 0.2775328, 1.0), abs=1e-6)
    # 1 of 1: centre = (1 + z²/2) / (1 + z²) ; half = z / (1 + z²) * sqrt(z² / 4)
    centre = (1 + Z95**2 / 2) / (1 + Z95**2)
    half = Z95 / (1 + Z95**2) * Z95 / 2
    assert wilson_interval(1, 1) == pytest.approx((centre - half, 1.0))


def test_wilson_confidence_changes_the_width() -> None:
    # 90% uses z = 1.644854: half = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²) for 50 of 100
    z = 1.6448536
    half = z / (1 + z * z / 100) * math.sqrt(0.25 / 100 + z * z / 40000)
    assert wilson_interval(50, 100, confidence=0.90) == pytest.approx((0.5 - half, 0.5 + half))


def test_interval_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    with pytest.raises(ValueError):
        bootstrap_interval(0, 0)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 2, confidence=1.0)


def test_bootstrap_is_seeded_and_matches_explicit_resampling() -> None:
    assert bootstrap_interval(30, 100, seed=7) == bootstrap_interval(30, 100, seed=7)
    low, high = bootstrap_interval(30, 100, resamples=20000, seed=1)
    # Resample the 100 outcomes themselves, as the textbook bootstrap does.
    outcomes = np.array([1] * 30 + [0] * 70)
    rng = np.random.default_rng(2)
    rates = rng.choice(outcomes, size=(20000, 100), replace=True).mean(axis=1)
    ref_low, ref_high = np.percentile(rates, [2.5, 97.5])
    assert low == pytest.approx(ref_low, abs=0.011)
    assert high == pytest.approx(ref_high, abs=0.011)
    assert low < 0.3 < high


def test_bootstrap_collapses_with_no_defects() -> None:
    assert bootstrap_interval(0, 25) == (0.0, 0.0)


def _row(app: str, harm: str, severity: float | None, level: Level | None = None) -> SeverityRow:
    return SeverityRow(application=app, scenario="s", harm=harm, level=level, severity=severity)


@pytest.fixture(scope="module")
def packs() -> dict[str, HarmPack]:
    return builtin_harm_packs()


def test_rates_per_group_with_counts(packs: dict[str, HarmPack]) -> None:
    rows = [
        _row("app1", "jailbreak", 0),
        _row("app1", "jailbreak", 4),  # defect: >= 4
        _row("app1", "jailbreak", 7),  # defect
        _row("app1", "jailbreak", None),  # not parsed: counted apart
        _row("app1", "groundedness", 3),  # defect: <= 3
        _row("app1", "groundedness", 5),
        _row("app2", "jailbreak", None),
    ]
    rates = defect_rates(rows, packs, by=["application", "harm"])
    summary = [(r.group, r.n, r.defects, r.n_missing, r.rate) for r in rates]
    assert summary == [
        ({"application": "app1", "harm": "groundedness"}, 2, 1, 0, 0.5),
        ({"application": "app1", "harm": "jailbreak"}, 3, 2, 1, pytest.approx(2 / 3)),
        ({"application": "app2", "harm": "jailbreak"}, 0, 0, 1, None),
    ]
    assert (rates[1].ci_low, rates[1].ci_high) == wilson_interval(2, 3)
    assert (rates[2].ci_low, rates[2].ci_high) == (None, None)
    assert all(r.method is IntervalMethod.WILSON for r in rates)


def test_default_grouping_includes_scenario_and_level(packs: dict[str, HarmPack]) -> None:
    rows = [
        _row("app", "ip_leakage", 5, Level.RED_TEAMING),
        _row("app", "ip_leakage", 1, None),
    ]
    groups = [r.group for r in defect_rates(rows, packs)]
    assert groups == [
        {"application": "app", "scenario": "s", "harm": "ip_leakage", "level": None},
        {"application": "app", "scenario": "s", "harm": "ip_leakage", "level": "red_teaming"},
    ]


def test_bootstrap_rates_are_reproducible_and_serializable(packs: dict[str, HarmPack]) -> None:
    rows = [_row("app", "harmful_content", s) for s in (0, 1, 5, 6, 2, 4, 0, 0)]
    first = defect_rates(rows, packs, by=["harm"], method=IntervalMethod.BOOTSTRAP, seed=3)
    second = defect_rates(rows, packs, by=["harm"], method=IntervalMethod.BOOTSTRAP, seed=3)
    assert first == second
    assert first[0].rate == 3 / 8
    assert (first[0].ci_low, first[0].ci_high) == bootstrap_interval(3, 8, seed=3)
    restored = DefectRate.model_validate(json.loads(first[0].model_dump_json()))
    assert restored == first[0]


def test_unknown_harm_or_grouping_key(packs: dict[str, HarmPack]) -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'jailbreak'"):
        defect_rates([_row("app", "jailbrake", 1)], packs)
    with pytest.raises(UnknownNameError, match="grouping key 'model'"):
        defect_rates([], packs, by=["model"])  # type: ignore[list-item]


def test_severity_off_the_scale_is_not_silently_counted(packs: dict[str, HarmPack]) -> None:
    with pytest.raises(ValueError, match="outside"):
        defect_rates([_row("app", "groundedness", 0)], packs)
