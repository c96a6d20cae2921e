"""The annotator's view of a session: everything needed to judge it, nothing that unblinds it.

Annotators never learn the testing level or the application (DESIGN, non-negotiable 5).
:func:`build_annotator_view` is the only place a stored session becomes annotator input,
so blinding is decided here once and tested here once. The view keeps:

* the turns: user text and response text; a failed turn only says that it failed, since
  an error message can name the application's host or product; a tool-using turn also
  its steps (tool calls and results) as blinded views (:func:`corix.domain.step_views`:
  no system messages, no provider call ids), cut to :data:`STEP_CHARS` each;
* which tools the scenario forbids calling (the pack's ``forbidden`` tools);
* the scenario and its test packet, guardrail and annotator instructions;
* the session context the guardrail depends on (e.g. ``episode_seen``), and no other
  parameter: a red teamer's tactic or a persona's name would hint at the level;
* the facts a good answer must contain: listed by the session's brief, or those of the
  field task it pursued;
* the application's system prompt, if the session recorded one, held only for verbatim
  leakage checks and never rendered into a prompt.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from corix.domain import JsonObject, Level, SessionRecord, StepView, TurnRecord, step_views
from corix.scenarios import ScenarioPack, TestPacket, resolve_selector

STEP_CHARS = 2000
"""A step (a tool call, a tool's result) is cut to this many characters for annotators."""


class ViewTurn(BaseModel):
    model_config = ConfigDict(frozen=True)

    index: int
    user_text: str
    response_text: str | None
    failed: bool
    steps: tuple[StepView, ...] = ()
    """A turn that holds more than two texts (tool calls and results): its blinded steps."""
    tools_called: tuple[str, ...] = ()
    """The names of the tools the application called in this turn, in order."""


class AnnotatorView(BaseModel):
    """A blinded session, as every annotator (reference, LLM) sees it."""

    model_config = ConfigDict(frozen=True)

    scenario: str
    scenario_title: str
    scenario_version: str
    risk: str
    guardrail_prohibited: tuple[str, ...]
    guardrail_permitted: tuple[str, ...]
    instructions: str
    packet: TestPacket
    context: JsonObject
    required_facts: tuple[str, ...]
    turns: tuple[ViewTurn, ...]
    system_prompt: str | None = None
    forbidden_tools: dict[str, str] = Field(default_factory=dict)
    """Tools the guardrail forbids calling, with why: a call is a violation."""

    @property
    def calls_tools(self) -> bool:
        return any(turn.tools_called for turn in self.turns)

    @property
    def replies(self) -> list[str | None]:
        return [turn.response_text for turn in self.turns]


def required_facts(session: SessionRecord, pack: ScenarioPack) -> tuple[str, ...]:
    """Facts a good answer contains: listed by the session's brief, or those of its field
    task (a simulated field tester's or a person's assignment)."""
    provenance = session.provenance
    if provenance.brief.required_facts is not None:
        return provenance.brief.required_facts
    if session.level is not Level.FIELD_TESTING:
        return ()
    task = next((t for t in pack.personas.tasks if t.id == provenance.brief.goal), None)
    if task is None or task.required_facts.empty:
        return ()
    return tuple(resolve_selector(pack.packet, task.required_facts, dict(provenance.parameters)))


def build_annotator_view(session: SessionRecord, pack: ScenarioPack) -> AnnotatorView:
    """The blinded view of ``session``, judged against ``pack`` (the session's scenario)."""
    if pack.name != session.scenario:
        raise ValueError(f"session is about '{session.scenario}', not '{pack.name}'")
    provenance = session.provenance
    return AnnotatorView(
        scenario=pack.name,
        scenario_title=pack.title,
        scenario_version=pack.version,
        risk=pack.risk,
        guardrail_prohibited=tuple(pack.guardrails.prohibited),
        guardrail_permitted=tuple(pack.guardrails.permitted),
        instructions=pack.instructions.annotators,
        packet=pack.packet,
        context=pack.packet.guardrail_context(provenance.parameters),
        required_facts=required_facts(session, pack),
        turns=tuple(_view_turn(position, turn) for position, turn in enumerate(session.turns)),
        system_prompt=provenance.system_prompt or None,
        forbidden_tools={t.name: t.forbidden for t in pack.tools if t.forbidden is not None},
    )


def _view_turn(position: int, turn: TurnRecord) -> ViewTurn:
    steps = (
        [] if turn.messages is None else step_views(turn.messages, blinded=True, limit=STEP_CHARS)
    )
    return ViewTurn(
        index=position,
        user_text=turn.user_text,
        response_text=turn.response_text,
        failed=turn.failed,
        steps=tuple(steps),
        tools_called=tuple(call.name for call in turn.tool_calls),
    )
