"""Questionnaire statistics against hand-derived values and SciPy as reference."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from scipy import stats

from corix.measurement import LeafError, LeafTable
from corix.measurement.questionnaire_stats import (
    compare_groups,
    describe_items,
    holm_adjust,
    questionnaire_items,
)

MakeLeaves = Callable[[Sequence[tuple[str, ...]]], LeafTable]

ANSWERS = {"X": [1, 2, 2, 3], "Y": [3, 4, 4, 5, 5], "Z": [2, 3, 5]}


@pytest.fixture
def answers(make_leaves: MakeLeaves) -> LeafTable:
    rows = [
        (app, "field_testing", "questionnaire", "q_helpful", f"{app}{i}", str(v))
        for app, values in ANSWERS.items()
        for i, v in enumerate(values)
    ]
    rows += [
        ("X", "red_teaming", "questionnaire", "q_helpful", "X9", "5"),
        ("X", "red_teaming", "questionnaire", "rt_strategies", "X9", "asked politely"),
        ("X", "field_testing", "annotation", "du_usefulness", "X0", "7"),
    ]
    return make_leaves(rows)


def test_descriptives_by_hand(answers: LeafTable) -> None:
    assert questionnaire_items(answers) == ("q_helpful",)  # text and annotations left out
    summaries = {(s.application, s.level): s for s in describe_items(answers)}
    x = summaries["X", "field_testing"]
    assert (x.n, x.mean, x.median, x.iqr) == (4, 2.0, 2.0, pytest.approx(0.5))
    assert x.sd == pytest.approx(math.sqrt(2 / 3))
    single = summaries["X", "red_teaming"]
    assert (single.n, single.mean, single.sd, single.iqr) == (1, 5.0, None, 0.0)
    assert summaries["Y", "field_testing"].median == 4.0
    assert len(summaries) == 4


def test_kruskal_and_mann_whitney_by_hand(make_leaves: MakeLeaves) -> None:
    rows = [("A", "field_testing", "questionnaire", "q", f"a{v}", str(v)) for v in (1, 2, 3)]
    rows += [("B", "field_testing", "questionnaire", "q", f"b{v}", str(v)) for v in (4, 5)]
    result = compare_groups(make_leaves(rows), "q", by="application")
    # Ranks: A 1+2+3 = 6, B 4+5 = 9; H = 12/(5·6)·(36/3 + 81/2) − 3·6 = 3.
    assert result.h == pytest.approx(3.0)
    assert result.epsilon_squared == pytest.approx(3.0 / 4)
    (pair,) = result.pairwise
    # A is below B everywhere: U_A = 0, r = −1; exact two-sided p = 2 / C(5, 2).
    assert (pair.first, pair.second, pair.u) == ("A", "B", 0.0)
    assert pair.rank_biserial == -1.0
    assert pair.p_value == pytest.approx(0.2)
    assert pair.p_adjusted == pytest.approx(0.2)  # one comparison: nothing to correct


def test_group_tests_match_scipy(answers: LeafTable) -> None:
    result = compare_groups(
        answers, "q_helpful", by="application", where={"level": "field_testing"}
    )
    assert result.groups == ("X", "Y", "Z")
    assert result.sizes == (4, 5, 3)
    reference = stats.kruskal(*ANSWERS.values())
    assert result.h == pytest.approx(reference.statistic)
    assert result.p_value == pytest.approx(reference.pvalue)
    assert result.epsilon_squared == pytest.approx(reference.statistic / (12 - 1))
    raw = []
    for pair in result.pairwise:
        expected = stats.mannwhitneyu(ANSWERS[pair.first], ANSWERS[pair.second])
        assert pair.u == pytest.approx(expected.statistic)
        assert pair.p_value == pytest.approx(expected.pvalue)
        n = len(ANSWERS[pair.first]) * len(ANSWERS[pair.second])
        assert pair.rank_biserial == pytest.approx(2 * expected.statistic / n - 1)
        raw.append(expected.pvalue)
    np.testing.assert_allclose([p.p_adjusted for p in result.pairwise], holm_adjust(raw))
    bh = compare_groups(answers, "q_helpful", by="application", correction="bh",
                        where={"level": "field_testing"})  # fmt: skip
    np.testing.assert_allclose(
        [p.p_adjusted for p in bh.pairwise], stats.false_discovery_control(raw)
    )


def test_between_levels(answers: LeafTable) -> None:
    result = compare_groups(answers, "q_helpful", by="level", where={"application": "X"})
    assert result.groups == ("field_testing", "red_teaming")
    assert result.sizes == (4, 1)
    assert result.pairwise[0].u == 0.0  # 5 is above every field-testing answer


def test_identical_answers_leave_kruskal_undefined(make_leaves: MakeLeaves) -> None:
    rows = [(app, "field_testing", "questionnaire", "q", f"{app}{i}", "3")
            for app in "AB" for i in range(3)]  # fmt: skip
    result = compare_groups(make_leaves(rows), "q", by="application")
    assert (result.h, result.p_value, result.epsilon_squared) == (None, None, None)
    assert result.pairwise[0].p_value == pytest.approx(1.0)


def test_holm_by_hand() -> None:
    # Sorted 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → kept monotone 0.06.
    np.testing.assert_allclose(holm_adjust([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(holm_adjust([0.5, 0.6]), [1.0, 1.0])
    assert holm_adjust([]).shape == (0,)


def test_non_numeric_answer_names_the_row(make_leaves: MakeLeaves) -> None:
    leaves = make_leaves(
        [
            ("A", "field_testing", "questionnaire", "q", "a1", "3"),
            ("A", "field_testing", "questionnaire", "q", "a2", "three"),
        ]
    )
    with pytest.raises(LeafError, match="row 2: item 'q' answer 'three' is not a number"):
        compare_groups(leaves, "q", by="application")
    with pytest.raises(ValueError, match="cannot filter on 'question'"):
        compare_groups(leaves, "q", by="application", where={"question": "q"})
