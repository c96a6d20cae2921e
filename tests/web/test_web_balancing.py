"""Balanced, randomized assignment of testers to application × scenario slots."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from corix.web.services import balance_slots
from corix.web.services.balancing import counterbalance_slots, counterbalanced_sequence

SLOTS = [(app, scenario) for app in (1, 2, 3) for scenario in ("tv", "meal")]


def test_every_tester_gets_distinct_slots_and_slot_totals_stay_within_one() -> None:
    plan = balance_slots(list(range(10)), SLOTS, 4, rng=random.Random(7))
    assert sorted(plan) == list(range(10))
    assert all(len(set(chosen)) == len(chosen) == 4 for chosen in plan.values())
    totals = Counter(slot for chosen in plan.values() for slot in chosen)
    assert sum(totals.values()) == 40
    assert set(totals) == set(SLOTS)
    assert max(totals.values()) - min(totals.values()) <= 1  # 40 over 6 slots: 6 or 7 each


def test_earlier_assignments_count_towards_balance_and_are_not_repeated() -> None:
    load = {SLOTS[0]: 3, SLOTS[1]: 3}
    taken = {0: {SLOTS[2]}}
    plan = balance_slots([0, 1], SLOTS, 2, rng=random.Random(1), load=load, taken=taken)
    chosen = [slot for slots in plan.values() for slot in slots]
    assert SLOTS[0] not in chosen and SLOTS[1] not in chosen  # the busy slots wait
    assert SLOTS[2] not in plan[0]  # tester 0 already had it


def test_assignments_are_reproducible_by_seed_and_orders_are_randomized() -> None:
    testers = list(range(6))
    same = [balance_slots(testers, SLOTS, 6, rng=random.Random(3)) for _ in range(2)]
    assert same[0] == same[1]
    # With every slot given to every tester, only the order differs between testers:
    # no application is always seen first.
    firsts = Counter(
        plan[0][0]
        for plan in (
            balance_slots(testers, SLOTS, 6, rng=random.Random(seed)) for seed in range(60)
        )
    )
    assert len(firsts) == len(SLOTS)
    orders = {tuple(chosen) for chosen in same[0].values()}
    assert len(orders) > 1


def test_asking_for_more_slots_than_a_tester_has_left_is_an_error() -> None:
    with pytest.raises(ValueError, match="fewer than 3"):
        balance_slots([0], SLOTS[:2], 3, rng=random.Random(0))
    with pytest.raises(ValueError, match="at least one"):
        balance_slots([0], SLOTS, 0, rng=random.Random(0))


@pytest.mark.parametrize(
    ("n_apps", "n_scenarios"), [(3, 2), (2, 2), (3, 3), (2, 4), (4, 6), (1, 3)]
)
def test_counterbalanced_rows_form_a_latin_square_of_slots_and_positions(
    n_apps: int, n_scenarios: int
) -> None:
    apps = [f"app{a}" for a in range(n_apps)]
    scenarios = [f"s{s}" for s in range(n_scenarios)]
    cells = n_apps * n_scenarios
    for block in (0, 1):  # any block of A × S rows from a multiple of A × S
        rows = [
            counterbalanced_sequence(row, apps, scenarios)
            for row in range(block * cells, (block + 1) * cells)
        ]
        for row in rows:
            assert len(set(row)) == cells  # every slot once per tester
            # All applications, in one scenario, before a scenario changes.
            for start in range(0, cells, n_apps):
                stretch = row[start : start + n_apps]
                assert {app for app, _ in stretch} == set(apps)
                assert len({scenario for _, scenario in stretch}) == 1
        for position in range(cells):
            assert len({row[position] for row in rows}) == cells  # each slot once per position


def test_counterbalanced_first_rows_balance_first_applications_and_scenarios() -> None:
    """Three testers, three applications, three scenarios: every application and every
    scenario comes first once, and the nine sessions cover the nine slots."""
    apps, scenarios = ["A", "B", "C"], ["tv", "meal", "path"]
    rows = [counterbalanced_sequence(row, apps, scenarios)[:3] for row in range(3)]
    assert rows == [
        [("A", "tv"), ("B", "tv"), ("C", "tv")],
        [("B", "meal"), ("C", "meal"), ("A", "meal")],
        [("C", "path"), ("A", "path"), ("B", "path")],
    ]
    for position in range(3):
        assert {row[position][0] for row in rows} == set(apps)
        assert {row[position][1] for row in rows} == set(scenarios)
    assert len({slot for row in rows for slot in row}) == 9


def test_counterbalanced_testers_meet_several_applications_in_balanced_orders() -> None:
    plan = counterbalance_slots(list(range(8)), [1, 2], ["tv", "meal"], 2, rng=random.Random(0))
    assert all({app for app, _ in chosen} == {1, 2} for chosen in plan.values())
    firsts = Counter(chosen[0] for chosen in plan.values())
    assert firsts == {(1, "tv"): 2, (2, "tv"): 2, (1, "meal"): 2, (2, "meal"): 2}
    cells = Counter(slot for chosen in plan.values() for slot in chosen)
    assert set(cells.values()) == {4}
    # Slots a tester already has are skipped along their row.
    more = counterbalance_slots(
        [0], [1, 2], ["tv"], 1, rng=random.Random(0), taken={0: {(1, "tv")}}
    )
    assert more == {0: [(2, "tv")]}
    with pytest.raises(ValueError, match="fewer than 3"):
        counterbalance_slots([0], [1, 2], ["tv"], 3, rng=random.Random(0))


def test_testers_added_one_at_a_time_continue_the_design() -> None:
    """Four testers assigned one by one get the same orders as four assigned at once."""
    apps, scenarios = [1, 2], ["tv", "meal"]
    one_by_one = [
        counterbalance_slots(
            [tester], apps, scenarios, 2, rng=random.Random(tester), first_row=tester
        )[tester]
        for tester in range(4)
    ]
    at_once = counterbalance_slots(list(range(4)), apps, scenarios, 2, rng=random.Random(0))
    assert sorted(one_by_one) == sorted(at_once.values())
    assert len({tuple(order) for order in one_by_one}) == 4
