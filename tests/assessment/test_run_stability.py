"""Consensus, flip rate and the adaptive stop over repeated annotation runs."""

from __future__ import annotations

import pytest

from corix.assessment import (
    Answer,
    builtin_harm_packs,
    consensus,
    is_settled,
    load_builtin_schema,
    stability_report,
)
from corix.assessment.annotation_run._repeat_consensus import consensus_rows, settled_violation
from corix.assessment.risk_orders import RiskOrders


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
