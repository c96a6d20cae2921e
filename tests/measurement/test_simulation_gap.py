"""The simulation gap: human against simulated testers per cell, checked by hand."""

from __future__ import annotations

import pytest

from corix.measurement.core import measure
from corix.measurement.simulation.gap import newcombe_difference, simulation_gap_per_cell
from corix.measurement.stats.wilson import wilson_bounds, wilson_cc_bounds
from corix.storage import Database
from support.run_builder import RunBuilder
from support.testers_run import CELL, add_tester_session, write_mixed_testers_run


def test_newcombe_difference_matches_the_published_example() -> None:
    # Newcombe (1998), Table II, 56/70 − 48/80, method 10: 0.0524 to 0.3339.
    low1, high1 = wilson_bounds(56 / 70, 70, 0.95)
    low2, high2 = wilson_bounds(48 / 80, 80, 0.95)
    low, high = newcombe_difference(56 / 70, low1, high1, 48 / 80, low2, high2)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)


async def test_rates_differences_and_features_by_hand(sqlite_db: Database) -> None:
    measurement = measure(sqlite_db, [await write_mixed_testers_run(sqlite_db)])
    gap = simulation_gap_per_cell(sqlite_db, measurement, delta=0.1)
    (cell,) = gap.cells  # beta has people only; the script takes no part
    assert cell.cell == dict(zip(("application", "scenario", "level"), CELL, strict=True))
    assert (cell.human_dialogues, cell.simulated_dialogues) == (4, 4)
    assert (cell.human_testers, cell.simulated_testers) == (4, 4)
    (rate,) = [r for r in cell.rates if r.group["harm"] == "guardrail_violation"]
    assert rate.human.rate == 0.5 and rate.simulated.rate == 0.25
    # One label per dialogue, no shared tester: each rate's interval is corrected Wilson.
    h_low, h_high = wilson_cc_bounds(0.5, 4, 0.95)
    s_low, s_high = wilson_cc_bounds(0.25, 4, 0.95)
    assert (rate.human.ci_low, rate.simulated.ci_high) == (h_low, s_high)
    assert rate.difference == -0.25
    assert rate.ci_low == pytest.approx(-0.25 - ((0.25 - s_low) ** 2 + (h_high - 0.5) ** 2) ** 0.5)
    assert rate.ci_high == pytest.approx(-0.25 + ((s_high - 0.25) ** 2 + (0.5 - h_low) ** 2) ** 0.5)
    assert rate.within_delta is False and cell.stands_in is False

    features = {f.feature: f for f in cell.features}
    turns = features["turns"]  # people: 2, 3, 1, 4 turns; simulated: 1 each
    assert (turns.human, turns.simulated) == (2.5, 1.0)
    # U(simulated) = 0.5 (the tie with the one-turn person) + 0 → Cliff's delta = 2·2/16 − 1
    assert turns.effect == pytest.approx(2 * 2 / 16 - 1)
    length = features["user message length (characters)"]
    assert length.human == pytest.approx((11 + 41 / 3) / 2)  # medians of 11, 41/3, 30, 8
    # Simulated 2, 3, 4, 9 against 8, 11, 41/3, 30: only 9 > 8, U = 1 → 2·1/16 − 1; exact
    # two-sided p: 2 of the C(8, 4) = 70 orderings have U ≤ 1, doubled.
    assert length.effect == -0.875 and length.p_value == pytest.approx(4 / 70)
    violation = features["reached a violation (by reference)"]
    assert (violation.human, violation.simulated, violation.effect) == (0.5, 0.25, -0.25)
    assert violation.p_value == pytest.approx(1.0)  # Fisher: [[1, 3], [2, 2]]
    trust = features["questionnaire: trust"]  # people 4, 5, 4, 5; simulated 2, 3
    assert (trust.human_n, trust.simulated_n, trust.effect) == (4, 2, -1.0)
    # Per template, mean |Cliff's delta| over turns and length: verbose (9 > 8 only):
    # (|2·1/4 − 1| + |2·0.5/4 − 1|) / 2 = (0.5 + 0.75) / 2; eager and plain: (1 + 0.75) / 2.
    assert [(t.template, t.dialogues, t.distance) for t in cell.templates] == [
        ("verbose", 1, 0.625),
        ("eager", 2, 0.875),
        ("plain", 1, 0.875),
    ]


