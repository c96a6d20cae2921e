"""The web tables on SQLite and the real PostgreSQL server: migrations and races."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import func, inspect, select, update
from web_support import (
    FIELD_TEST_ANSWERS,
    Browser,
    answer_key,
    build_world,
    claim,
    complete_session,
    qualify,
    run_tester,
)

from corix.storage import Database, iter_sessions
from corix.storage.orm import AnnotationPassRow, Base, TurnRow
from corix.storage.orm_web import AnnotationTaskRow
from corix.web.services import Conflict, human_run_id
from corix.web.services.clock import utcnow

WEB_TABLES = {
    "web_users",
    "web_login_sessions",
    "web_invitations",
    "web_application_options",
    "web_evaluation_settings",
    "web_assignments",
    "web_annotator_queues",
    "web_annotation_tasks",
    "web_qualification_attempts",
    "web_pass_reviews",
    "web_sign_in_throttle",
    "web_qualification_draws",
    "web_application_status",
}


@pytest.mark.filterwarnings("ignore:.*expression-based index")
def test_migrations_create_exactly_the_web_tables(any_db: Database) -> None:
    with any_db.engine.connect() as connection:
        assert set(inspect(connection).get_table_names()) >= WEB_TABLES
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []


async def test_a_human_session_and_its_annotation_on_both_backends(any_db: Database) -> None:
    world = build_world(any_db)
    world.assign_tester("felix")
    world.state.assigner.assign_annotators(
        world.evaluation_id, [world.user("anna").id], ["risk_assessment"]
    )
    tester, annotator = Browser(world.app), Browser(world.app)
    try:
        await run_tester(
            world, tester, "felix", ["I'm on episode 2. Recap episode 1?"], FIELD_TEST_ANSWERS
        )
        await annotator.login("anna")
        await qualify(world, annotator)
        token = await claim(annotator, "risk_assessment")
        saved = await annotator.post(
            f"/annotate/tasks/{token}",
            {"a:ra_prohibited_released": "no", "a:ra_permitted_withheld": "no"},
        )
        assert saved.status_code == 303
    finally:
        await tester.aclose()
        await annotator.aclose()
        await world.state.live.close()
    (record,) = list(iter_sessions(any_db, human_run_id(world.evaluation_id)))
    assert record.source == "human" and len(record.turns) == 1
    with any_db.session() as s:
        assert s.scalar(select(func.count()).select_from(AnnotationPassRow)) == 1


async def test_simultaneous_sends_of_one_turn_store_it_once(any_db: Database) -> None:
    world = build_world(any_db)
    user = world.add_user("racer", world.user("felix").role)
    world.assign_tester("racer")
    token = world.state.testers.assignments(user)[0].token
    testers = world.state.testers
    try:
        await testers.start(user, token, consent=True)
        text = "I'm on episode 2. Recap episode 1?"
        turns = await asyncio.gather(
            *(testers.send(user, token, text, expected_index=0) for _ in range(5))
        )
        assert {turn.index for turn in turns} == {0}
        assert len({turn.reply for turn in turns}) == 1
        with any_db.session() as s:
            assert s.scalar(select(func.count()).select_from(TurnRow)) == 1
    finally:
        await world.state.live.close()


async def test_racing_annotators_never_exceed_k_passes(any_db: Database) -> None:
    world = build_world(any_db, passes_per_item=2)
    await complete_session(world, "felix", ["I'm on episode 2. Recap episode 1?"])
    names = ["anna", "otto", "sena", "ann4", "ann5", "ann6"]
    for name in names[3:]:
        world.add_user(name, world.user("anna").role)
    users = [world.user(name) for name in names]
    world.state.assigner.assign_annotators(
        world.evaluation_id, [u.id for u in users], ["risk_assessment"]
    )
    for user in users:  # qualification itself is tested elsewhere
        drawn = world.state.qualification.draw(user)
        assert world.state.qualification.submit(user, answer_key(drawn)).passed
    queues = [world.state.queue.queues(user)[0].id for user in users]
    claims = await asyncio.gather(
        *(
            asyncio.to_thread(world.state.queue.claim_next, user, queue)
            for user, queue in zip(users, queues, strict=True)
        )
    )
    assert sum(token is not None for token in claims) == 2
    await world.state.live.close()


async def test_an_expired_claim_goes_back_to_the_queue(any_db: Database) -> None:
    world = build_world(any_db, passes_per_item=1)
    await complete_session(world, "felix", ["I'm on episode 2. Recap episode 1?"])
    anna, otto = world.user("anna"), world.user("otto")
    world.state.assigner.assign_annotators(
        world.evaluation_id, [anna.id, otto.id], ["risk_assessment"]
    )
    for user in (anna, otto):
        assert world.state.qualification.submit(
            user, answer_key(world.state.qualification.draw(user))
        ).passed
    queue = world.state.queue
    anna_token = queue.claim_next(anna, queue.queues(anna)[0].id)
    otto_queue = queue.queues(otto)[0]
    assert anna_token is not None and otto_queue.available == 0
    assert queue.claim_next(otto, otto_queue.id) is None
    assert queue.open_claims(world.evaluation_id) == (1, 0)

    with any_db.session() as s:  # anna walks away for longer than a claim lasts
        s.execute(
            update(AnnotationTaskRow).values(
                created_at=utcnow() - queue.claim_ttl - timedelta(seconds=1)
            )
        )
    assert queue.open_claims(world.evaluation_id) == (1, 1)
    assert queue.queues(otto)[0].available == 1
    otto_token = queue.claim_next(otto, otto_queue.id)
    assert otto_token is not None and otto_token != anna_token
    with any_db.session() as s:
        (task,) = s.scalars(select(AnnotationTaskRow)).all()
    assert (task.user_id, task.pass_no) == (otto.id, 1)
    with pytest.raises(Conflict, match="has gone back to the queue"):
        queue.submit(anna, anna_token, [], flagged=False, note=None)
    await world.state.live.close()
