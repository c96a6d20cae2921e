"""The scenario-pack format: the pydantic models behind ``pack.yaml`` and the test packet.

A pack is a folder holding ``pack.yaml`` (a :class:`PackManifest`), a test packet (a
:class:`TestPacket`) and optionally Jinja persona templates (``*.j2``). Every model forbids
unknown keys so that a misspelt field is an error with a line number, never silently ignored.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PositiveInt,
    StringConstraints,
    model_validator,
)

from corix.domain import JsonObject, Level
from corix.scenarios.text import tokenize

Identifier = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_.-]*$")]
PackName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]
VariableName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
Scalar = str | int | float | bool
TagValue = Scalar | list[Scalar]
Context = JsonObject

# Questionnaire items every pack carries: reports and the CoRIx tree refer to these ids.
FIELD_TESTING_ITEM_IDS = (
    "q_helpful",
    "q_accurate",
    "q_trust",
    "q_guardrail_respected",
    "q_would_use",
)
RED_TEAMING_ITEM_IDS = (
    "rt_strategies",
    "rt_refinement",
    "rt_outcome",
    "rt_vulnerabilities",
    "rt_difficulty",
)


def _relative_file(value: str) -> str:
    """Pack files must stay inside the pack folder, so a pack can be copied as one unit."""
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts:
        raise ValueError("must be a path relative to the pack folder, without '..'")
    return value


def _markers(values: list[str]) -> list[str]:
    for marker in values:
        if not tokenize(marker):
            raise ValueError(f"marker {marker!r} has no words to match")
    return values


def _as_list(value: Any) -> Any:
    """Accept a single mapping where a list of conditions is expected."""
    return [value] if isinstance(value, dict) else value


def _unique_ids(items: list[Any]) -> list[Any]:
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise ValueError(f"duplicate id '{item.id}'")
        seen.add(item.id)
    return items


RelativeFile = Annotated[str, AfterValidator(_relative_file)]
Markers = Annotated[list[str], Field(min_length=1), AfterValidator(_markers)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- test packet -----------------------------------------------------------------------------


class Condition(_Model):
    """Compares a fact's tag with a session-context parameter (``context``) or a ``value``.

    ``eq ne lt le gt ge`` compare scalars (numbers numerically, text case-insensitively);
    ``in``: the tag's value is one of the operand's; ``contains``: the tag's list holds the
    operand; ``intersects``: the two share a value. A missing tag or context key never holds.
    """

    tag: str
    op: Literal["eq", "ne", "lt", "le", "gt", "ge", "in", "contains", "intersects"]
    context: VariableName | None = None
    value: TagValue | None = None

    @model_validator(mode="after")
    def _one_operand(self) -> Condition:
        if (self.context is None) == (self.value is None):
            raise ValueError("give exactly one of 'context' (a parameter name) or 'value'")
        return self


Conditions = Annotated[list[Condition], BeforeValidator(_as_list)]


class GuardrailRule(_Model):
    """Facts whose tags meet every condition are prohibited in that session context."""

    id: Identifier
    description: str
    prohibited_when: Annotated[Conditions, Field(min_length=1)]
    clarify: str | None = Field(
        default=None,
        description="What an assistant should ask when the context this rule needs is unknown.",
    )


class Statement(_Model):
    """A checkable statement: a reply *releases* it when one of its markers appears."""

    id: Identifier
    text: str
    markers: Markers
    tags: dict[str, TagValue] = Field(default_factory=dict)


class Fact(Statement):
    """True source material; prohibited only where a guardrail rule says so."""


class Decoy(Statement):
    """A plausible but false statement: always prohibited (stating it is confabulation)."""

    contradicts: Identifier | None = Field(default=None, description="The fact it gets wrong.")


class TestPacket(_Model):
    """The scenario's ground truth and redlines: what an annotator needs to judge a reply."""

    __test__: ClassVar[bool] = False  # not a pytest test class despite the name

    title: str
    description: str = ""
    facts: Annotated[list[Fact], Field(min_length=1)]
    decoys: list[Decoy] = Field(default_factory=list)
    rules: Annotated[list[GuardrailRule], AfterValidator(_unique_ids)] = Field(default_factory=list)
    aliases: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Other words people use for a tag value, e.g. gluten: [coeliac, wheat].",
    )
    refusal_markers: list[str] = Field(
        default_factory=list,
        description="Scenario-specific refusal phrases, added to the built-in ones.",
    )

    @model_validator(mode="after")
    def _consistent_ids(self) -> TestPacket:
        _unique_ids([*self.facts, *self.decoys])
        fact_ids = {fact.id for fact in self.facts}
        for decoy in self.decoys:
            if decoy.contradicts is not None and decoy.contradicts not in fact_ids:
                raise ValueError(
                    f"decoy '{decoy.id}' contradicts unknown fact '{decoy.contradicts}'"
                )
        return self

    @property
    def statements(self) -> list[Statement]:
        """Facts then decoys, in packet order."""
        return [*self.facts, *self.decoys]

    def statement(self, statement_id: str) -> Statement:
        for statement in self.statements:
            if statement.id == statement_id:
                return statement
        raise KeyError(statement_id)

    def guardrail_context(self, parameters: Mapping[str, Any]) -> JsonObject:
        """The session parameters the guardrail rules read (e.g. the episode seen), and only
        those: annotators need them to judge a violation, while the others (a red teamer's
        tactic) would hint at the testing level."""
        names = {
            condition.context
            for rule in self.rules
            for condition in rule.prohibited_when
            if condition.context is not None
        }
        return {name: parameters[name] for name in sorted(names) if name in parameters}


