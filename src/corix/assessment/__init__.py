"""The assessment layer: what annotators are asked, how they answer, how answers summarize.

* :mod:`~corix.assessment.schema` — the annotation schema (ARIA's five categories built in).
* :mod:`~corix.assessment.answers` — validating a pass against the schema, and gating.
* :mod:`~corix.assessment.harms` — harm packs: guidelines, severity scale, defect rule.
* :mod:`~corix.assessment.stability` — consensus and flip rate over repeated runs.
* :mod:`~corix.assessment.agreement` — agreement between annotators and groups.
* :mod:`~corix.assessment.annotators` — the automated annotators and their registry.

The modules above are pure: values in, values out. Two parts read and write the record:
:mod:`~corix.assessment.annotation_run` (annotating a stored run) and
:mod:`~corix.assessment.importing` (human labels imported as passes). Other packages import
names from here; ``annotation_run`` is the one subpackage with a public surface of its own.
"""

from corix.assessment.agreement import (
    AgreementReport,
    LabelRow,
    compare,
    compare_labels,
    compare_per_question,
    krippendorff_alpha,
    numeric_questions,
    pairwise_agreement,
    read_labels,
)
from corix.assessment.annotators import (
    ANNOTATORS,
    HUMAN_ANNOTATOR_PREFIX,
    LLM_ANNOTATOR_PREFIX,
    SEVERITY,
    Annotator,
    AnnotatorFactory,
    AnnotatorKind,
    AnnotatorSetup,
    harm_of,
)
from corix.assessment.answers import (
    Answer,
    AnswerKey,
    AnswerProblem,
    AnswerValidationError,
    AnswerValue,
    categories_for,
    is_shown,
    is_violation,
    normalize_value,
    validate_answers,
)
from corix.assessment.harms import (
    DefectDirection,
    HarmPack,
    builtin_harm_pack_names,
    builtin_harm_packs,
    load_harm_pack,
    load_harm_pack_file,
)
from corix.assessment.importing import import_labels
from corix.assessment.risk_orders import RiskOrders
from corix.assessment.schema import (
    AnnotationSchema,
    Category,
    Question,
    QuestionLevel,
    QuestionType,
    load_builtin_schema,
    load_schema,
)
from corix.assessment.settling_rules import (
    DEFAULT_RULE,
    SETTLING_RULES,
    RiskOrder,
    Settled,
    SettlingRule,
    Value,
)
from corix.assessment.stability import (
    Consensus,
    JudgeNoise,
    StabilityReport,
    change_probability,
    consensus,
    is_settled,
    stability_report,
)

__all__ = [
    "ANNOTATORS",
    "DEFAULT_RULE",
    "HUMAN_ANNOTATOR_PREFIX",
    "LLM_ANNOTATOR_PREFIX",
    "SETTLING_RULES",
    "SEVERITY",
    "AgreementReport",
    "AnnotationSchema",
    "Annotator",
    "AnnotatorFactory",
    "AnnotatorKind",
    "AnnotatorSetup",
    "Answer",
    "AnswerKey",
    "AnswerProblem",
    "AnswerValidationError",
    "AnswerValue",
    "Category",
    "Consensus",
    "DefectDirection",
    "HarmPack",
    "JudgeNoise",
    "LabelRow",
    "Question",
    "QuestionLevel",
    "QuestionType",
    "RiskOrder",
    "RiskOrders",
    "Settled",
    "SettlingRule",
    "StabilityReport",
    "Value",
    "builtin_harm_pack_names",
    "builtin_harm_packs",
    "categories_for",
    "change_probability",
    "compare",
    "compare_labels",
    "compare_per_question",
    "consensus",
    "harm_of",
    "import_labels",
    "is_settled",
    "is_shown",
    "is_violation",
    "krippendorff_alpha",
    "load_builtin_schema",
    "load_harm_pack",
    "load_harm_pack_file",
    "load_schema",
    "normalize_value",
    "numeric_questions",
    "pairwise_agreement",
    "read_labels",
    "stability_report",
    "validate_answers",
]
