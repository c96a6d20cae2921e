"""Assignment designs: which application × scenario slots each tester meets, in which order.

Two designs: *counterbalanced* (the default; each tester meets the applications in turn,
and slots × positions form a Latin square where the counts allow) and *random* (balanced
slot totals, random orders).
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Mapping, Sequence, Set
from enum import StrEnum
from typing import TypeVar


class AssignmentDesign(StrEnum):
    COUNTERBALANCED = "counterbalanced"
    RANDOM = "random"

    @property
    def label(self) -> str:
        return DESIGN_LABELS[self]


DESIGN_LABELS = {
    AssignmentDesign.COUNTERBALANCED: "Counterbalanced (Latin square of applications and orders)",
    AssignmentDesign.RANDOM: "Random (even slot totals, random orders)",
}

SlotT = TypeVar("SlotT", bound=Hashable)
AppT = TypeVar("AppT", bound=Hashable)
ScenarioT = TypeVar("ScenarioT", bound=Hashable)


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


def counterbalanced_sequence(
    row: int, applications: Sequence[AppT], scenarios: Sequence[ScenarioT]
) -> list[tuple[AppT, ScenarioT]]:
    """Row ``row`` of a counterbalanced design: every application × scenario slot once.

    The row starts at application ``a0 = row mod A`` and scenario ``s0 = (row + row // L)
    mod S`` (``L = lcm(A, S)``); position ``j = b·A + r`` holds application ``a0 + r`` and
    scenario ``s0 + b`` (mod A and S). So a tester meets every application in one scenario,
    in a rotated order, before the next scenario: the applications are compared by the same
    person on the same task. Rows start at every (application, scenario) pair once over any
    ``A × S`` rows from a multiple of ``A × S`` — a Latin square of slots × positions — and
    consecutive rows move both the first application and the first scenario on, so even a
    few testers see every application and every scenario first about equally often.
    """
    n_apps, n_scenarios = len(applications), len(scenarios)
    if not n_apps or not n_scenarios:
        raise ValueError("a design needs at least one application and one scenario")
    first_app = row % n_apps
    first_scenario = (row + row // math.lcm(n_apps, n_scenarios)) % n_scenarios
    return [
        (
            applications[(first_app + j % n_apps) % n_apps],
            scenarios[(first_scenario + j // n_apps) % n_scenarios],
        )
        for j in range(n_apps * n_scenarios)
    ]


def counterbalance_slots(
    testers: Sequence[int],
    applications: Sequence[AppT],
    scenarios: Sequence[ScenarioT],
    per_tester: int,
    *,
    rng: random.Random,
    first_row: int = 0,
    taken: Mapping[int, Set[tuple[AppT, ScenarioT]]] | None = None,
) -> dict[int, list[tuple[AppT, ScenarioT]]]:
    """Give each tester the next ``per_tester`` slots of their row of the design.

    The testers take rows ``first_row``, ``first_row + 1``, … (the rows earlier testers of
    the series did not take) in a random order (``rng``): testers added one at a time still
    get different rows, and who meets which order is random while the orders stay balanced.
    Slots a tester already has are skipped.

    Raises ``ValueError`` when a tester has fewer than ``per_tester`` slots left.
    """
    if per_tester < 1:
        raise ValueError("each tester needs at least one slot")
    already = taken or {}
    rows = list(range(first_row, first_row + len(testers)))
    rng.shuffle(rows)
    result: dict[int, list[tuple[AppT, ScenarioT]]] = {}
    for tester, row in zip(testers, rows, strict=True):
        have = already.get(tester, set())
        sequence = counterbalanced_sequence(row, applications, scenarios)
        free = [slot for slot in sequence if slot not in have]
        if len(free) < per_tester:
            raise ValueError(
                f"tester {tester} has {len(free)} slot(s) left, fewer than {per_tester}"
            )
        result[tester] = free[:per_tester]
    return result
