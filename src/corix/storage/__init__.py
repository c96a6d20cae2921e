"""Storage: SQLAlchemy rows, Alembic migrations, a group-committing writer and the stores.

The stores are modules of functions, one per aggregate: ``applications``, ``runs`` (a
run's row is written there alone), ``sessions`` (sessions, turns and questionnaire
answers: the one write path every source goes through), ``annotations`` (passes and
consensus), and the web testbed's topics in :mod:`corix.storage.web`; the other modules
are read models for measurement and reports. They take and return typed records
(``store_records``, the domain's), never rows. Each stored kind has one reader that
chunks its ``IN`` lists (``database.in_chunks``): ``questionnaire_answers``,
``load_passes`` and ``iter_sessions`` (sessions with their turns).

One convention: a function exported here takes the :class:`Database` first and is one
unit of work (it commits, or rolls back on error). A step meant to be one of several in a
unit of work takes the open transaction first instead (``tx``): the write path's steps
(``sessions.start_sessions``, ``add_turns``, ``finish_sessions``), ``runs.insert_run``,
and the stores of :mod:`corix.storage.web`, whose services compose their units of work
with ``transaction(db)``.
"""

# Both row modules load with the package, so ``Base.metadata`` always holds every table.
from corix.storage import orm, orm_web  # noqa: F401
from corix.storage._annotation_jobs import annotation_jobs, record_annotation_job
from corix.storage._run_packs import run_pack, run_packs
from corix.storage._session_index import iter_session_facts, session_index
from corix.storage._written_reports import record_written_report, written_reports
from corix.storage.annotations import (
    delete_consensus,
    delete_failed_passes,
    insert_passes,
    load_consensus,
    load_passes,
    pass_annotators,
    pass_keys,
    session_infos,
)
from corix.storage.applications import (
    application_conflict,
    ensure_application,
    next_version_name,
)
from corix.storage.attempts import (
    CallCount,
    cell_usage,
    session_attempts,
)
from corix.storage.clock import as_utc, is_past, utcnow
from corix.storage.database import (
    Database,
    DatabaseMissingError,
    SchemaUpgradeError,
    default_url,
)
from corix.storage.locks import LockHeld, exclusive
from corix.storage.measured import (
    MeasuredDialogue,
    StoredResolution,
    evaluation_runs,
    iter_measured_dialogues,
    measured_dialogues,
    series_runs,
    stored_resolutions,
)
from corix.storage.people import respondent_name, session_testers, usernames
from corix.storage.questionnaires import iter_run_questionnaire_answers, questionnaire_answers
from corix.storage.run_archive import iter_archived_sessions, run_document
from corix.storage.run_lease import (
    Lease,
    LeaseFence,
    LeaseLost,
    holding_run,
    shown_status,
    stopped_when_taken_over,
)
from corix.storage.run_provenance import (
    RespondentSummary,
    StabilitySummary,
    iter_pass_provenance,
    respondent_summaries,
    stability_summaries,
)
from corix.storage.run_restore import RestoredRun, restore_run
from corix.storage.runs import (
    FAILED_END_REASONS,
    NewRun,
    RecordedSession,
    create_run,
    deletable_run,
    delete_run,
    finish_run,
    get_run,
    list_runs,
    run_applications,
    run_totals,
    set_run_status,
    set_run_status_if,
    store_recorded_run,
)
from corix.storage.sessions import (
    SessionEnd,
    completed_work_keys,
    count_complete_sessions,
    count_completed_work,
    discard_incomplete_sessions,
    iter_sessions,
    load_session,
)
from corix.storage.sinks import AnnotationSink, CollectedRecords, RecordSink
from corix.storage.store_records import (
    AnnotationJobRecord,
    NewPass,
    NewQuestionnaireAnswer,
    NewSession,
    RunRecord,
    RunTotals,
    StoredAnswer,
    StoredConsensus,
    StoredPass,
    StoredValue,
    WrittenReportRecord,
)
from corix.storage.text import storable_text
from corix.storage.transactions import NotFoundError
from corix.storage.unavailable import StorageUnavailable, storage_trouble
from corix.storage.writer import RecordWriter, Rejected

__all__ = [
    "FAILED_END_REASONS",
    "AnnotationJobRecord",
    "AnnotationSink",
    "CallCount",
    "CollectedRecords",
    "Database",
    "DatabaseMissingError",
    "Lease",
    "LeaseFence",
    "LeaseLost",
    "LockHeld",
    "MeasuredDialogue",
    "NewPass",
    "NewQuestionnaireAnswer",
    "NewRun",
    "NewSession",
    "NotFoundError",
    "RecordSink",
    "RecordWriter",
    "RecordedSession",
    "Rejected",
    "RespondentSummary",
    "RestoredRun",
    "RunRecord",
    "RunTotals",
    "SchemaUpgradeError",
    "SessionEnd",
    "StabilitySummary",
    "StorageUnavailable",
    "StoredAnswer",
    "StoredConsensus",
    "StoredPass",
    "StoredResolution",
    "StoredValue",
    "WrittenReportRecord",
    "annotation_jobs",
    "application_conflict",
    "as_utc",
    "cell_usage",
    "completed_work_keys",
    "count_complete_sessions",
    "count_completed_work",
    "create_run",
    "default_url",
    "deletable_run",
    "delete_consensus",
    "delete_failed_passes",
    "delete_run",
    "discard_incomplete_sessions",
    "ensure_application",
    "evaluation_runs",
    "exclusive",
    "finish_run",
    "get_run",
    "holding_run",
    "insert_passes",
    "is_past",
    "iter_archived_sessions",
    "iter_measured_dialogues",
    "iter_pass_provenance",
    "iter_run_questionnaire_answers",
    "iter_session_facts",
    "iter_sessions",
    "list_runs",
    "load_consensus",
    "load_passes",
    "load_session",
    "measured_dialogues",
    "next_version_name",
    "pass_annotators",
    "pass_keys",
    "questionnaire_answers",
    "record_annotation_job",
    "record_written_report",
    "respondent_name",
    "respondent_summaries",
    "restore_run",
    "run_applications",
    "run_document",
    "run_pack",
    "run_packs",
    "run_totals",
    "series_runs",
    "session_attempts",
    "session_index",
    "session_infos",
    "session_testers",
    "set_run_status",
    "set_run_status_if",
    "shown_status",
    "stability_summaries",
    "stopped_when_taken_over",
    "storable_text",
    "storage_trouble",
    "store_recorded_run",
    "stored_resolutions",
    "usernames",
    "utcnow",
    "written_reports",
]
