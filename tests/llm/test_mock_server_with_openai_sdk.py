"""`corix mock-server` as the official openai SDK sees it: a streamed reply arrives whole,
with its usage, and an offered tool is called the way the SDK parses tool calls. Before,
the SDK with ``stream=True`` got empty text and no error."""

from __future__ import annotations

import json
import re

import pytest

from corix.llm.mock_server import running_mock_server

openai = pytest.importorskip("openai", reason="the openai SDK (dev extra) is not installed")

TOOL = {
    "type": "function",
    "function": {
        "name": "episode_guide",
        "description": "What happens in an episode.",
        "parameters": {
            "type": "object",
            "properties": {"episode": {"type": "integer"}},
            "required": ["episode"],
        },
    },
}


async def test_the_sdk_streams_a_whole_reply_with_its_usage() -> None:
    async with running_mock_server() as base_url:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0)
        messages = [{"role": "user", "content": "Tell me about the weather in Lisbon today."}]
        plain = await client.chat.completions.create(model="mock", messages=messages)
        stream = await client.chat.completions.create(
            model="mock",
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
        )
        pieces: list[str] = []
        usage = None
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                pieces.append(chunk.choices[0].delta.content)
            usage = chunk.usage or usage
        await client.close()
    text, streamed = plain.choices[0].message.content, "".join(pieces)
    # Whole: the mock's reply names a digest of its request, then echoes the question.
    assert re.fullmatch(
        r"Mock reply [0-9a-f]{6} to: Tell me about the weather in Lisbon today\.", streamed
    )
    assert text is not None and len(streamed) == len(text)
    assert len(pieces) > 1  # streamed in pieces, as a real server does
    assert usage is not None and usage.completion_tokens == plain.usage.completion_tokens


@pytest.mark.parametrize("stream", [False, True])
async def test_the_sdk_reads_the_tool_call_and_the_answer_from_its_result(stream: bool) -> None:
    question = [{"role": "user", "content": "What happens in episode 6?"}]
    async with running_mock_server() as base_url:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0)
        if stream:
            calls: dict[int, dict[str, str]] = {}
            async for chunk in await client.chat.completions.create(
                model="mock", messages=question, tools=[TOOL], stream=True
            ):
                for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                    call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                    call["id"] += delta.id or ""
                    call["name"] += (delta.function.name or "") if delta.function else ""
                    call["arguments"] += (delta.function.arguments or "") if delta.function else ""
            (call,) = calls.values()
        else:
            reply = await client.chat.completions.create(
                model="mock", messages=question, tools=[TOOL]
            )
            assert reply.choices[0].finish_reason == "tool_calls"
            (made,) = reply.choices[0].message.tool_calls or []
            call = {"id": made.id, "name": made.function.name, "arguments": made.function.arguments}
        assert call["name"] == "episode_guide" and call["id"]
        json.loads(call["arguments"])  # arguments are JSON text, as the SDK expects
        answer = await client.chat.completions.create(
            model="mock",
            tools=[TOOL],
            messages=[
                *question,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["name"], "arguments": call["arguments"]},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": call["id"], "content": "Tobias confesses."},
            ],
        )
        await client.close()
    assert answer.choices[0].message.content
    assert not answer.choices[0].message.tool_calls