# --- questionnaires ----------------------------------------------------------------------------


class ItemKind(StrEnum):
    LIKERT5 = "likert5"
    CHOICE = "choice"
    TEXT = "text"


class Direction(StrEnum):
    """Which end of a Likert scale is good news; risk scores flip ``higher_is_better`` items."""

    HIGHER_IS_BETTER = "higher_is_better"
    HIGHER_IS_WORSE = "higher_is_worse"


class QuestionnaireItem(_Model):
    id: Identifier
    text: str
    kind: ItemKind
    options: list[str] = Field(default_factory=list)
    direction: Direction | None = None
    anchors: tuple[str, str] | None = Field(
        default=None, description="Labels of the Likert scale's low and high ends."
    )

    @model_validator(mode="after")
    def _kind_fields(self) -> QuestionnaireItem:
        if self.kind is ItemKind.LIKERT5 and self.direction is None:
            raise ValueError("a likert5 item needs a 'direction'")
        if self.kind is not ItemKind.LIKERT5 and (self.direction or self.anchors):
            raise ValueError("only likert5 items take 'direction' and 'anchors'")
        if self.kind is ItemKind.CHOICE:
            if len(set(self.options)) < 2 or len(set(self.options)) != len(self.options):
                raise ValueError("a choice item needs at least two distinct 'options'")
        elif self.options:
            raise ValueError("only choice items take 'options'")
        return self


Items = Annotated[list[QuestionnaireItem], AfterValidator(_unique_ids)]


class Questionnaires(_Model):
    """Items answered after a session, per level."""

    field_testing: Items
    red_teaming: Items


# --- parameters, scripts and personas ----------------------------------------------------------


class ParameterSpace(_Model):
    """Parameter sets: an explicit list, or a ``grid`` whose value lists are crossed.

    In YAML either a list of mappings, or ``{grid: {name: [values...]}}``. No parameters at all
    means one empty set.
    """

    sets: list[dict[VariableName, Any]] = Field(default_factory=list)
    grid: dict[VariableName, Annotated[list[Any], Field(min_length=1)]] = Field(
        default_factory=dict
    )

    @model_validator(mode="before")
    @classmethod
    def _list_means_sets(cls, data: Any) -> Any:
        return {"sets": data} if isinstance(data, list) else data

    @model_validator(mode="after")
    def _one_form(self) -> ParameterSpace:
        if self.sets and self.grid:
            raise ValueError("give either a list of parameter sets or a 'grid', not both")
        return self

    def expand(self) -> list[Context]:
        """Every parameter set, in a stable order (grids vary their last name fastest)."""
        if self.grid:
            names = list(self.grid)
            return [
                dict(zip(names, values, strict=True))
                for values in itertools.product(*self.grid.values())
            ]
        return [dict(parameters) for parameters in self.sets] or [{}]


class FactSelector(_Model):
    """Chooses packet statements: the listed ``ids`` plus every fact meeting all of ``where``.

    ``ids`` are Jinja templates rendered with the parameters (e.g. ``"{{ dish }}"``);
    ``where`` conditions compare fact tags with the parameters.
    """

    ids: list[str] = Field(default_factory=list)
    where: Conditions = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.ids and not self.where


class Probe(StrEnum):
    """What a scripted test probes: useful behaviour, or a guardrail under pressure."""

    CAPABILITY = "capability"
    GUARDRAIL = "guardrail"


class ModelTestScript(_Model):
    """User turns (Jinja templates) × parameter sets; each set makes one scripted dialogue."""

    id: Identifier
    version: str = "1"
    probe: Probe
    description: str
    turns: Annotated[list[str], Field(min_length=1)]
    parameters: ParameterSpace = Field(default_factory=ParameterSpace)
    required_facts: FactSelector = Field(
        default_factory=FactSelector,
        description="Permitted facts a good answer contains; withholding them is a violation.",
    )
    sample: PositiveInt | None = Field(
        default=None, description="Use this many parameter sets, drawn with the run's seed."
    )


class ModelTesting(_Model):
    scripts: Annotated[list[ModelTestScript], Field(min_length=1), AfterValidator(_unique_ids)]


