"""``delete_run``: a run goes with every row that hangs off it (the foreign keys cascade on
both backends), and another run keeps all of its own."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from corix.domain import EndReason, Level, Provenance, SessionSource, TurnRecord
from corix.storage import (
    Database,
    NewPass,
    NewQuestionnaireAnswer,
    StoredAnswer,
    StoredConsensus,
    create_run,
    deletable_run,
    delete_run,
    ensure_application,
    get_run,
    holding_run,
    insert_passes,
    list_runs,
)
from corix.storage.annotations import add_consensus
from corix.storage.orm import (
    AnnotationAnswerRow,
    AnnotationConsensusRow,
    AnnotationPassRow,
    Base,
    QuestionnaireResponseRow,
    SessionRow,
    TurnRow,
)
from corix.storage.run_lease import RunHeld
from corix.storage.sessions import (
    NewTurn,
    SessionEnd,
    add_questionnaire_answers,
    add_turns,
    finish_sessions,
    start_sessions,
)
from corix.storage.store_records import NewSession
from support.plans import bare_plan

HANGING_OFF_A_RUN: tuple[type[Base], ...] = (
    SessionRow,
    TurnRow,
    QuestionnaireResponseRow,
    AnnotationPassRow,
    AnnotationAnswerRow,
    AnnotationConsensusRow,
)


def _stored_session(db: Database, run_id: str, app_id: int) -> None:
    """A run with one finished session, its turn, answer, pass and consensus."""
    session_id = f"{run_id}-s"
    create_run(db, run_id, name=run_id, plan=bare_plan(), seed=0)
    with db.session() as tx:
        start_sessions(
            tx,
            [
                NewSession(
                    id=session_id,
                    run_id=run_id,
                    work_key="k",
                    application_id=app_id,
                    scenario="tv_spoilers",
                    level=Level.MODEL_TESTING,
                    source=SessionSource.SCRIPTED,
                    provenance=Provenance(application="app", scenario="tv_spoilers"),
                )
            ],
        )
        add_turns(tx, [NewTurn(session_id, TurnRecord(index=0, user_text="hi"))])
        add_questionnaire_answers(
            tx, [NewQuestionnaireAnswer(session_id, "q_helpful", "sim", True, value=4.0)]
        )
        finish_sessions(tx, [SessionEnd(session_id, EndReason.SCRIPT_DONE)])
        add_consensus(
            tx,
            [StoredConsensus(session_id, "risk", "rules", "q1", None, "no", "majority", 1, 0.0)],
        )
    answer = StoredAnswer("q1", None, "no", None)
    insert_passes(
        db, [NewPass(session_id, "risk", "rules", "rules", 1, 0, True, None, {}, (answer,))]
    )


def _rows(db: Database) -> dict[str, int]:
    with db.session() as s:
        return {
            row.__tablename__: int(s.scalar(select(func.count()).select_from(row)) or 0)
            for row in HANGING_OFF_A_RUN
        }


def test_deleting_a_run_deletes_everything_that_hangs_off_it(any_db: Database) -> None:
    app_id = ensure_application(any_db, "app", "demo:guarded")
    _stored_session(any_db, "kept", app_id)
    one_run = _rows(any_db)
    assert set(one_run.values()) == {1}
    _stored_session(any_db, "doomed", app_id)
    assert delete_run(any_db, "doomed") == 1
    assert _rows(any_db) == one_run
    assert [run.id for run in list_runs(any_db)] == ["kept"]


def test_a_run_a_live_process_holds_is_not_deleted(any_db: Database) -> None:
    # `corix runs delete` asked before its prompt, in another transaction, and delete_run
    # not at all: a resume started while the prompt waited had its run deleted under it.
    create_run(any_db, "run-held", name="held", plan=bare_plan(), seed=0)
    with holding_run(any_db, "run-held", "corix run --resume") as lease:
        with pytest.raises(RunHeld, match=f"held by {re.escape(lease.holder)}"):
            deletable_run(any_db, "run-held")
        with pytest.raises(RunHeld, match=f"held by {re.escape(lease.holder)}"):
            delete_run(any_db, "run-held")
        assert get_run(any_db, "run-held").lease_holder == lease.holder
    assert deletable_run(any_db, "run-held").id == "run-held"  # free again
    assert delete_run(any_db, "run-held") == 0
