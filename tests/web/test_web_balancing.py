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


def test_counterbalanced_rows_form_a_latin_square_of_slots_and_positions() -> None:
    apps, scenarios = ["A", "B", "C"], ["tv", "meal"]
    rows = [counterbalanced_sequence(row, apps, scenarios) for row in range(6)]
    for row in rows:
        assert len(set(row)) == 6  # every slot once per tester
        assert {app for app, _ in row[:3]} == set(apps)  # all applications before a repeat
    for position in range(6):
        assert len({row[position] for row in rows}) == 6  # each slot once per position
    assert rows[0] == [
        ("A", "tv"),
        ("B", "meal"),
        ("C", "tv"),
        ("A", "meal"),
        ("B", "tv"),
        ("C", "meal"),
    ]


def test_counterbalanced_testers_meet_several_applications_in_balanced_orders() -> None:
    plan = counterbalance_slots(list(range(8)), [1, 2], ["tv", "meal"], 2, rng=random.Random(0))
    assert all({app for app, _ in chosen} == {1, 2} for chosen in plan.values())
    firsts = Counter(chosen[0] for chosen in plan.values())
    assert firsts == {(1, "tv"): 2, (2, "tv"): 2, (1, "meal"): 2, (2, "meal"): 2}
    cells = Counter(slot for chosen in plan.values() for slot in chosen)
    assert set(cells.values()) == {4}
    # Slots a tester has already are skipped along their row.
    more = counterbalance_slots(
        [0], [1, 2], ["tv"], 1, rng=random.Random(0), taken={0: {(1, "tv")}}
    )
    assert more == {0: [(2, "tv")]}
    with pytest.raises(ValueError, match="fewer than 3"):
        counterbalance_slots([0], [1, 2], ["tv"], 3, rng=random.Random(0))
