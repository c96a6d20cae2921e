"""Everything a request handler can reach, built once per app and kept on ``app.state``."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta

from fastapi import Request

from corix.assessment import AnnotationSchema, load_builtin_schema
from corix.storage import Database
from corix.web.security import CsrfTokens, HashingPool, Passwords
from corix.web.services import (
    Accounts,
    AnnotationQueue,
    Assigner,
    AutomatedRuns,
    Consensus,
    Evaluations,
    LiveApplications,
    Qualification,
    Review,
    TesterSessions,
)
from corix.web.services.application_registry import ApplicationRegistry
from corix.web.services.machine_annotation import MachineAnnotations
from corix.web.services.qualification import QualificationRules
from corix.web.services.sign_in_throttle import SignInThrottle
from corix.web.services.training import ExemplarSet, builtin_exemplars, builtin_gold
from corix.web.settings import WebSettings


def accounts_for(db: Database, settings: WebSettings) -> Accounts:
    """Accounts with the settings' password hashing and lifetimes (also used by the CLI)."""
    passwords = Passwords(
        time_cost=settings.password_time_cost,
        memory_kib=settings.password_memory_kib,
        lanes=settings.password_lanes,
    )
    hashing = HashingPool(
        threads=settings.password_hash_threads,
        max_waiting=settings.password_queue,
        max_wait_s=settings.password_max_wait_s,
    )
    return Accounts(
        db,
        passwords,
        hashing,
        session_ttl=timedelta(hours=settings.session_hours),
        invitation_ttl=timedelta(days=settings.invitation_days),
        min_password_chars=settings.min_password_chars,
    )


@dataclass(frozen=True)
class WebState:
    db: Database
    settings: WebSettings
    schema: AnnotationSchema
    exemplars: ExemplarSet
    csrf: CsrfTokens
    throttle: SignInThrottle
    accounts: Accounts
    evaluations: Evaluations
    registry: ApplicationRegistry
    assigner: Assigner
    live: LiveApplications
    testers: TesterSessions
    qualification: Qualification
    queue: AnnotationQueue
    review: Review
    consensus: Consensus
    automation: AutomatedRuns
    machine_annotation: MachineAnnotations

    @classmethod
    def build(
        cls, db: Database, settings: WebSettings, *, rng: random.Random | None = None
    ) -> WebState:
        """``rng`` draws the qualification dialogues (default: the system's random source)."""
        schema = load_builtin_schema()
        live = LiveApplications(db, reply_deadline_s=settings.chat_reply_deadline_s)
        evaluations = Evaluations(db)
        qualification = Qualification(
            db,
            schema,
            builtin_gold(schema),
            QualificationRules(
                pass_mark=settings.qualification_pass_mark,
                draw_size=settings.qualification_draw_size,
                max_attempts=settings.qualification_max_attempts,
                cooldown=timedelta(minutes=settings.qualification_cooldown_minutes),
            ),
            rng=rng,
        )
        return cls(
            db=db,
            settings=settings,
            schema=schema,
            exemplars=builtin_exemplars(schema),
            csrf=CsrfTokens(settings.secret_key),
            throttle=SignInThrottle(
                db,
                max_failures=settings.login_max_failures,
                window=timedelta(seconds=settings.login_window_s),
                max_delay=timedelta(seconds=settings.login_max_delay_s),
                max_per_address=settings.login_max_per_address,
                address_delay=timedelta(seconds=settings.login_address_delay_s),
            ),
            accounts=accounts_for(db, settings),
            evaluations=evaluations,
            registry=ApplicationRegistry(
                db, evaluations, check_timeout_s=settings.application_check_timeout_s
            ),
            assigner=Assigner(db, schema),
            live=live,
            testers=TesterSessions(
                db,
                live,
                max_message_chars=settings.max_message_chars,
                max_text_answer_chars=settings.max_text_answer_chars,
            ),
            qualification=qualification,
            queue=AnnotationQueue(
                db,
                schema,
                qualification,
                claim_ttl=timedelta(minutes=settings.annotation_claim_minutes),
            ),
            review=Review(db, schema),
            consensus=Consensus(db, schema),
            automation=AutomatedRuns(db),
            machine_annotation=MachineAnnotations(db),
        )


def web_state(request: Request) -> WebState:
    state: WebState = request.app.state.corix
    return state
