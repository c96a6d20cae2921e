"""From stored passes to settled labels: each annotator's one judgement per item
(:mod:`.settle`), what settling did (:mod:`.settlement_summary`), and the leaf records
trees score.
"""

from corix.measurement.labels.leaf_records import (
    HARM_CATEGORY_PREFIX,
    StoredAnswer,
    answer_text,
    iter_questionnaire_answers,
    leaf_question,
    leaves_from_answers,
    number_text,
)
from corix.measurement.labels.settle import (
    GUARDRAIL_VIOLATION,
    RESOLVED,
    UNRESOLVED,
    Label,
    SettledRecord,
    Verdict,
    agreement_value,
    dialogue_value,
    settle_labels,
)
from corix.measurement.labels.settlement_summary import (
    Settlement,
    not_measurable_reason,
    settlement_of,
)

__all__ = [
    "GUARDRAIL_VIOLATION",
    "HARM_CATEGORY_PREFIX",
    "RESOLVED",
    "UNRESOLVED",
    "Label",
    "SettledRecord",
    "Settlement",
    "StoredAnswer",
    "Verdict",
    "agreement_value",
    "answer_text",
    "dialogue_value",
    "iter_questionnaire_answers",
    "leaf_question",
    "leaves_from_answers",
    "not_measurable_reason",
    "number_text",
    "settle_labels",
    "settlement_of",
]
