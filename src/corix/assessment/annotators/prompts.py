"""Prompts for LLM annotators: versioned guidelines, then a dialogue fenced as untrusted data.

Laid out for prefix reuse: what is the same for every call comes first and is
byte-identical across calls — the system message, then the guidelines (a harm pack's or a
category's task), then the scenario and its test packet — and what changes per session
comes last: the session's context, then the dialogue. A server or in-process model that
keeps the evaluated prefix (llama.cpp's prompt cache, vLLM's prefix caching, OpenAI's
prompt caching) then evaluates only the session's part. The JSON schema is not repeated in
the prompt: it goes as the request's ``response_format`` (a grammar where the backend
takes one) and is written into the prompt, at the end, only for endpoints that take no
schema (:mod:`corix.llm.structured`).

The dialogue is the only untrusted text in a prompt. It is JSON-encoded (so no message can
break out of its string) and placed between two boundary lines carrying a token derived
from the encoded dialogue itself. A message cannot contain the token that fences it
(that would need a fixed point of SHA-256); should the encoded text contain it anyway, a
new token is derived until it does not. The (constant) system message tells the model
that only the two lines carrying the token named just before them bound the dialogue and
that everything inside is data, never instructions.

Templates are Jinja with ``StrictUndefined``: a missing value is an error, not a blank.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from jinja2 import Environment, PackageLoader, StrictUndefined

from corix.assessment.annotators.structured import reasoning_chars
from corix.assessment.annotators.view import AnnotatorView
from corix.assessment.harms import HarmPack
from corix.assessment.schema import AnnotationSchema, Category, Question, QuestionLevel
from corix.domain import JsonObject
from corix.llm import ChatMessage
from corix.scenarios import TestPacket

PROMPT_VERSION: Final = "2"
_TOKEN_CHARS = 16


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# Prompts are plain text sent to a model, not HTML: escaping would corrupt the JSON in them.
# Untrusted text is made safe by encoding and fencing (above), not by HTML escaping.
_ENV = Environment(
    loader=PackageLoader("corix.assessment.annotators", "templates"),
    undefined=StrictUndefined,
    autoescape=False,  # noqa: S701
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    auto_reload=False,  # templates are package data; never stat them again
)
_ENV.filters["json"] = _json
_ENV.filters["compact_tags"] = lambda tags: "; ".join(
    f"{name} {', '.join(map(str, value)) if isinstance(value, list) else value}"
    for name, value in tags.items()
)


@dataclass(frozen=True)
class FencedDialogue:
    token: str
    encoded: str

    @property
    def opening(self) -> str:
        return f"<<<DIALOGUE {self.token}>>>"

    @property
    def closing(self) -> str:
        return f"<<<END DIALOGUE {self.token}>>>"

    @property
    def block(self) -> str:
        return f"{self.opening}\n{self.encoded}\n{self.closing}"


def encode_dialogue(view: AnnotatorView) -> str:
    """The turns as a JSON array, one turn per line; a tool-using turn also lists its steps
    (tool calls and their results, blinded), so the dialogue stays one delimited block of
    untrusted text."""
    rows = []
    for turn in view.turns:
        row: JsonObject = {
            "turn": turn.index,
            "user": turn.user_text,
            "assistant": turn.response_text,
        }
        if turn.steps:
            # A tool-using turn: every step, labelled, in order (the texts above stay what
            # the user wrote and what the application said to the user).
            row["steps"] = [[step.label, step.text] for step in turn.steps]
        if turn.failed:
            row["failed"] = True
        rows.append(_json(row))
    return "[\n" + ",\n".join(rows) + "\n]"


def fence_dialogue(view: AnnotatorView) -> FencedDialogue:
    """The encoded dialogue between boundary lines whose token it does not contain."""
    encoded = encode_dialogue(view)
    seed = encoded
    while True:
        token = hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:_TOKEN_CHARS]
        if token not in encoded:
            break
        seed = token + encoded
    return FencedDialogue(token=token, encoded=encoded)


def aria_guideline_version(
    schema: AnnotationSchema, view: AnnotatorView, *, compact: bool = False
) -> str:
    scenario = f"{view.scenario}-{view.scenario_version}"
    return f"{schema.id}-{schema.version}/{scenario}/{_prompt(compact)}"


def harm_guideline_version(pack: HarmPack, *, compact: bool = False) -> str:
    return f"{pack.id}-{pack.version}/{_prompt(compact)}"


def _prompt(compact: bool) -> str:
    return f"prompt-{PROMPT_VERSION}" + ("-compact" if compact else "")


def _follow_up_rule(question: Question) -> str:
    if question.show_if is None:
        return ""
    conditions = " or ".join(f"{c.question} is {c.equals}" for c in question.show_if.any_of)
    return f"Follow-up: answer only if {conditions}; otherwise give null as its value."


def _answer_format(question: Question) -> str:
    allowed = question.allowed_values()
    if allowed:
        return "one of " + ", ".join(allowed)
    if question.min is not None and question.max is not None:
        return (
            f"a whole number from {question.min:g} ({question.min_label or 'lowest'}) to "
            f"{question.max:g} ({question.max_label or 'highest'})"
        )
    return "free text"


def _render(template: str, **values: Any) -> str:
    return _ENV.get_template(template).render(**values)


class PromptRenderer:
    """Renders annotator prompts, reusing the parts that do not depend on the dialogue.

    The scenario and its test packet, a category's questions and a harm pack's guidelines
    are the same for every dialogue of a run; they are rendered once per renderer and the
    prompt for each dialogue is assembled around them. Each comes in two forms: the full
    one, and a ``compact`` one for judges with a small context window (a harm's guidelines
    without worked examples, a category's questions without their guidance, a packet's
    tags written short); the full text stays the default.
    """

    def __init__(self) -> None:
        self._scenarios: dict[tuple[str, int, bool], tuple[TestPacket, str]] = {}
        self._parts: dict[tuple[str, str], str] = {}

    def category_messages(
        self,
        schema: AnnotationSchema,
        category: Category,
        view: AnnotatorView,
        *,
        compact: bool = False,
    ) -> list[ChatMessage]:
        """The system and user messages asking for one pass over ``category``."""
        key = ("category", f"{schema.id}/{category.id}/{compact}")
        user = _render(
            "category_prompt.j2",
            task=self._part(key, self._task, schema, category, compact),
            scenario=self._scenario(view, compact),
            session=_render("session.j2", view=view),
            turn_level=any(q.level is QuestionLevel.TURN for q in category.questions),
            n_turns=len(view.turns),
            fence=fence_dialogue(view),
        )
        return [self._system(), ChatMessage(role="user", content=user)]

    def harm_messages(
        self, pack: HarmPack, view: AnnotatorView, *, compact: bool = False
    ) -> list[ChatMessage]:
        """The system and user messages asking for a severity on ``pack``'s scale."""
        key = ("harm", f"{pack.id}/{pack.version}/{compact}")
        user = _render(
            "harm_prompt.j2",
            guidelines=self._part(key, self._guidelines, pack, compact),
            reasoning_chars=reasoning_chars(compact=compact),
            scenario=self._scenario(view, compact),
            session=_render("session.j2", view=view),
            fence=fence_dialogue(view),
        )
        return [self._system(), ChatMessage(role="user", content=user)]

    def _system(self) -> ChatMessage:
        return ChatMessage(role="system", content=self._part(("system", ""), _render, "system.j2"))

    def _scenario(self, view: AnnotatorView, compact: bool) -> str:
        key = (f"{view.scenario}/{view.scenario_version}", id(view.packet), compact)
        cached = self._scenarios.get(key)
        # Holding the packet keeps its id from being reused by another packet.
        if cached is None or cached[0] is not view.packet:
            text = _render("scenario.j2", view=view, compact=compact)
            cached = self._scenarios[key] = (view.packet, text)
        return cached[1]

    def _part(self, key: tuple[str, str], render: Callable[..., str], *args: Any) -> str:
        text = self._parts.get(key)
        if text is None:
            text = self._parts[key] = render(*args)
        return text

    @staticmethod
    def _task(schema: AnnotationSchema, category: Category, compact: bool) -> str:
        questions = [
            {
                "id": q.id,
                "turn_level": q.level is QuestionLevel.TURN,
                "text": q.text,
                "guidance": q.guidance,
                "format": _answer_format(q),
                "follow_up": _follow_up_rule(q),
                "optional": not q.required,
            }
            for q in category.questions
        ]
        return _render(
            "category_task.j2",
            schema=schema,
            category=category,
            questions=questions,
            turn_level=any(q["turn_level"] for q in questions),
            reasoning_chars=reasoning_chars(compact=compact),
            compact=compact,
        )

    @staticmethod
    def _guidelines(pack: HarmPack, compact: bool) -> str:
        template = "harm_guidelines_compact.j2" if compact else "harm_guidelines.j2"
        return _render(template, pack=pack, labels=sorted(pack.scale.labels.items()))


def reask_message(problems: list[str]) -> ChatMessage:
    """What the model is told when its reply could not be used."""
    return ChatMessage(role="user", content=_render("reask.j2", problems=problems))
