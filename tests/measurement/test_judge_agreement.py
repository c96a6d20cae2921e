"""How far the LLM judge agrees with people, beside its rates: κ by hand, and whom it names."""

from __future__ import annotations

import random

import pytest

from corix.measurement import GUARDRAIL_VIOLATION, measure
from corix.measurement.judges.agreement import MIN_KAPPA, cohen_kappa, judge_agreements
from corix.storage import Database
from support.testers_run import write_judge_against_people_run


def _verdicts(people: str, judge: str, other: str = "human") -> dict[str, dict[str, float]]:
    return {
        f"d{i}": {other: float(p == "y"), "llm": float(j == "y")}
        for i, (p, j) in enumerate(zip(people, judge, strict=True))
    }


def test_kappa_by_hand_and_the_warning_below_the_floor() -> None:
    # yes/yes 1, judge-only 2, people-only 2, no/no 1: p_o = 1/3, p_e = 1/2, κ = −1/3
    (low,) = judge_agreements(["h"], lambda harm: _verdicts("yyynnn", "ynnyyn"))
    assert low.kappa == pytest.approx(-1 / 3) and low.low and low.n == 6
    assert low.against == "human" and "under 0.4: its rates are not people's" in low.sentence()
    # 3 of 4 agree; p_e = (2/4)(1/4) + (2/4)(3/4) = 1/2, κ = (3/4 − 1/2)/(1/2) = 1/2
    (fair,) = judge_agreements(["h"], lambda harm: _verdicts("ynnn", "yynn"))
    assert fair.kappa == pytest.approx(0.5) and not fair.low and MIN_KAPPA == 0.4
    assert "Cohen's κ (unweighted) 0.50 with people over 4 dialogues" in fair.sentence()
    assert "not people's" not in fair.sentence()


def test_the_reference_annotator_is_named_as_such_and_nobody_is_a_warning() -> None:
    (ruled,) = judge_agreements(["h"], lambda harm: _verdicts("yn", "yn", other="reference"))
    assert ruled.against == "reference" and ruled.kappa == pytest.approx(1.0)
    assert "the reference annotator (rules, not people)" in ruled.sentence()
    assert "human" not in ruled.sentence().replace("not people", "")
    (alone,) = judge_agreements(["h"], lambda harm: {"d0": {"llm": 1.0}})
    assert alone.against is None and alone.low and "not checked against" in alone.sentence()
    assert judge_agreements(["h"], lambda harm: {"d0": {"human": 1.0}}) == []


def test_kappa_by_hand_where_chance_agreement_differs() -> None:
    # agree on 5 of 6; yes 5/6 and 4/6: p_e = 20/36 + 2/36, κ = (30 − 22)/(36 − 22) = 4/7
    pairs = [(x == "y", y == "y") for x, y in zip("yyyyyn", "yyyynn", strict=True)]
    assert cohen_kappa(pairs) == pytest.approx(4 / 7)
    assert cohen_kappa([(True, True), (True, True)]) is None  # chance agreement is 1


async def test_a_measurement_gives_the_same_figure(sqlite_db: Database) -> None:
    run_id = await write_judge_against_people_run(sqlite_db, "yyynnn", "ynnyyn")
    (found,) = measure(sqlite_db, [run_id]).judge_agreement()
    assert found.harm == GUARDRAIL_VIOLATION and found.kappa == pytest.approx(-1 / 3)


def test_kappa_agrees_with_scikit_learn_and_the_agreement_module() -> None:
    """The judge's κ is computed here without scikit-learn (its import takes seconds); it
    must be the κ ``corix agreement`` reports, which scikit-learn computes."""
    from sklearn.metrics import cohen_kappa_score

    rng = random.Random(7)
    for _ in range(50):
        n = rng.randint(2, 40)
        pairs = [(rng.random() < 0.3, rng.random() < 0.4) for _ in range(n)]
        ours = cohen_kappa(pairs)
        if ours is None:
            continue
        theirs = cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs])
        assert ours == pytest.approx(float(theirs), abs=1e-12)
