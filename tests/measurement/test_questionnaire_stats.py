"""Questionnaire statistics against hand-derived values and SciPy as reference."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from scipy import stats

from corix.measurement import LeafTable
from corix.measurement.questionnaires.item_statistics import (
    compare_groups,
    describe_items,
    holm_adjust,
    item_key,
    questionnaire_items,
)
from corix.measurement.questionnaires.wording import item_wordings
from corix.measurement.trees.leaves import LeafError
from corix.scenarios import resolve_pack

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


def questionnaire(rows: Sequence[tuple[str, str, str, str, float]]) -> LeafTable:
    """Rows of (application, tester, item, wording, answer) in field testing."""
    return LeafTable.from_columns(
        application=[r[0] for r in rows],
        level=["field_testing"] * len(rows),
        source=["questionnaire"] * len(rows),
        question=[r[2] for r in rows],
        dialogue_id=[f"s{i}" for i in range(len(rows))],
        annotator=[r[1] for r in rows],
        wording=[r[3] for r in rows],
        value=np.array([r[4] for r in rows], dtype=float),
    )


def test_differently_worded_items_are_never_pooled() -> None:
    leaves = questionnaire(
        [
            ("A", "t1", "q_guardrail", "Did it respect your diet?", 2),
            ("B", "t2", "q_guardrail", "Did it respect your diet?", 3),
            ("A", "t1", "q_guardrail", "Did it keep the plot secret?", 5),
            ("A", "t3", "q_helpful", "Was it helpful?", 4),
        ]
    )
    diet = item_key("q_guardrail", "Did it respect your diet?", reworded=True)
    plot = item_key("q_guardrail", "Did it keep the plot secret?", reworded=True)
    assert diet != plot and diet.startswith("q_guardrail~")
    assert questionnaire_items(leaves) == tuple(sorted([diet, plot, "q_helpful"]))
    summaries = {(s.item, s.application): s for s in describe_items(leaves)}
    assert (summaries[diet, "A"].n, summaries[diet, "A"].mean) == (1, 2.0)
    assert (summaries[plot, "A"].n, summaries[plot, "A"].mean) == (1, 5.0)
    assert summaries[plot, "A"].wording == "Did it keep the plot secret?"
    comparison = compare_groups(leaves, diet, by="application")
    assert (comparison.sizes, comparison.wording) == ((1, 1), "Did it respect your diet?")


def test_stored_leaves_take_the_wording_from_the_scenario_pack() -> None:
    journey = item_wordings(resolve_pack("pathfinder"))
    meals = item_wordings(resolve_pack("meal_planner"))
    assert journey["field_testing", "q_helpful"] == "The assistant helped me plan my journey."
    assert (
        meals["field_testing", "q_helpful"]
        == "The assistant helped me plan meals for my household."
    )
    assert ("field_testing", "q_nothing") not in journey


def test_groups_are_compared_on_tester_means() -> None:
    # Tester t1 answered three sessions of A: 1, 2, 3 → mean 2; t2 answered 4 → 4.
    # B's testers t3 (5, 5) → 5 and t4 (3) → 3.
    leaves = questionnaire(
        [
            ("A", "t1", "q", "", 1),
            ("A", "t1", "q", "", 2),
            ("A", "t1", "q", "", 3),
            ("A", "t2", "q", "", 4),
            ("B", "t3", "q", "", 5),
            ("B", "t3", "q", "", 5),
            ("B", "t4", "q", "", 3),
        ]
    )
    result = compare_groups(leaves, "q", by="application")
    assert (result.sizes, result.answers) == ((2, 2), (4, 3))
    assert "tester means" in result.method
    reference = stats.mannwhitneyu([2.0, 4.0], [5.0, 3.0], alternative="two-sided")
    assert result.pairwise[0].u == pytest.approx(float(reference.statistic))
    assert result.pairwise[0].p_value == pytest.approx(float(reference.pvalue))
    assert result.h == pytest.approx(float(stats.kruskal([2.0, 4.0], [5.0, 3.0]).statistic))


def test_false_positive_rate_is_near_nominal_with_testers_nested_in_applications() -> None:
    """No application differs; each tester has a lasting leaning and answers 4 sessions.

    Testing answers as independent
    (SciPy on the raw answers) rejects far too often; tester means keep the nominal 5 %.
    """
    rng = np.random.default_rng(11)
    simulations, testers, sessions = 2000, 8, 4
    leaning = rng.normal(0, 1, size=(simulations, 2, testers, 1))
    latent = 3 + leaning + rng.normal(0, 1, size=(simulations, 2, testers, sessions))
    likert = np.clip(np.rint(latent), 1, 5)
    app, tester, _ = np.indices(likert.shape[1:]).reshape(3, -1)
    n = app.size

    def p_value(answers: np.ndarray) -> float | None:
        leaves = LeafTable.from_columns(
            application=np.where(app == 0, "A", "B"),
            level=np.full(n, "field_testing"),
            source=np.full(n, "questionnaire"),
            question=np.full(n, "q_helpful"),
            dialogue_id=np.arange(n).astype(str),
            annotator=np.char.add(np.where(app == 0, "a", "b"), tester.astype(str)),
            value=answers.ravel(),
        )
        return compare_groups(leaves, "q_helpful", by="application").p_value

    p_testers = np.array([p_value(likert[i]) for i in range(simulations)], dtype=float)
    p_answers = np.array(
        [
            stats.kruskal(likert[i, 0].ravel(), likert[i, 1].ravel()).pvalue
            for i in range(simulations)
        ]
    )
    rate_testers = float(np.mean(p_testers < 0.05))
    rate_answers = float(np.mean(p_answers < 0.05))
    print(f"false-positive rate: tester means {rate_testers:.3f}, raw answers {rate_answers:.3f}")
    assert 0.03 <= rate_testers <= 0.07
    assert rate_answers > 0.10
