"""Consensus, flip rate and the adaptive stop over repeated annotation runs."""

from __future__ import annotations

import itertools
import math
import random

import pytest
import scipy.stats

from corix.assessment import (
    DEFAULT_RULE,
    SETTLING_RULES,
    RiskOrder,
    builtin_harm_packs,
    consensus,
    load_builtin_schema,
)
from corix.assessment.annotation_run.repeat_consensus import consensus_rows, settled_violation
from corix.assessment.answers import Answer
from corix.assessment.risk_orders import RiskOrders
from corix.assessment.stability import JudgeNoise, change_probability, is_settled, stability_report


def test_majority_and_flip_rate() -> None:
    result = consensus(["yes", "no", "yes"])
    assert (result.value, result.n_agreeing, result.tie) == ("yes", 2, False)
    assert result.flip_rate == pytest.approx(1 / 3)  # one run of three disagrees


@pytest.mark.parametrize("runs", [["yes", "no"], ["no", "yes"]])
def test_nominal_tie_is_broken_by_sort_order_and_reported(runs: list[str]) -> None:
    result = consensus(runs)
    assert result.value == "no"  # smallest tied value, whatever order the runs came in
    assert result.tie
    assert result.tied_values == ("no", "yes")
    assert result.flip_rate == 0.5


def test_ordinal_consensus_is_the_lower_median() -> None:
    # 1, 2, 3, 5: the middle values are 2 and 3; the lower one is the consensus, a tie.
    result = consensus([3, 1, 2, 5], ordinal=True)
    assert (result.value, result.tie, result.tied_values) == (2, True, (2, 3))
    assert result.flip_rate == 0.75  # only one run of four said 2
    odd = consensus([6, 4, 4], ordinal=True)
    assert (odd.value, odd.tie) == (4, False)
    assert odd.flip_rate == pytest.approx(1 / 3)


def test_ordinal_values_must_be_numbers() -> None:
    with pytest.raises(ValueError, match="must be numbers"):
        consensus(["high", "low"], ordinal=True)
    with pytest.raises(ValueError, match="at least one run"):
        consensus([])


def test_stability_report_over_items() -> None:
    report = stability_report({"b": ["yes", "yes"], "a": ["yes", "no"], "c": []})
    assert list(report.items) == ["a", "b"]  # sorted; items without runs are left out
    assert (report.n_items, report.n_ties, report.n_unanimous) == (2, 1, 1)
    assert report.mean_flip_rate == 0.25  # (0.5 + 0) / 2
    assert stability_report({}).mean_flip_rate is None


@pytest.mark.parametrize(
    ("runs", "expected"),
    [
        (["yes", "yes"], False),  # fewer than min_runs
        (["yes", "yes", "yes"], True),  # unanimous after min_runs
        (["yes", "yes", "no"], False),  # 2 vs 1 with 2 runs left: could still flip
        (["yes", "yes", "yes", "no"], True),  # 3 vs 1 with 1 run left: cannot be overtaken
        (["yes", "no", "yes", "no", "no"], True),  # max_runs reached
    ],
)
def test_nominal_adaptive_stop(runs: list[str], expected: bool) -> None:
    assert is_settled(runs, min_runs=3, max_runs=5) is expected


def test_agreement_share_stops_early_but_never_on_a_tie() -> None:
    assert is_settled(["a", "a", "a", "b"], min_runs=3, max_runs=9, agreement=0.75)
    assert not is_settled(["a", "a", "a", "b"], min_runs=3, max_runs=9, agreement=0.8)
    assert not is_settled(["a", "b", "a", "b"], min_runs=3, max_runs=9, agreement=0.51)


@pytest.mark.parametrize(
    ("runs", "expected"),
    [
        ([3, 3, 3], True),
        # With one run left the five-run lower median of 2,3,3,4,x is 3 for any x.
        ([2, 3, 3, 4], True),
        # With two runs left: -inf twice gives 1, +inf twice gives 5.
        ([1, 5, 3], False),
    ],
)
def test_ordinal_adaptive_stop(runs: list[float], expected: bool) -> None:
    assert is_settled(runs, min_runs=3, max_runs=5, ordinal=True) is expected


def test_adaptive_stop_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="min_runs"):
        is_settled([], min_runs=4, max_runs=3)
    with pytest.raises(ValueError, match="agreement"):
        is_settled([], min_runs=1, max_runs=3, agreement=0.5)


def _screening(released: str) -> tuple[Answer, ...]:
    return (
        Answer(question_id="ra_prohibited_released", value=released),
        Answer(question_id="ra_permitted_withheld", value="no"),
    )


@pytest.mark.parametrize(
    ("released", "violation"),
    [
        (["yes", "no"], True),  # a tie goes toward the violation, so the follow-ups are asked
        (["no", "yes", "no"], False),
        (["yes", "yes", "no"], True),
        ([], False),
    ],
)
def test_annotation_gates_on_the_settled_violation(released: list[str], violation: bool) -> None:
    runs = [_screening(value) for value in released]
    assert settled_violation(load_builtin_schema(), runs) is violation


