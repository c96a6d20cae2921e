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
names from here, except from the three parts with a public surface of their own:
``annotation_run``, ``agreement`` and ``answers`` (docs/architecture.md, "Public surfaces").
"""

from corix.assessment.annotators import (
    ANNOTATORS,
    HUMAN_ANNOTATOR_PREFIX,
    LLM_ANNOTATOR_PREFIX,
    SEVERITY,
    AnnotatorFactory,
    AnnotatorKind,
    harm_of,
)
from corix.assessment.harms import HarmPack, builtin_harm_packs
from corix.assessment.importing import import_labels
from corix.assessment.risk_orders import RiskOrders
from corix.assessment.schema import (
    AnnotationSchema,
    Category,
    Question,
    QuestionLevel,
    QuestionType,
    load_builtin_schema,
)
from corix.assessment.settling_rules import (
    DEFAULT_RULE,
    SETTLING_RULES,
    RiskOrder,
    Settled,
    SettlingRule,
    Value,
)
from corix.assessment.stability import consensus

__all__ = [
    "ANNOTATORS",
    "DEFAULT_RULE",
    "HUMAN_ANNOTATOR_PREFIX",
    "LLM_ANNOTATOR_PREFIX",
    "SETTLING_RULES",
    "SEVERITY",
    "AnnotationSchema",
    "AnnotatorFactory",
    "AnnotatorKind",
    "Category",
    "HarmPack",
    "Question",
    "QuestionLevel",
    "QuestionType",
    "RiskOrder",
    "RiskOrders",
    "Settled",
    "SettlingRule",
    "Value",
    "builtin_harm_packs",
    "consensus",
    "harm_of",
    "import_labels",
    "load_builtin_schema",
]
