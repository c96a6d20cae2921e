"""The web's stores on SQLite and PostgreSQL: the migrations make their tables; they take
and return records, share the run's write path for sessions, turns and passes, and turn a
taken key into ``Duplicate``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from corix.domain import Level, Provenance, SessionSource, TurnRecord
from corix.storage import Database, load_session
from corix.storage.clock import as_utc, utcnow
from corix.storage.orm import Base
from corix.storage.store_records import NewPass, NewSession, StoredAnswer
from corix.storage.web import (
    Duplicate,
    Transaction,
    accounts,
    assignments,
    dialogues,
    passes,
    qualification,
    queues,
    series,
    transaction,
)
from corix.storage.web.accounts import InvitationState, UserRecord
from corix.storage.web.applications import RegistrationCheck, add_application
from corix.storage.web.assignments import AssignmentRecord, NewAssignment
from corix.storage.web.qualification import NewAttempt

HUMAN_RUN = "human-s1"

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
    "web_expired_claims",
}


@pytest.mark.filterwarnings("ignore:.*expression-based index")
def test_migrations_create_exactly_the_web_tables(any_db: Database) -> None:
    with any_db.engine.connect() as connection:
        assert set(inspect(connection).get_table_names()) >= WEB_TABLES
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []


def _series(db: Database) -> tuple[str, int, UserRecord]:
    """A series with one application and one tester."""
    evaluation_id = series.create_series(
        db,
        slug="s1",
        name="Series one",
        description="",
        scenarios=["tv_spoilers"],
        levels=["red_teaming"],
        passes_per_item=2,
        review_rate=0.5,
        max_turns=5,
        human_run_id=lambda evaluation: f"human-{evaluation}",
        human_run_name="Series one (human sessions)",
        packs=[],
    )
    with transaction(db) as tx:
        app_id = _application(tx, evaluation_id)
        tester = accounts.add_user(tx, "tess", "hash", "red_teamer")
    return evaluation_id, app_id, tester


def _application(tx: Transaction, evaluation_id: str) -> int:
    return add_application(
        tx,
        evaluation_id,
        name="App",
        spec="demo:guarded",
        options={},
        auth={"api_key": "secret"},
        version="1",
        check=RegistrationCheck(ok=True, steps=()),
    )


def _human_session(row: AssignmentRecord, application: str) -> NewSession:
    return NewSession(
        id="h1",
        run_id=HUMAN_RUN,
        work_key=f"assignment-{row.id}",
        application_id=row.application_id,
        scenario=row.scenario,
        level=Level(row.level),
        source=SessionSource.HUMAN,
        provenance=Provenance(application=application, scenario=row.scenario),
        tester_id=row.user_id,
    )


def _started(db: Database) -> tuple[AssignmentRecord, UserRecord]:
    evaluation_id, app_id, tester = _series(db)
    with transaction(db) as tx:
        assignments.add_assignments(
            tx,
            [
                NewAssignment(
                    "tok", evaluation_id, tester.id, app_id, "tv_spoilers", "red_teaming", 1, None
                )
            ],
        )
        row = assignments.by_token(tx, "tok")
    assert row is not None
    claim = ("assigned", "in_session")
    assert assignments.start_session(db, row.id, claim=claim, session=_human_session)
    assert not assignments.start_session(db, row.id, claim=claim, session=_human_session)
    return row, tester


def test_a_web_session_is_stored_like_a_runs_and_its_turn_index_is_taken_once(
    any_db: Database,
) -> None:
    row, _tester = _started(any_db)
    dialogues.store_turn(any_db, "h1", TurnRecord(index=0, user_text="hi", response_text="hello"))
    dialogues.store_turn(any_db, "h1", TurnRecord(index=1, user_text="again", error="timeout"))
    with pytest.raises(Duplicate):
        dialogues.store_turn(any_db, "h1", TurnRecord(index=1, user_text="twice"))
    record = load_session(any_db, "h1")
    assert record.source is SessionSource.HUMAN and record.provenance.application == "App"
    assert [t.user_text for t in record.turns] == ["hi", "again"]
    with transaction(any_db) as tx:
        assert [(t.index, t.reply) for t in dialogues.turns(tx, "h1")] == [
            (0, "hello"),
            (1, None),  # a failed turn shows no reply; its error stays stored
        ]
        assert dialogues.turn_count(tx, "h1") == 2
        started = assignments.by_token(tx, "tok")
    assert started is not None
    assert (started.status, started.session_id) == ("in_session", "h1")
    assert record.provenance.scenario == row.scenario


def test_an_invitation_is_used_once_and_an_expired_one_stays_unused(any_db: Database) -> None:
    now = utcnow()
    accounts.add_invitation(
        any_db, "fresh", "annotator", created_by=None, created_at=now, expires_at=now + timedelta(1)
    )
    accounts.add_invitation(
        any_db, "old", "annotator", created_by=None, created_at=now, expires_at=now - timedelta(1)
    )
    assert accounts.accept_invitation(any_db, "nope", "ann", "hash") is InvitationState.UNKNOWN
    assert accounts.accept_invitation(any_db, "old", "ann", "hash") is InvitationState.EXPIRED
    # The expired claim was rolled back: the invitation reads as expired, not used.
    assert accounts.invitation(any_db, "old") is InvitationState.EXPIRED
    user = accounts.accept_invitation(any_db, "fresh", "ann", "hash")
    assert isinstance(user, UserRecord) and user.role == "annotator"
    assert accounts.accept_invitation(any_db, "fresh", "ann2", "hash") is InvitationState.USED
    assert [u.username for u in accounts.users(any_db)] == ["ann"]


def test_an_account_takes_another_role_and_an_unknown_one_is_reported(any_db: Database) -> None:
    with transaction(any_db) as tx:
        tess = accounts.add_user(tx, "tess", "hash", "field_tester")
    assert accounts.set_role(any_db, tess.id, "annotator")
    assert not accounts.set_role(any_db, tess.id + 1, "annotator")
    assert [(u.username, u.role) for u in accounts.users(any_db)] == [("tess", "annotator")]


def test_a_taken_username_is_a_duplicate_and_leaves_the_invitation_usable(
    any_db: Database,
) -> None:
    now = utcnow()
    with transaction(any_db) as tx:
        accounts.add_user(tx, "ann", "hash", "annotator")
    accounts.add_invitation(
        any_db, "link", "annotator", created_by=None, created_at=now, expires_at=now + timedelta(1)
    )
    with pytest.raises(Duplicate):
        accounts.accept_invitation(any_db, "link", "ann", "hash")
    assert not isinstance(accounts.invitation(any_db, "link"), InvitationState)


def test_peoples_passes_come_back_with_their_series_and_answers(any_db: Database) -> None:
    row, _tester = _started(any_db)
    with transaction(any_db) as tx:
        people = [accounts.add_user(tx, f"ann{n}", "hash", "annotator") for n in (1, 2)]
        for person, pass_no, value in ((people[0], 1, "yes"), (people[1], 2, 3.0)):
            token = f"t{pass_no}"
            queues.add_task(
                tx,
                token=token,
                evaluation_id=row.evaluation_id,
                user_id=person.id,
                session_id="h1",
                category="risk",
                pass_no=pass_no,
                status="open",
                created_at=utcnow(),
            )
            closed = queues.close_task(tx, token, person.id, claim=("open", "done"))
            assert closed is not None
            new = NewPass(
                session_id="h1",
                category="risk",
                annotator=f"human:p{pass_no}",
                annotator_kind=passes.HUMAN,
                pass_no=pass_no,
                repeat_no=0,
                ok=True,
                error=None,
                provenance={},
                answers=(StoredAnswer("q", None, value, None),),
            )
            queues.add_task_pass(tx, closed.id, new, seconds_on_item=12.0)
        assert queues.close_task(tx, "t1", people[0].id, claim=("open", "done")) is None
    with transaction(any_db) as tx:
        made = passes.human_passes(tx, evaluation_id=row.evaluation_id, category="risk")
        assert [(p.pass_no, p.evaluation_id) for p in made] == [
            (1, row.evaluation_id),
            (2, row.evaluation_id),
        ]
        assert [p.answers[0].value for p in made] == ["yes", 3.0]
        assert passes.human_passes(tx, evaluation_id="other") == []
        assert set(passes.seconds_on_items(tx, [p.id for p in made]).values()) == {12.0}
        assert queues.pass_counts(tx, row.evaluation_id, "done") == {"risk": {1: 1, 2: 1}}


def test_qualification_draws_and_attempts_come_back_linked_and_at_their_time(
    any_db: Database,
) -> None:
    earlier = utcnow() - timedelta(hours=1)
    with transaction(any_db) as tx:
        ann = accounts.add_user(tx, "ann", "hash", "annotator")
        qualification.add_draw(tx, ann.id, "v1", ["g1", "g2"])
        drawn = qualification.open_draw(tx, ann.id, "v1")
        assert drawn is not None
        attempt = NewAttempt(ann.id, "v1", 0.5, 0.8, False, {"g1": {"q": "yes"}}, at=earlier)
        assert qualification.add_attempt(tx, drawn.id, attempt)
    with transaction(any_db) as tx:
        qualification.add_draw(tx, ann.id, "v1", ["g3"])
    with transaction(any_db) as tx:
        (made,) = qualification.attempts(tx, ann.id)
        assert (made.test_version, made.score, made.passed) == ("v1", 0.5, False)
        assert made.answers == {"g1": {"q": "yes"}}
        assert as_utc(made.created_at) == earlier  # the service's time, not the insert's
        assert [(d.dialogue_ids, d.attempt_id) for d in qualification.draws(tx, ann.id)] == [
            (["g1", "g2"], made.id),
            (["g3"], None),
        ]
        assert qualification.attempt_tally(tx, ann.id, "v1").attempts == 1
