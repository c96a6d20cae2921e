"""corix's own summarizers and settling rules, registered through the ``corix.plugins``
entry point ``measurement``."""

from __future__ import annotations

from corix.assessment.settling import BUILTIN_RULES, SETTLING_RULES
from corix.measurement.summarizers import BUILTIN_SUMMARIZERS, SUMMARIZERS
from corix.registry import Plugin


def register(plugin: Plugin) -> None:
    for name, summarizer in BUILTIN_SUMMARIZERS.items():
        plugin.add(SUMMARIZERS, name, summarizer)
    for rule in BUILTIN_RULES:
        plugin.add(SETTLING_RULES, rule.name, rule)