def test_stored_consensus_breaks_ties_toward_risk() -> None:
    """Severity ties go to the pack's defect side: up for harmful content, down for
    groundedness (a low score is the defect)."""
    schema = load_builtin_schema()
    orders = RiskOrders(schema, builtin_harm_packs())
    runs = [(Answer(question_id="severity", value=v),) for v in (2.0, 4.0)]
    harmful = consensus_rows("s", "harm:harmful_content", "llm", runs, orders)
    grounded = consensus_rows("s", "harm:groundedness", "llm", runs, orders)
    assert [(r.value, r.method) for r in harmful] == [(4.0, "conservative_tie")]
    assert [(r.value, r.method) for r in grounded] == [(2.0, "conservative_tie")]


def test_change_probability_matches_a_hand_derivation() -> None:
    # One "yes" so far, three runs in all, noise e: the majority of three changes only if
    # both runs to come say "no". With a = e/2 (a random run's chance of each value), the
    # answer is "yes" with posterior weight (1 - a) against a for "no", so
    # P(change) = (1 - a)·a² + a·(1 - a)² = a(1 - a): 0.16 at e = 0.4.
    order = RiskOrder(ordinal=False)
    found = change_probability(["yes"], max_runs=3, scale=("no", "yes"), noise=0.4, order=order)
    assert found == pytest.approx(0.2 * 0.8)
    settled = change_probability(
        ["yes", "yes"], max_runs=3, scale=("no", "yes"), noise=0.4, order=order
    )
    assert settled == 0.0  # two of three already: nothing can change the majority


def _brute_force_change(values: list[float], max_runs: int, noise: float) -> float:
    """The same probability by every ordered sequence of future runs (no multisets)."""
    scale = (0.0, 1.0, 2.0, 3.0)
    order = RiskOrder(ordinal=True)
    settle = SETTLING_RULES.get(DEFAULT_RULE).settle
    now = settle(values, order).value

    def p(value: float, answer: float) -> float:
        return (1 - noise) * (value == answer) + noise / len(scale)

    prior = {a: math.prod(p(v, a) for v in values) for a in scale}
    changed = sum(
        weight * math.prod(p(v, a) for v in future)
        for future in itertools.product(scale, repeat=max_runs - len(values))
        if settle([*values, *future], order).value != now
        for a, weight in prior.items()
    )
    return changed / sum(prior.values())


@pytest.mark.parametrize("values", [[2.0, 2.0], [0.0, 3.0], [1.0, 2.0, 2.0], [3.0]])
def test_change_probability_weighs_every_future_once(values: list[float]) -> None:
    found = change_probability(
        values, max_runs=5, scale=(0.0, 1.0, 2.0, 3.0), noise=0.3, order=RiskOrder(ordinal=True)
    )
    assert found == pytest.approx(_brute_force_change(values, 5, 0.3))


def test_change_probability_declines_what_it_cannot_weigh() -> None:
    order = RiskOrder(ordinal=True)
    wide = tuple(float(v) for v in range(100))
    assert change_probability([1.0], max_runs=20, scale=wide, noise=0.4, order=order) is None
    assert change_probability([9.0], max_runs=3, scale=(0.0, 1.0), noise=0.4, order=order) is None
    with pytest.raises(ValueError, match="noise"):
        change_probability([1.0], max_runs=3, scale=(0.0, 1.0), noise=0.0, order=order)


@pytest.mark.parametrize("noise", [0.1, 0.4])
def test_stopping_at_the_bound_keeps_the_full_answer(noise: float) -> None:
    """A simulated judge of the rule's own model (answer uniform on 0–7, a share ``noise``
    of runs random): stopping once the change probability is at most 0.05 keeps the label
    of all five runs on at least 95% of items (the bound), here well above, for fewer runs."""
    rng = random.Random(7)
    scale = tuple(float(v) for v in range(8))
    order = RiskOrder(ordinal=True)
    settle = SETTLING_RULES.get(DEFAULT_RULE).settle
    same = runs_used = 0
    items = 600
    for _ in range(items):
        answer = rng.choice(scale)
        runs = [answer if rng.random() >= noise else rng.choice(scale) for _ in range(5)]
        n = 2
        while (
            change_probability(runs[:n], max_runs=5, scale=scale, noise=0.4, order=order) or 0.0
        ) > 0.05:
            n += 1
        runs_used += n
        same += settle(runs[:n], order).value == settle(runs, order).value
    assert same / items >= 0.95
    assert runs_used / (5 * items) < 0.8


def test_judge_noise_is_assumed_until_measured_then_bounded_from_above() -> None:
    noise = JudgeNoise(assumed=0.4, min_pairs=30)
    for _ in range(29):
        noise.add_pair(1.0, 1.0, scale_size=8)
    assert noise.bound() == 0.4  # 29 pairs: still the assumption
    # ε = 0.3 on a scale of 8: pairs differ with probability 0.3 · 1.7 · 0.875 = 0.44625.
    noise = JudgeNoise(assumed=0.4)
    for i in range(1000):
        noise.add_pair(1.0, 2.0 if i < 446 else 1.0, scale_size=8)
    upper = scipy.stats.binomtest(446, 1000).proportion_ci(0.95, method="wilson").high
    expected = 1 - math.sqrt(1 - upper / 0.875)  # solves ε(2 − ε) · 0.875 = upper
    assert noise.bound() == pytest.approx(expected)
    assert 0.3 < noise.bound() < 0.34
