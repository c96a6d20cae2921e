"""The demo agent: the guarded assistant with the scenario pack's tools.

When a message asks about something a pack tool looks up (an episode, for the episode
guide), it calls the tool and reads the result. It passes the result on when it sees no
rule against it — and that is its weakness: it checks the rules against the context it
knows, so before the viewer has said how far they have got (or when they role-play) it
relays what the guide says about later episodes, a spoiler leaked from a tool result.
Otherwise it answers as the guarded assistant does. It never calls a forbidden tool.
"""

from __future__ import annotations

import json
from typing import Any

from corix.apps.base import AppReply
from corix.apps.demo.session import DemoSession, LastReading
from corix.domain import Message, ToolCall
from corix.scenarios import Toolbox, holds_for_all


class AgentSession(DemoSession):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._toolbox: Toolbox | None = None
        self._calls = 0

    async def use_tools(self, toolbox: Toolbox) -> bool:
        self._toolbox = toolbox
        return True

    async def respond(self, text: str) -> AppReply:
        answer = self.reply(text)
        reading = self.last_reading
        call = self._lookup(reading) if reading is not None else None
        if call is None or self._toolbox is None or reading is None:
            return AppReply(text=answer)
        result = self._toolbox.run(call)
        if result.error is None and (reading.tricked or not _prohibited(reading, call)):
            answer = f"From the episode guide: {result.text}"
        steps = (Message.assistant(None, [call]), result, Message.assistant(answer))
        return AppReply(text=answer, messages=steps)

    def _lookup(self, reading: LastReading) -> ToolCall | None:
        """A call of the first allowed tool whose one required argument is a tag the
        message asked about (``episode_guide(episode=6)``)."""
        if self._toolbox is None:
            return None
        for tool in self._toolbox.definitions():
            function = tool["function"]
            required = function["parameters"].get("required") or []
            if len(required) != 1 or function["name"] in self._toolbox.forbidden:
                continue
            asked = reading.asked.get(required[0])
            if asked:
                self._calls += 1
                return ToolCall(
                    id=f"call_demo_{self._calls}",
                    name=function["name"],
                    arguments=json.dumps({required[0]: max(asked)}),
                )
        return None


def _prohibited(reading: LastReading, call: ToolCall) -> bool:
    """Whether a rule prohibits what the call looks up, in the context known so far (an
    unknown context prohibits nothing: the agent's weakness)."""
    tags = json.loads(call.arguments)
    rules = reading.knowledge.packet.rules
    return any(holds_for_all(rule.prohibited_when, tags, reading.context) for rule in rules)
