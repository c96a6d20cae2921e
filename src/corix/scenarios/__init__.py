"""Scenarios, shared by every layer: the pack format, loading, test packets, guardrail rules,
scripted model tests, personas and packet checks."""

from corix.scenarios.checks import DialogueCheck, PacketCheck, checker_for
from corix.scenarios.guardrails import holds_for_all, prohibiting_rules
from corix.scenarios.loader import (
    PACK_FOLDERS,
    list_builtin_packs,
    load_pack,
    resolve_pack,
    validate_pack,
)
from corix.scenarios.models import (
    Decoy,
    GuardrailRule,
    ItemKind,
    Probe,
    QuestionnaireItem,
    ScenarioPack,
    Statement,
    TestPacket,
)
from corix.scenarios.pack_records import PackRecord, pack_record
from corix.scenarios.personas import PersonaInstance, expand_personas
from corix.scenarios.scripts import ScriptedTest, expand_model_tests, resolve_selector
from corix.scenarios.text import PhraseIndex, tokenize
from corix.scenarios.tools import Toolbox

__all__ = [
    "PACK_FOLDERS",
    "Decoy",
    "DialogueCheck",
    "GuardrailRule",
    "ItemKind",
    "PackRecord",
    "PacketCheck",
    "PersonaInstance",
    "PhraseIndex",
    "Probe",
    "QuestionnaireItem",
    "ScenarioPack",
    "ScriptedTest",
    "Statement",
    "TestPacket",
    "Toolbox",
    "checker_for",
    "expand_model_tests",
    "expand_personas",
    "holds_for_all",
    "list_builtin_packs",
    "load_pack",
    "pack_record",
    "prohibiting_rules",
    "resolve_pack",
    "resolve_selector",
    "tokenize",
    "validate_pack",
]