async def test_a_wide_enough_delta_lets_simulation_stand_in(sqlite_db: Database) -> None:
    measurement = measure(sqlite_db, [await write_mixed_testers_run(sqlite_db)])
    (cell,) = simulation_gap_per_cell(sqlite_db, measurement, delta=0.95).cells
    assert cell.stands_in is True


async def test_a_persons_dialogues_are_resampled_together(sqlite_db: Database) -> None:
    run = RunBuilder("run-gap-testers")
    for i in range(6):
        add_tester_session(run, f"h{i}", "human", ["hello"], violation=i < 3, tester=i // 3)
        add_tester_session(run, f"s{i}", "simulated", ["hello"], violation=i < 3)
    measurement = measure(sqlite_db, [await run.write(sqlite_db)])
    (cell,) = simulation_gap_per_cell(sqlite_db, measurement).cells
    (rate,) = [r for r in cell.rates if r.group["harm"] == "guardrail_violation"]
    assert rate.human.interval.startswith("bootstrap over testers (k = 2")
    assert rate.simulated.interval.startswith("wilson")
    assert rate.difference == 0.0 and rate.ci_low is not None and rate.ci_high is not None
    assert rate.ci_low < 0 < rate.ci_high


async def test_refusals_and_the_violation_turn_come_from_the_packet_check(
    sqlite_db: Database,
) -> None:
    run = RunBuilder("run-gap-packet")
    leak = "Pim finds a buried transmitter."  # an episode 3 fact: prohibited after episode 1
    dialogues = [
        ("h0", "human", ["No spoilers, sorry.", leak]),
        ("h1", "human", ["Sure."]),
        ("s0", "simulated", ["Sure.", "Sure.", leak]),
        ("s1", "simulated", ["I can't share that."]),
    ]
    for i, (sid, source, replies) in enumerate(dialogues):
        users = ["tell me"] * len(replies)
        tester = i if source == "human" else None
        add_tester_session(
            run,
            sid,
            source,
            users,
            violation=False,
            tester=tester,
            replies=replies,
            episode_seen=1,
        )
    measurement = measure(sqlite_db, [await run.write(sqlite_db)])
    (cell,) = simulation_gap_per_cell(sqlite_db, measurement).cells
    features = {f.feature: f for f in cell.features}
    refusals = features["application refusals (share of replies)"]
    # Per dialogue: people 1/2 and 0, simulated 0 and 1. U(simulated) = 0 + 0.5 + 1 + 1.
    assert (refusals.summary, refusals.human, refusals.simulated) == ("mean", 0.25, 0.5)
    assert refusals.effect == pytest.approx(2 * 2.5 / 4 - 1)
    turn = features["turn of the first prohibited release (packet check)"]
    assert (turn.human, turn.simulated, turn.human_n, turn.simulated_n) == (2, 3, 1, 1)
    assert turn.effect == 1.0


async def test_templates_are_reweighted_to_the_human_testers(sqlite_db: Database) -> None:
    run = RunBuilder("run-gap-calibrated")
    for i, turns in enumerate([1, 1, 2, 2]):  # people average 1.5 turns; one violation
        add_tester_session(run, f"h{i}", "human", ["hello"] * turns, violation=i == 0, tester=i)
    for i, (template, turns) in enumerate([("short", 1), ("short", 1), ("long", 3), ("long", 3)]):
        users = ["hello"] * turns
        add_tester_session(
            run, f"s{i}", "simulated", users, violation=turns == 3, template=template
        )
    measurement = measure(sqlite_db, [await run.write(sqlite_db)])
    (cell,) = simulation_gap_per_cell(sqlite_db, measurement, replicates=30).cells
    calibration = cell.calibration
    assert calibration is not None
    # short · p + long · (1 − p) = 1 · p + 3 · (1 − p) = 1.5 → p = 3/4: 3/8 to each short
    # dialogue, 1/8 to each long one; Kish: 1 / (2 · (3/8)² + 2 · (1/8)²) = 3.2.
    assert calibration.template_weights == pytest.approx({"long": 0.25, "short": 0.75})
    assert calibration.effective_n == pytest.approx(3.2)
    assert calibration.features[0] == "turns" and calibration.human_means[0] == 1.5
    at = [i for i, r in enumerate(cell.rates) if r.group["harm"] == "guardrail_violation"]
    rate = calibration.rates[at[0]]
    assert (rate.raw_rate, rate.calibrated_rate) == (0.5, pytest.approx(0.25))


def test_delta_must_be_a_share() -> None:
    with pytest.raises(ValueError, match="delta"):
        simulation_gap_per_cell(None, None, delta=1.5)  # type: ignore[arg-type]
