"""Assigning testers to slots and annotators to categories (the admin's side)."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from corix.assessment import AnnotationSchema
from corix.domain import Level
from corix.storage import Database
from corix.storage.web import Transaction, transaction
from corix.storage.web import applications as application_store
from corix.storage.web import assignments as store
from corix.storage.web import queues as queue_store
from corix.storage.web import series as series_store
from corix.storage.web.accounts import UserRecord, users_by_id
from corix.storage.web.assignments import NewAssignment
from corix.storage.web.series import SeriesRecord
from corix.web.roles import ANNOTATOR_ROLES, Role
from corix.web.security import new_token
from corix.web.services.balancing import (
    AssignmentDesign,
    balance_slots,
    counterbalance_slots,
)
from corix.web.services.briefings import draw_briefing
from corix.web.services.service_errors import Conflict, InputError, NotFound

LEVEL_OF_TESTER = {Role.RED_TEAMER: Level.RED_TEAMING, Role.FIELD_TESTER: Level.FIELD_TESTING}
"""The level a tester's sessions belong to."""

Slot = tuple[int, str]  # application id, scenario


@dataclass(frozen=True)
class AssignmentSummary:
    """One assignment as the admin sees it (with the application's name)."""

    username: str
    level: Level
    application: str
    scenario: str
    position: int
    status: str


@dataclass(frozen=True)
class DesignRow:
    """One planned session of the design, as the analysis of tester effects reads it.

    ``tester_id`` is the ``tester_id`` the tester's sessions carry and ``session_id`` the
    session held in the slot (none until it starts): the design joins the measured record.
    """

    tester_id: int
    level: Level
    position: int
    application_id: int
    application: str
    scenario: str
    status: str
    session_id: str | None


DESIGN_COLUMNS = (
    "tester_id", "level", "position", "application_id", "application", "scenario",
    "status", "session_id",
)  # fmt: skip


