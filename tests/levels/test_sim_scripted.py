"""The scripted engine end to end: demo applications, real SQLite, the real runner."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
import sim_apps
from sim_helpers import GUARDED, UNGUARDED, answers, plan_for, sessions, work_key

from corix.domain import ApplicationEntry, EndReason, Level, SessionRecord, SessionSource
from corix.execution import PreflightError, execute_plan
from corix.levels.simulation import STRATEGIES, STYLES, copies_brief
from corix.scenarios import expand_personas, resolve_pack
from corix.scenarios.checks import check_reply
from corix.scenarios.loader import builtin_pack_dir
from corix.scenarios.models import FIELD_TESTING_ITEM_IDS, RED_TEAMING_ITEM_IDS
from corix.storage import Database, completed_work_keys, get_run, list_runs

SCENARIOS = ["tv_spoilers", "meal_planner", "pathfinder"]


def _transcript(db: Database, session: SessionRecord) -> tuple[Any, ...]:
    stored = tuple((a.item_id, a.value, a.text) for a in answers(db, session.id))
    turns = tuple((t.user_text, t.response_text, t.error) for t in session.turns)
    return (work_key(session, db), session.end_reason, session.first_success_turn, turns, stored)


async def test_same_seed_same_transcripts(tmp_path: Path) -> None:
    plan = plan_for(UNGUARDED, scenarios=SCENARIOS, sessions=6)
    runs = []
    for name in ("a", "b"):
        db = Database(f"sqlite:///{tmp_path / name}.db")
        result = await execute_plan(plan, db)
        runs.append(sorted(_transcript(db, s) for s in sessions(db, result.run_id)))
        db.dispose()
    assert runs[0] == runs[1]
    assert len(runs[0]) == 18 and all(turns for *_, turns, _ in runs[0])

    other = Database(f"sqlite:///{tmp_path / 'other'}.db")
    result = await execute_plan(plan.model_copy(update={"seed": 12}), other)
    keys = {work_key(s, other) for s in sessions(other, result.run_id)}
    assert keys != {key for key, *_ in runs[0]}  # another seed draws other personas
    other.dispose()


async def test_red_teaming_breaks_the_unguarded_app_more_often(sqlite_db: Database) -> None:
    plan = plan_for(GUARDED, UNGUARDED, scenarios=SCENARIOS, sessions=16, max_turns=6)
    result = await execute_plan(plan, sqlite_db)
    stored = sessions(sqlite_db, result.run_id)
    assert len(stored) == 2 * 3 * 16 == result.stats.sessions
    rate = {}
    for app in ("guarded", "unguarded"):
        mine = [s for s in stored if s.application == app]
        rate[app] = sum(s.first_success_turn is not None for s in mine) / len(mine)
    assert rate["unguarded"] >= 0.6
    assert 0 < rate["guarded"] < rate["unguarded"] - 0.2
    # Both applications met the same simulated users.
    personas = {
        app: sorted(s.persona or "" for s in stored if s.application == app) for app in rate
    }
    assert personas["guarded"] == personas["unguarded"]


async def test_red_team_sessions_store_persona_strategy_and_first_success(
    sqlite_db: Database,
) -> None:
    plan = plan_for(UNGUARDED, GUARDED, sessions=10, max_turns=6)
    result = await execute_plan(plan, sqlite_db)
    pack = resolve_pack("tv_spoilers")
    briefs = {p.text: p for p in expand_personas(pack, Level.RED_TEAMING)}
    succeeded = 0
    for session in sessions(sqlite_db, result.run_id):
        persona = briefs[session.persona or ""]
        assert session.source is SessionSource.SIMULATED and session.level is Level.RED_TEAMING
        assert session.provenance.template == persona.persona
        assert session.provenance.template_version == persona.template_version
        assert session.provenance.parameters == persona.parameters
        assert session.provenance.brief.goal == persona.goal
        assert session.provenance.engine == "scripted" and session.provenance.seed is not None
        assert session.strategy in STRATEGIES
        assert session.turns[0].meta["strategy"] == session.strategy
        hits = [
            t.index
            for t in session.turns
            if set(persona.goal_facts)
            & set(
                check_reply(
                    pack.packet, persona.parameters, t.response_text or ""
                ).prohibited_released
            )
        ]
        assert session.first_success_turn == (hits[0] if hits else None)
        if hits:
            succeeded += 1
            assert session.end_reason is EndReason.GOAL_REACHED
            assert len(session.turns) == hits[0] + 1  # it stops at the first success
        else:
            assert session.end_reason in (EndReason.TURN_LIMIT, EndReason.GAVE_UP)
    assert succeeded > 0


async def test_red_teamers_refine_and_escalate(sqlite_db: Database) -> None:
    plan = plan_for(GUARDED, sessions=12, max_turns=8, strategies=["direct_request", "role_play"])
    result = await execute_plan(plan, sqlite_db)
    moves = [t.meta["move"] for s in sessions(sqlite_db, result.run_id) for t in s.turns]
    assert {"open", "rephrase", "escalate"} <= set(moves)
    for session in sessions(sqlite_db, result.run_id):
        used = [t.meta["strategy"] for t in session.turns]
        assert set(used) <= {"direct_request", "role_play"}
        # An escalation moves on to the other strategy and never back.
        assert used == sorted(used, key=lambda name: name != session.strategy)


async def test_field_testers_reach_goals_in_their_style(sqlite_db: Database) -> None:
    plan = plan_for(GUARDED, level=Level.FIELD_TESTING, scenarios=SCENARIOS, sessions=10)
    result = await execute_plan(plan, sqlite_db)
    stored = sessions(sqlite_db, result.run_id)
    reached = [s for s in stored if s.end_reason is EndReason.GOAL_REACHED]
    assert len(reached) >= len(stored) // 3
    packs = {name: resolve_pack(name) for name in SCENARIOS}
    personas = {
        p.text: p for pack in packs.values() for p in expand_personas(pack, Level.FIELD_TESTING)
    }
    checked_facts = 0
    for session in reached:
        persona = personas[session.persona or ""]
        released = {
            fact
            for t in session.turns
            for fact in check_reply(
                packs[session.scenario].packet, persona.parameters, t.response_text or ""
            ).released
        }
        assert released, "a goal is reached by an answer that gave something"
        if persona.goal_facts:
            checked_facts += 1
            assert set(persona.goal_facts) <= released
    assert checked_facts > 0
    styles = {s.provenance.brief.message_style for s in stored}
    assert styles == set(STYLES.names())  # the rotation deals every style
    for session in stored:
        style = session.provenance.brief.message_style
        assert all(t.meta["style"] == style for t in session.turns)
        assert session.strategy is None and session.first_success_turn is None


@pytest.mark.parametrize("level", [Level.RED_TEAMING, Level.FIELD_TESTING])
async def test_questionnaires_are_stored_as_simulated_with_provenance(
    sqlite_db: Database, level: Level
) -> None:
    plan = plan_for(UNGUARDED, GUARDED, level=level, sessions=6)
    result = await execute_plan(plan, sqlite_db)
    expected = RED_TEAMING_ITEM_IDS if level is Level.RED_TEAMING else FIELD_TESTING_ITEM_IDS
    for session in sessions(sqlite_db, result.run_id):
        stored = {a.item_id: a for a in answers(sqlite_db, session.id)}
        assert set(stored) == set(expected)
        for answer in stored.values():
            assert answer.simulated is True and answer.respondent == "simulated:scripted"
            assert answer.provenance["template"] == session.provenance.template
            assert answer.provenance["parameters"] == session.provenance.parameters
            assert answer.provenance["answered_by"] == "rules"
            if answer.value is not None:
                assert answer.value in (1, 2, 3, 4, 5)
        if level is Level.RED_TEAMING:
            outcome = stored["rt_outcome"].text
            assert (outcome == "succeeded") == (session.first_success_turn is not None)
            assert session.strategy is not None
            assert session.strategy.replace("_", " ") in (stored["rt_strategies"].text or "")
        else:
            respected = stored["q_guardrail_respected"].value
            pack = resolve_pack(session.scenario)
            leaked = any(
                check_reply(
                    pack.packet, session.provenance.parameters, t.response_text or ""
                ).prohibited_released
                for t in session.turns
            )
            assert respected == (1 if leaked else 5)


async def test_the_application_never_sees_the_persona_brief(sqlite_db: Database) -> None:
    app = ApplicationEntry(
        name="rec", spec="python:sim_apps:RecordingApp", options={"log": "brief"}
    )
    result = await execute_plan(plan_for(app, scenarios=SCENARIOS, sessions=5), sqlite_db)
    stored = sessions(sqlite_db, result.run_id)
    received = sim_apps.RECEIVED["brief"]
    assert len(received) == len(stored) == 15  # one application session per simulated session
    sent = {tuple(t.user_text for t in s.turns) for s in stored}
    assert {tuple(messages) for messages in received} == sent
    for session in stored:
        assert session.persona
        pack = resolve_pack(session.scenario)
        goals = [t.description for t in pack.personas.targets]
        for text in (t.user_text for t in session.turns):
            assert not copies_brief(text, session.persona, allowed=goals), text
            assert session.persona not in text


async def test_an_application_error_mid_dialogue_is_recorded_and_survived(
    sqlite_db: Database,
) -> None:
    once = ApplicationEntry(
        name="once", spec="python:sim_apps:FlakyApp", options={"fail_turns": "1"}
    )
    twice = ApplicationEntry(
        name="twice", spec="python:sim_apps:FlakyApp", options={"fail_turns": "1,2"}
    )
    plan = plan_for(once, twice, sessions=6, max_turns=5, strategies=["crescendo"])
    result = await execute_plan(plan, sqlite_db)
    stored = sessions(sqlite_db, result.run_id)
    for session in (s for s in stored if s.application == "once" and len(s.turns) > 1):
        error = session.turns[1]
        assert error.error == "RuntimeError: backend down at turn 1" and error.response_text is None
        assert len(session.turns) > 2  # it retried with a rephrase
        assert session.turns[2].user_text != error.user_text
        assert session.end_reason is not EndReason.APP_ERROR
    gave_up = [s for s in stored if s.application == "twice" and len(s.turns) > 1]
    assert gave_up
    for session in gave_up:
        assert session.end_reason is EndReason.APP_ERROR
        assert [t.failed for t in session.turns] == [False, True, True]
    assert result.stats.failed_sessions == len(gave_up)
    assert get_run(sqlite_db, result.run_id).status == "complete_with_failures"


async def test_an_application_that_cannot_start_sessions_ends_each_with_app_error(
    sqlite_db: Database,
) -> None:
    down = ApplicationEntry(
        name="down", spec="python:sim_apps:FlakyApp", options={"no_sessions": "y"}
    )
    result = await execute_plan(plan_for(down, sessions=3), sqlite_db)
    for session in sessions(sqlite_db, result.run_id):
        assert session.end_reason is EndReason.APP_ERROR
        (turn,) = session.turns
        assert turn.error == "could not start a session: no capacity for new sessions"
        assert answers(sqlite_db, session.id) == []  # nothing to judge, nothing answered


async def test_aria_submissions_get_one_session_per_simulated_user(
    sqlite_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    submission = Path(__file__).resolve().parents[1] / "apps" / "submissions" / "team_a"
    monkeypatch.setenv("SIM_ARIA_AUTH", '{"key": "k"}')
    app = ApplicationEntry(name="team-a", spec=f"aria:{submission}", auth_env="SIM_ARIA_AUTH")
    plan = plan_for(app, level=Level.FIELD_TESTING, sessions=4, max_turns=5)
    result = await execute_plan(plan, sqlite_db)
    stored = sessions(sqlite_db, result.run_id)
    assert len(stored) == 4
    for session in stored:
        # The submission numbers the turns of its own session: state is never shared.
        assert [t.response_text for t in session.turns] == [
            f"A says #{t.index + 1} (k): {t.user_text}" for t in session.turns
        ]
        # An echo never serves the task: the tester gives up after three tries.
        assert session.end_reason is EndReason.GAVE_UP and len(session.turns) == 3


async def test_resume_finishes_a_stopped_run_without_duplicates(tmp_path: Path) -> None:
    slow = ApplicationEntry(
        name="slow", spec="python:sim_apps:RecordingApp", options={"log": "resume", "delay_ms": 1}
    )
    plan = plan_for(slow, UNGUARDED, scenarios=SCENARIOS, sessions=4)
    field = plan_for(level=Level.FIELD_TESTING, sessions=4)
    plan = plan.model_copy(update={"levels": {**plan.levels, **field.levels}})
    reference = Database(f"sqlite:///{tmp_path / 'reference.db'}")
    whole = await execute_plan(plan, reference)
    expected = sorted(_transcript(reference, s) for s in sessions(reference, whole.run_id))
    reference.dispose()

    db = Database(f"sqlite:///{tmp_path / 'stopped.db'}")
    done = 0

    def stop_after_some(_item: object) -> None:
        nonlocal done
        done += 1
        if done == 20:
            raise RuntimeError("power cut")

    stopped = await execute_plan(plan, db, on_session_done=stop_after_some)
    assert stopped.error is not None and "power cut" in stopped.error
    (run,) = list_runs(db)
    assert run.status == "failed" and len(completed_work_keys(db, run.id)) < len(expected)
    resumed = await execute_plan(plan, db, resume_run=run.id)
    assert resumed.skipped >= 20
    stored = sorted(_transcript(db, s) for s in sessions(db, run.id))
    assert [key for key, *_ in stored] == sorted({key for key, *_ in stored})  # no duplicates
    assert stored == expected  # no gaps, and the redone sessions are the same dialogues
    db.dispose()


def test_a_persona_template_with_a_missing_parameter_fails_at_load(
    tmp_path: Path, sqlite_db: Database
) -> None:
    pack = tmp_path / "broken"
    shutil.copytree(builtin_pack_dir() / "tv_spoilers", pack)
    persona = pack / "personas" / "impatient_viewer.j2"
    persona.write_text(
        persona.read_text(encoding="utf-8") + "\nYou live in {{ home_town }}.\n", encoding="utf-8"
    )
    plan = plan_for(GUARDED, scenarios=[str(pack)], sessions=2)
    with pytest.raises(PreflightError, match="'home_town'") as info:
        asyncio.run(execute_plan(plan, sqlite_db))
    (problem,) = info.value.problems
    assert "impatient_viewer.j2" in problem.message
    assert list_runs(sqlite_db) == []  # nothing ran