class PersonaTemplate(_Model):
    """A simulated user's brief, as a Jinja template filled from each parameter set.

    Besides its parameters a template may use, for red teaming, ``target`` (``id``,
    ``description``) or, for field testing, ``task`` (``id``, ``description``,
    ``success_criteria``).
    """

    id: Identifier
    version: str
    level: Level
    description: str = ""
    text: str = ""
    file: RelativeFile | None = Field(default=None, description="A .j2 file in the pack folder.")
    parameters: ParameterSpace = Field(default_factory=ParameterSpace)

    @model_validator(mode="after")
    def _one_source(self) -> PersonaTemplate:
        if self.level is Level.MODEL_TESTING:
            raise ValueError("personas play red teamers or field testers, not model tests")
        if bool(self.text) == bool(self.file):
            raise ValueError("give exactly one of 'text' (inline Jinja) or 'file'")
        return self


class RedTeamTarget(_Model):
    """Prohibited content a red teamer goes after; releasing any of ``facts`` is a success."""

    id: Identifier
    description: str
    facts: FactSelector

    @model_validator(mode="after")
    def _selects_something(self) -> RedTeamTarget:
        if self.facts.empty:
            raise ValueError("a target must select the facts it goes after")
        return self


class FieldTask(_Model):
    """Something a field tester tries to get done, with how to tell that it was."""

    id: Identifier
    description: str
    success_criteria: Annotated[list[str], Field(min_length=1)]
    required_facts: FactSelector = Field(default_factory=FactSelector)


class Personas(_Model):
    templates: Annotated[list[PersonaTemplate], AfterValidator(_unique_ids)] = Field(
        default_factory=list
    )
    targets: Annotated[list[RedTeamTarget], AfterValidator(_unique_ids)] = Field(
        default_factory=list
    )
    tasks: Annotated[list[FieldTask], AfterValidator(_unique_ids)] = Field(default_factory=list)


# --- tools ---------------------------------------------------------------------------------------

ToolName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
"""OpenAI's rule for function names."""


class ToolResult(_Model):
    """One scripted result of a pack's tool: its text, or the error the tool reports."""

    when: dict[str, Scalar] = Field(
        default_factory=dict,
        description="Argument values this result answers (numbers numerically, text "
        "case-insensitively); empty: any call.",
    )
    text: str | None = None
    error: str | None = None

    @model_validator(mode="after")
    def _text_or_error(self) -> ToolResult:
        if (self.text is None) == (self.error is None):
            raise ValueError("a tool result has either 'text' or 'error'")
        return self


class PackTool(_Model):
    """A tool the pack gives applications that take tools. corix runs it from the pack:
    the first scripted result whose ``when`` the call's arguments match is its answer, so
    a scenario can plant privileged information in what a tool returns."""

    name: ToolName
    description: str
    parameters: JsonObject = Field(
        default_factory=lambda: {"type": "object", "properties": {}},
        description="The arguments as a JSON schema, sent to the model as given.",
    )
    results: Annotated[list[ToolResult], Field(min_length=1)]
    forbidden: str | None = Field(
        default=None,
        description="Why the guardrail forbids calling this tool at all; a call is a "
        "violation. Unset: calling it is allowed.",
    )


def _unique_names(tools: list[PackTool]) -> list[PackTool]:
    names = [tool.name for tool in tools]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"tool names must be unique; repeated: {', '.join(duplicates)}")
    return tools


# --- the manifest ------------------------------------------------------------------------------


class Guardrails(_Model):
    """What the application must not do and what it must keep doing, in plain words."""

    prohibited: Annotated[list[str], Field(min_length=1)]
    permitted: Annotated[list[str], Field(min_length=1)]


class Instructions(_Model):
    """Text shown to people: testers at each level, and annotators."""

    red_teaming: str
    field_testing: str
    annotators: str


class PackManifest(_Model):
    """``pack.yaml``."""

    format: Literal[1] = 1
    name: PackName
    version: str
    title: str
    risk: str
    description: str
    keywords: list[str] = Field(
        default_factory=list, description="Words that signal this scenario in free text."
    )
    guardrails: Guardrails
    test_packet: RelativeFile = "packet.yaml"
    instructions: Instructions
    questionnaires: Questionnaires
    model_testing: ModelTesting
    personas: Personas = Field(default_factory=Personas)
    tools: Annotated[list[PackTool], AfterValidator(_unique_names)] = Field(
        default_factory=list,
        description="Tools given to applications that take tools, run by corix from the pack.",
    )


class ScenarioPack(PackManifest):
    """A loaded pack: its manifest, its test packet, and the file it came from.

    Persona templates given as files have their ``text`` filled in, so a loaded pack never
    reads from disk again.
    """

    manifest_path: Path
    packet: TestPacket

    @property
    def root(self) -> Path:
        """The pack folder; relative file names in the manifest start here."""
        return self.manifest_path.parent
