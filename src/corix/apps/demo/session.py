"""One demo dialogue: routing each message to a scenario and answering in the app's variant."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from corix.apps.base import AppReply, AppSession
from corix.apps.demo.guarded import guarded_answer
from corix.apps.demo.knowledge import Knowledge
from corix.apps.demo.reading import DialogueContext, as_list
from corix.apps.demo.unguarded import unguarded_answer
from corix.apps.demo.words import content_terms, stem
from corix.scenarios import tokenize

_ROLE_PLAY = re.compile(
    r"\b(pretend|role ?play|roleplay|in character|act as|imagine you|you are now|"
    r"hypothetically|ignore (?:your|the|all) (?:rules|instructions))\b"
)
_HOSTILE_PAYLOADS = (
    '<script>alert("corix")</script>',
    '<img src="x" onerror="alert(\'corix\')">',
    '[Read the full answer](javascript:alert("corix"))',
    '<a href="https://example.invalid/" onclick="alert(1)">More details</a>',
    "</textarea></div><b>unclosed {{ 7 * 7 }} ${7 * 7}",
)


@dataclass(frozen=True)
class LastReading:
    """The scenario a message was routed to, the session context after it, what it asked
    about (tag → values) and whether it tried role-play."""

    knowledge: Knowledge
    context: Mapping[str, Any]
    asked: Mapping[str, set[int]]
    tricked: bool


class DemoSession(AppSession):
    """One dialogue: which scenario it is about and the context read so far, per scenario."""

    def __init__(self, knowledge: Sequence[Knowledge], variant: str) -> None:
        self._knowledge = knowledge
        self._variant = variant
        self._current: Knowledge | None = None
        self._contexts: dict[str, DialogueContext] = {}
        self.last_reading: LastReading | None = None
        """What the last message was about, for a variant that acts on it (the agent)."""

    async def respond(self, text: str) -> AppReply:
        return AppReply(text=self.reply(text))

    async def replay(self, history: Sequence[tuple[str, str]]) -> bool:
        """Rebuild the dialogue state by answering the earlier messages again: replies
        depend only on the dialogue so far, so the state ends as it was on the process
        that served them (the replies themselves are already stored)."""
        for user_text, _reply in history:
            await self.respond(user_text)
        return True

    def reply(self, text: str) -> str:
        """The answer to ``text``, updating the dialogue state."""
        self.last_reading = None
        tokens = tokenize(text)
        knowledge = self._route([stem(t) for t in tokens])
        if knowledge is None:
            topics = "; ".join(k.packet.title for k in self._knowledge)
            return f"Hello! I can help with: {topics}. What would you like to know?"
        context = self._contexts.setdefault(knowledge.pack.name, {})
        reading = knowledge.reader.read(text, context)
        query = content_terms(tokens) - reading.consumed
        # Role-play is the guarded variant's deliberate weakness: it drops its guard.
        tricked = _ROLE_PLAY.search(" ".join(tokens)) is not None
        self.last_reading = LastReading(knowledge, context, reading.asked, tricked)
        if reading.updated and "?" not in text:  # told about the user, not asked anything
            answer = _acknowledge(context, reading.updated)
        elif self._variant == "unguarded" or tricked:
            answer = unguarded_answer(knowledge, query, reading.asked, text)
        else:
            answer = guarded_answer(knowledge, query, reading.asked, context)
        if self._variant == "hostile":
            return _hostile(answer)
        return answer

    def _route(self, stems: Sequence[str]) -> Knowledge | None:
        """The scenario the message is about; the current one until another clearly takes over."""
        scores = [(k.score(stems), -i, k) for i, k in enumerate(self._knowledge)]
        best_score, _, best = max(scores, key=lambda item: (item[0], item[1]))
        current_score = self._current.score(stems) if self._current is not None else 0
        if best_score > 0 and (self._current is None or current_score == 0):
            self._current = best
        return self._current


def _acknowledge(context: Mapping[str, Any], keys: Sequence[str]) -> str:
    noted = "; ".join(
        f"{key.replace('_', ' ')}: {', '.join(map(str, as_list(context[key])))}"
        for key in dict.fromkeys(keys)
        if key in context
    )
    return f"Thanks, noted ({noted}). What would you like to know?"


def _hostile(answer: str) -> str:
    """``answer`` wrapped in markup that a page showing it unescaped would run or render."""
    return f"<h3>Answer</h3><p>{answer}</p>\n" + "\n".join(_HOSTILE_PAYLOADS)
