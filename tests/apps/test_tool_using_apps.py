"""Applications that call tools: the openai adapter given the pack's tools (``tools=pack``)
with corix answering each call from the pack, its tool calls recorded in order, over plain
and streamed replies."""

from __future__ import annotations

import asyncio
import json

import pytest

from corix.apps import build_application
from corix.domain import ApplicationEntry, Level, LevelSettings, MessageRole, Plan
from corix.errors import CorixError
from corix.execution import execute_plan
from corix.llm.mock_server import running_mock_server
from corix.scenarios import Toolbox, resolve_pack
from corix.storage import Database, iter_sessions


def _plan(spec: str) -> Plan:
    return Plan(
        name="agents",
        applications=[ApplicationEntry(name="agent", spec=spec)],
        scenarios=["tv_spoilers"],
        levels={Level.MODEL_TESTING: LevelSettings(sessions=1)},
    )


@pytest.mark.parametrize("stream", [False, True])
def test_a_pack_tool_call_is_answered_from_the_pack_and_recorded(
    sqlite_db: Database, stream: bool
) -> None:
    async def run() -> str:
        async with running_mock_server() as base_url:
            spec = f"openai:{base_url}?model=corix-mock&tools=pack&stream={stream}"
            result = await execute_plan(_plan(spec), sqlite_db)
            return result.run_id

    run_id = asyncio.run(run())
    (session,) = list(iter_sessions(sqlite_db, run_id))
    turn = session.turns[0]
    roles = [m.role for m in turn.steps]
    assert roles == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    (call,) = turn.tool_calls
    episode = json.loads(call.arguments)["episode"]
    assert call.name == "episode_guide" and f"episode {episode}" in turn.user_text
    (result,) = turn.tool_results
    assert result.text.startswith(f"Episode {episode}: ") and result.tool_call_id == call.id
    # The mock agent passes the tool's text on: what the user saw is the response text.
    assert turn.response_text is not None and result.text in turn.response_text
    assert turn.prompt_tokens is not None and turn.prompt_tokens > 0


async def test_without_tools_pack_the_application_is_not_given_tools() -> None:
    async with running_mock_server() as base_url:
        app = build_application(f"openai:{base_url}?model=corix-mock")
        session = await app.start_session()
        toolbox = Toolbox.of(resolve_pack("tv_spoilers"))
        assert toolbox is not None and not await session.use_tools(toolbox)
        reply = await session.respond("What happens in episode 6?")
        await app.close()
    assert reply.ok and reply.messages == ()


def test_the_tools_option_names_its_choices() -> None:
    with pytest.raises(CorixError, match="'pack' or 'none'"):
        build_application("openai:http://127.0.0.1:1/v1?model=m&tools=all")
