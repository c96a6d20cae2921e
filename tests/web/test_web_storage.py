"""The web testbed on SQLite and the real PostgreSQL server: a whole flow, and races.

(The web tables' migrations are tested with the stores, in tests/storage.)"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest
from web_support import (
    FIELD_TEST_ANSWERS,
    Browser,
    answer_key,
    build_world,
    claim,
    complete_session,
    qualify,
    run_tester,
    stored_turns,
)

from corix.storage import Database, iter_sessions, load_passes, load_session
from corix.storage.web import queues, transaction
from corix.web.services import human_run_id
from corix.web.services.annotation_queue import ClaimLost
from corix.web.services.clock import utcnow


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
    assert len(load_passes(any_db)) == 1


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
        assert len(stored_turns(world, token)) == 1  # the only session
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

    # anna walks away for longer than a claim lasts.
    queue.clock = lambda: utcnow() + queue.claim_ttl + timedelta(seconds=1)
    assert queue.open_claims(world.evaluation_id) == (1, 1)
    assert queue.queues(otto)[0].available == 1
    otto_token = queue.claim_next(otto, otto_queue.id)
    assert otto_token is not None and otto_token != anna_token
    with transaction(any_db) as tx:
        assert queues.task(tx, anna_token) is None  # her claim is gone, otto's is the one
        task = queues.task(tx, otto_token)
    assert task is not None and (task.user_id, task.pass_no) == (otto.id, 1)
    # Taken since, and the one pass is otto's: anna is told, her pass is not stored.
    with pytest.raises(ClaimLost, match="went back to the queue and other annotators"):
        queue.submit(anna, anna_token, [], flagged=False, note=None)
    queue.skip(otto, otto_token)  # a place frees up: her answers go in when she resubmits
    queue.submit(anna, anna_token, [], flagged=False, note=None)
    with transaction(any_db) as tx:
        again = queues.task(tx, anna_token)
    assert again is not None and again.status == "done" and again.user_id == anna.id
    await world.state.live.close()


async def test_a_human_testers_application_is_given_the_packs_tools(sqlite_db: Database) -> None:
    # The web path opened every dialogue without the scenario's tools, so a tool-using
    # application met human testers unarmed: the risk planted in a tool result never showed.
    world = build_world(sqlite_db, applications={"Agent": "demo:agent"})
    try:
        session_id = await complete_session(
            world, "felix", ["What happens in episode 6?"], application="Agent"
        )
    finally:
        await world.state.live.close()
    (turn,) = load_session(sqlite_db, session_id).turns
    (call,) = turn.tool_calls
    assert call.name == "episode_guide" and json.loads(call.arguments) == {"episode": 6}
    (result,) = turn.tool_results
    assert result.tool_call_id == call.id and result.text.startswith("Episode 6")
