"""Balanced, randomized assignment of testers to application × scenario slots."""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence, Set
from typing import TypeVar

SlotT = TypeVar("SlotT", bound=Hashable)


def balance_slots(
    testers: Sequence[int],
    slots: Sequence[SlotT],
    per_tester: int,
    *,
    rng: random.Random,
    load: Mapping[SlotT, int] | None = None,
    taken: Mapping[int, Set[SlotT]] | None = None,
) -> dict[int, list[SlotT]]:
    """Give each tester ``per_tester`` slots they do not have yet, keeping slots even.

    Every pick goes to a least-loaded slot (``load`` counts earlier assignments), ties
    broken at random, so slot totals never drift more than one apart when they start even.
    Testers are served in random order and each tester's slots are shuffled, so no
    application is systematically seen first (order effects would bias the comparison).

    Raises ``ValueError`` when a tester has fewer than ``per_tester`` slots left.
    """
    if per_tester < 1:
        raise ValueError("each tester needs at least one slot")
    counts = {slot: (load or {}).get(slot, 0) for slot in slots}
    already = taken or {}
    order = list(testers)
    rng.shuffle(order)
    result: dict[int, list[SlotT]] = {}
    for tester in order:
        free = [slot for slot in slots if slot not in already.get(tester, set())]
        if len(free) < per_tester:
            raise ValueError(
                f"tester {tester} has {len(free)} slot(s) left, fewer than {per_tester}"
            )
        rng.shuffle(free)  # random tie-breaking: sort below is stable
        chosen = sorted(free, key=counts.__getitem__)[:per_tester]
        for slot in chosen:
            counts[slot] += 1
        rng.shuffle(chosen)
        result[tester] = chosen
    return {tester: result[tester] for tester in testers}
