"""corix's own annotators and settling rules (:data:`corix.registry.BUILTIN_PLUGINS`)."""

from __future__ import annotations

from corix.assessment.annotators.base import ANNOTATORS
from corix.assessment.annotators.llm import llm_annotator, llm_harm_annotator
from corix.assessment.annotators.reference import reference_annotator
from corix.assessment.annotators.reference_harms import reference_harm_annotator
from corix.assessment.settling_rules import BUILTIN_RULES, SETTLING_RULES
from corix.registry import Plugin


def register(plugin: Plugin) -> None:
    plugin.add(ANNOTATORS, "reference", reference_annotator)
    plugin.add(ANNOTATORS, "reference-harms", reference_harm_annotator)
    plugin.add(ANNOTATORS, "llm", llm_annotator)
    plugin.add(ANNOTATORS, "llm-harms", llm_harm_annotator)
    for rule in BUILTIN_RULES:
        plugin.add(SETTLING_RULES, rule.name, rule)
