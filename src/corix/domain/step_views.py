"""A turn's messages as short labelled lines: the one rendering every view of a transcript
calls (judge prompts, the annotation page, ``corix sessions show``, reports, exports).

Each view only escapes or delimits the lines for its medium; what a step says, and what an
annotator may see of it, is decided here once.

Blinding: a blinded view (for annotators) leaves out system and developer messages (the
application's configuration) and replaces tool-call ids by their order in the turn
(``#1``): providers' ids have telling shapes (``call_…``, ``toolu_…``). Tool names are shown:
a pack's tools have the pack's names whatever application calls them, and the names an
application gives its own tools are its output, like its text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from corix.domain.messages import INSTRUCTION_ROLES, Message, MessageRole

__all__ = ["StepKind", "StepView", "render_steps", "step_views"]


class StepKind(StrEnum):
    INSTRUCTION = "instruction"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"


@dataclass(frozen=True, slots=True)
class StepView:
    kind: StepKind
    label: str
    """Who speaks: ``system``, ``developer``, ``user``, ``assistant``, ``tool call``,
    ``tool result``."""
    text: str


def step_views(
    steps: Sequence[Message], *, blinded: bool, limit: int | None = None
) -> list[StepView]:
    """``steps`` as views; each text cut to ``limit`` characters when given."""
    numbers: dict[str, str] = {}

    def call_ref(call_id: str | None) -> str:
        if call_id is None:
            return ""
        if not blinded:
            return f" [{call_id}]"
        return f" [#{numbers.setdefault(call_id, str(len(numbers) + 1))}]"

    views: list[StepView] = []
    for message in steps:
        role = message.role
        if role in INSTRUCTION_ROLES:
            if not blinded:
                views.append(StepView(StepKind.INSTRUCTION, role.value, message.text))
        elif role is MessageRole.USER:
            views.append(StepView(StepKind.USER, "user", message.text))
        elif role is MessageRole.ASSISTANT:
            text = message.text
            if message.refusal:
                text = f"{text}\n[refusal] {message.refusal}" if text else message.refusal
            if text or not message.tool_calls:
                views.append(StepView(StepKind.ASSISTANT, "assistant", text))
            for call in message.tool_calls:
                line = f"{call.name}({call.arguments}){call_ref(call.id)}"
                views.append(StepView(StepKind.TOOL_CALL, "tool call", line))
        else:
            head = f"{message.name or 'tool'}{call_ref(message.tool_call_id)}"
            if message.error is not None:
                body = f"{head} failed: {message.error}"
            else:
                body = f"{head}: {message.text}"
            views.append(StepView(StepKind.TOOL_RESULT, "tool result", body))
    if limit is None:
        return views
    return [StepView(v.kind, v.label, _cut(v.text, limit)) for v in views]


def render_steps(steps: Sequence[Message], *, blinded: bool, limit: int | None = None) -> str:
    """``steps`` as plain text, one ``label: text`` line (or block) per step."""
    views = step_views(steps, blinded=blinded, limit=limit)
    return "\n".join(f"{view.label}: {view.text}" for view in views)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"
