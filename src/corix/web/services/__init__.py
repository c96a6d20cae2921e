"""The testbed's services: plain classes over a :class:`~corix.storage.Database`, no HTTP.

Routes stay thin by calling these; tests drive them directly.
"""

from corix.web.services.accounts import Accounts, SignedInUser
from corix.web.services.agreement_view import (
    AgreementPage,
    QuestionAgreement,
    agreement_by_question,
)
from corix.web.services.annotation_queue import AnnotationQueue
from corix.web.services.assignments import Assigner
from corix.web.services.automation import AutomatedRuns
from corix.web.services.balancing import balance_slots
from corix.web.services.consensus import Consensus
from corix.web.services.evaluations import Evaluations, EvaluationSettings, human_run_id
from corix.web.services.live_apps import LiveApplications
from corix.web.services.progress import evaluation_progress
from corix.web.services.qualification import Qualification
from corix.web.services.review import Review
from corix.web.services.service_errors import (
    Conflict,
    Forbidden,
    Gone,
    InputError,
    NotFound,
    ServiceError,
)
from corix.web.services.tester_sessions import TesterSessions

__all__ = [
    "Accounts",
    "AgreementPage",
    "AnnotationQueue",
    "Assigner",
    "AutomatedRuns",
    "Conflict",
    "Consensus",
    "EvaluationSettings",
    "Evaluations",
    "Forbidden",
    "Gone",
    "InputError",
    "LiveApplications",
    "NotFound",
    "Qualification",
    "QuestionAgreement",
    "Review",
    "ServiceError",
    "SignedInUser",
    "TesterSessions",
    "agreement_by_question",
    "balance_slots",
    "evaluation_progress",
    "human_run_id",
]
