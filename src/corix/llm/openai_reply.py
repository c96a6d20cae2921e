"""Reading an OpenAI-compatible chat completion: one JSON body, or a streamed one (SSE).

Every way a reply can be unusable gets one line that says what was wrong, and whether
another attempt could help: a body cut short or not JSON may be a passing fault (retried);
a reply with no choices, a message with nothing in it, or tool calls a caller offered no
tools for would come back the same (not retried).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from corix.domain import JsonObject, ToolCall
from corix.llm.call_errors import TransportError
from corix.llm.models import ChatRequest
from corix.llm.tokens import estimate_prompt_tokens, estimate_tokens
from corix.llm.transport import RawCompletion, cached_tokens

_SSE_DONE = "[DONE]"


def parse_completion(raw: bytes, request: ChatRequest, *, streamed: bool = False) -> RawCompletion:
    """The completion in ``raw``: a JSON body, or server-sent events when ``streamed`` or
    when the body starts like a stream (a server that streams though not asked to)."""
    try:
        if streamed or raw.lstrip()[:5] in (b"data:", b"event"):
            data = _assembled_stream(raw.decode("utf-8", errors="replace"))
        else:
            data = json.loads(raw)
        return _completion(data, request)
    except TransportError:
        raise
    except ValueError as exc:
        raise TransportError(f"malformed response body: {exc}", retryable=True) from None
    except RecursionError:
        raise TransportError("malformed response body: nested too deeply", retryable=True) from None


def _completion(data: Any, request: ChatRequest) -> RawCompletion:
    if not isinstance(data, Mapping):
        raise ValueError("the body is not a JSON object")
    if isinstance(data.get("error"), Mapping):
        raise TransportError(f"the reply is an error: {error_text(data['error'])}", retryable=False)
    choices = data.get("choices")
    if not isinstance(choices, list):
        raise ValueError("the body has no 'choices' list")
    if not choices:
        raise TransportError("the reply has no choices ('choices' is empty)", retryable=False)
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(message, Mapping):
        raise ValueError("the first choice has no 'message' object")
    content = message.get("content")
    refusal = message.get("refusal") if isinstance(message.get("refusal"), str) else None
    calls = _tool_calls(message.get("tool_calls"))
    text = _content_text(content)
    if text is None:
        # A refusal stands in for the text it replaces (a structured-output refusal too).
        text = refusal if refusal is not None else ("" if calls else None)
    if text is None:
        finish = choice.get("finish_reason")
        raise TransportError(
            f"the reply's message has no content, refusal or tool calls (finish_reason {finish!r})",
            retryable=False,
        )
    if calls and not text and request.tools is None:
        names = ", ".join(call.name for call in calls)
        raise TransportError(
            f"the model answered only with tool calls ({names}), but this call offered no tools",
            retryable=False,
        )
    usage = data.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    finish_reason = choice.get("finish_reason")
    return RawCompletion(
        text=text,
        model=str(data.get("model") or request.model),
        prompt_tokens=_count(usage.get("prompt_tokens"), lambda: estimate_prompt_tokens(request)),
        completion_tokens=_count(usage.get("completion_tokens"), lambda: estimate_tokens(text)),
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        cached_prompt_tokens=cached_tokens(usage),
        tool_calls=calls,
        refusal=refusal,
    )


def _content_text(content: Any) -> str | None:
    """A message's content as text: a string, or a list of parts whose texts are joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "".join(t for t in texts if isinstance(t, str))
    return None


def _tool_calls(value: Any) -> tuple[ToolCall, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError("'tool_calls' is not a list")
    calls = []
    for number, call in enumerate(value, start=1):
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise ValueError(f"tool call {number} has no function name")
        arguments = function.get("arguments", "")
        calls.append(
            ToolCall(
                id=str(call.get("id") or f"call_{number}"),
                name=function["name"],
                arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
            )
        )
    return tuple(calls)


def _assembled_stream(body: str) -> JsonObject:
    """The chunks of a streamed reply put together as one non-streamed body."""
    text: list[str] = []
    refusal: list[str] = []
    calls: dict[int, JsonObject] = {}
    reply: JsonObject = {}
    finish_reason = None
    done = False
    for line in body.split("\n"):
        line = line.rstrip("\r")
        if not line.startswith("data:"):
            continue  # comments, event names, ids, blank separators
        payload = line[5:].strip()
        if payload == _SSE_DONE:
            done = True
            break
        chunk = json.loads(payload)
        if not isinstance(chunk, Mapping):
            raise ValueError("a streamed event is not a JSON object")
        if isinstance(chunk.get("error"), Mapping):
            raise TransportError(
                f"the streamed reply is an error: {error_text(chunk['error'])}", retryable=False
            )
        for key in ("model", "usage"):
            if chunk.get(key) is not None:
                reply[key] = chunk[key]
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            finish_reason = choice.get("finish_reason") or finish_reason
            delta = choice.get("delta")
            if isinstance(delta, Mapping):
                _add_delta(delta, text, refusal, calls)
    if not done:
        raise TransportError(
            "the streamed reply ended before its last event ('data: [DONE]')", retryable=True
        )
    if "usage" not in reply and not text and not refusal and not calls and finish_reason is None:
        raise TransportError("the streamed reply has no choices", retryable=False)
    message: JsonObject = {"role": "assistant", "content": "".join(text) if text else None}
    if refusal:
        message["refusal"] = "".join(refusal)
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return {**reply, "choices": [{"message": message, "finish_reason": finish_reason}]}


def _add_delta(
    delta: Mapping[str, Any],
    text: list[str],
    refusal: list[str],
    calls: dict[int, JsonObject],
) -> None:
    if isinstance(delta.get("content"), str):
        text.append(delta["content"])
    if isinstance(delta.get("refusal"), str):
        refusal.append(delta["refusal"])
    for part in delta.get("tool_calls") or ():
        if not isinstance(part, Mapping):
            raise ValueError("a streamed tool call is not a JSON object")
        index = part.get("index", 0)
        call = calls.setdefault(
            index if isinstance(index, int) else 0,
            {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
        )
        if part.get("id"):
            call["id"] = part["id"]
        function = part.get("function")
        if isinstance(function, Mapping):
            for key in ("name", "arguments"):
                if isinstance(function.get(key), str):
                    call["function"][key] += function[key]


def error_text(error: Mapping[str, Any]) -> str:
    """An OpenAI error object in one line: its code (``insufficient_quota``) and message."""
    message = str(error.get("message") or "").strip()
    code = error.get("code") or error.get("type")
    if isinstance(code, str) and code and code not in message:
        return f"{code}: {message}" if message else code
    return message


def _count(reported: object, estimate: Callable[[], int]) -> int:
    """A token count as the server reported it, or ``estimate()`` when it reported none or
    nonsense (negative, fractional, NaN, Infinity, a string): accounting never crashes."""
    if isinstance(reported, int) and not isinstance(reported, bool) and reported >= 0:
        return reported
    if isinstance(reported, float) and reported.is_integer() and reported >= 0:
        return int(reported)
    return estimate()