class Assigner:
    def __init__(self, db: Database, schema: AnnotationSchema) -> None:
        self._db = db
        self._schema = schema

    def assign_testers(
        self,
        evaluation_id: str,
        user_ids: list[int],
        *,
        per_tester: int,
        seed: int,
        design: AssignmentDesign = AssignmentDesign.COUNTERBALANCED,
    ) -> int:
        """Add ``per_tester`` assignments for each tester by ``design``; return how many.

        The design's name is kept with the series' settings and every assignment keeps its
        tester, application, scenario and position: the measurement can model tester effects.
        """
        if not user_ids:
            raise InputError("choose at least one tester", {"testers": "none chosen"})
        with transaction(self._db) as tx:
            return self._assign(
                tx, evaluation_id, user_ids, per_tester, random.Random(seed), design
            )

    def redraw(self, evaluation_id: str, *, seed: int, design: AssignmentDesign) -> int:
        """Draw the series' assignments afresh (same testers, same counts) before it starts."""
        rng = random.Random(seed)
        with transaction(self._db) as tx:
            rows = store.of_series(tx, evaluation_id)
            if not rows:
                raise InputError("assign testers first", {"testers": "none assigned"})
            if any(row.session_id is not None or row.status != "assigned" for row in rows):
                raise Conflict(
                    "a tester has started a session: the design can no longer be redrawn"
                )
            counts = Counter(row.user_id for row in rows)
            store.delete_assignments(tx, [row.id for row in rows])
            by_count: defaultdict[int, list[int]] = defaultdict(list)
            for user_id, count in sorted(counts.items()):
                by_count[count].append(user_id)
            return sum(
                self._assign(tx, evaluation_id, user_ids, count, rng, design)
                for count, user_ids in sorted(by_count.items())
            )

    def _assign(
        self,
        tx: Transaction,
        evaluation_id: str,
        user_ids: list[int],
        per_tester: int,
        rng: random.Random,
        design: AssignmentDesign,
    ) -> int:
        added = 0
        evaluation = _evaluation(tx, evaluation_id)
        testers = _users(tx, user_ids)
        applications = application_store.active_application_ids(tx, evaluation_id)
        if not applications:
            raise InputError("register an application first", {"testers": "no applications"})
        series_store.set_assignment_design(tx, evaluation_id, design.value)
        by_level: defaultdict[Level, list[int]] = defaultdict(list)
        for user in testers:
            level = LEVEL_OF_TESTER.get(Role(user.role))
            if level is None:
                raise InputError(f"'{user.username}' is not a tester", {"testers": "not a tester"})
            if level.value not in evaluation.levels:
                raise InputError(
                    f"this evaluation has no {level.value} level, which "
                    f"'{user.username}' would test at",
                    {"testers": "level not in evaluation"},
                )
            by_level[level].append(user.id)
        for level, ids in sorted(by_level.items()):
            design_of_level = partial(
                _plan, design, applications, list(evaluation.scenarios), per_tester, rng
            )
            added += self._assign_level(tx, evaluation_id, level, ids, design_of_level, rng)
        return added

    @staticmethod
    def _assign_level(
        tx: Transaction,
        evaluation_id: str,
        level: Level,
        user_ids: list[int],
        plan_for: Callable[
            [list[int], Counter[Slot], dict[int, set[Slot]], int], dict[int, list[Slot]]
        ],
        briefing_rng: random.Random,
    ) -> int:
        existing = store.of_series(tx, evaluation_id, level=level.value)
        load = Counter((a.application_id, a.scenario) for a in existing)
        taken: defaultdict[int, set[Slot]] = defaultdict(set)
        for a in existing:
            taken[a.user_id].add((a.application_id, a.scenario))
        # Rows of the counterbalanced design continue after the testers already assigned,
        # so testers added one at a time still get different orders.
        try:
            plan = plan_for(user_ids, load, dict(taken), len(taken))
        except ValueError:
            raise InputError(
                "that many more sessions per tester is more than the slots left "
                "(applications × scenarios not yet assigned to them)",
                {"per_tester": "too many"},
            ) from None
        for user_id, chosen in plan.items():
            start = store.last_position(tx, user_id)
            store.add_assignments(
                tx,
                [
                    NewAssignment(
                        token=new_token(),
                        evaluation_id=evaluation_id,
                        user_id=user_id,
                        application_id=application_id,
                        scenario=scenario,
                        level=level.value,
                        position=start + offset,
                        briefing=draw_briefing(scenario, level, briefing_rng),
                    )
                    for offset, (application_id, scenario) in enumerate(chosen, start=1)
                ],
            )
        return sum(len(chosen) for chosen in plan.values())

    def assign_annotators(
        self, evaluation_id: str, user_ids: list[int], categories: list[str]
    ) -> int:
        """Put annotators on category queues; existing assignments are kept. Return how many new."""
        known = {category.id for category in self._schema.categories}
        unknown = sorted(set(categories) - known)
        problems: dict[str, str] = {}
        if not user_ids:
            problems["annotators"] = "none chosen"
        if not categories:
            problems["categories"] = "none chosen"
        elif unknown:
            problems["categories"] = f"unknown: {', '.join(unknown)}"
        if problems:
            raise InputError("please fix the highlighted fields", problems)
        added = 0
        with transaction(self._db) as tx:
            _evaluation(tx, evaluation_id)
            for user in _users(tx, user_ids):
                if Role(user.role) not in ANNOTATOR_ROLES:
                    raise InputError(
                        f"'{user.username}' is not an annotator", {"annotators": "not annotator"}
                    )
                have = queue_store.queue_categories(tx, evaluation_id, user.id)
                new = [category for category in categories if category not in have]
                queue_store.add_queues(tx, evaluation_id, user.id, new)
                added += len(new)
        return added

    def tester_assignments(self, evaluation_id: str) -> list[AssignmentSummary]:
        return [
            AssignmentSummary(username, Level(a.level), app, a.scenario, a.position, a.status)
            for a, username, app in store.named_assignments(self._db, evaluation_id, by_tester=True)
        ]

    def design(self, evaluation_id: str) -> list[DesignRow]:
        """Every assignment of the series: tester, position, application, scenario, session."""
        with transaction(self._db) as tx:
            _evaluation(tx, evaluation_id)
        return [
            DesignRow(
                a.user_id,
                Level(a.level),
                a.position,
                a.application_id,
                name,
                a.scenario,
                a.status,
                a.session_id,
            )
            for a, _username, name in store.named_assignments(
                self._db, evaluation_id, by_tester=False
            )
        ]

    def annotator_queues(self, evaluation_id: str) -> dict[str, list[str]]:
        """Username → assigned categories, in the order they are annotated."""
        queues: defaultdict[str, list[str]] = defaultdict(list)
        for username, category in queue_store.queues_of_series(self._db, evaluation_id):
            queues[username].append(category)
        order = {category.id: category.order for category in self._schema.categories}
        return {user: sorted(ids, key=order.__getitem__) for user, ids in queues.items()}


def _plan(
    design: AssignmentDesign,
    applications: list[int],
    scenarios: list[str],
    per_tester: int,
    rng: random.Random,
    testers: list[int],
    load: Counter[Slot],
    taken: dict[int, set[Slot]],
    first_row: int,
) -> dict[int, list[Slot]]:
    if design is AssignmentDesign.RANDOM:
        slots = [(a, scenario) for a in applications for scenario in scenarios]
        return balance_slots(testers, slots, per_tester, rng=rng, load=load, taken=taken)
    return counterbalance_slots(
        testers, applications, scenarios, per_tester, rng=rng, first_row=first_row, taken=taken
    )


def _evaluation(tx: Transaction, evaluation_id: str) -> SeriesRecord:
    found = series_store.series(tx, evaluation_id)
    if found is None:
        raise NotFound(f"no evaluation '{evaluation_id}'")
    return found


def _users(tx: Transaction, user_ids: list[int]) -> list[UserRecord]:
    found = users_by_id(tx, user_ids)
    if len(found) != len(set(user_ids)):
        raise InputError("unknown user chosen", {"users": "unknown"})
    return found
