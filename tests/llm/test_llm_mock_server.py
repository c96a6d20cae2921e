import asyncio
import json
import signal
import subprocess
import sys
from typing import Any

import aiohttp
import pytest
from pydantic import BaseModel, ValidationError

from corix.llm import ChatMessage, ChatRequest, EndpointConfig, LLMClient
from corix.llm.mock_server import Fault, FaultPlan, MockServerConfig, running_mock_server
from support.mock_serving import mock_stats


async def _post(url: str, body: bytes) -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as session, session.post(url, data=body) as response:
        return response.status, json.loads(await response.read())


async def _get(url: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        payload: dict[str, Any] = json.loads(await response.read())
    return payload


def test_fault_rates_are_met_closely_and_deterministically() -> None:
    config = MockServerConfig(fail_429=0.1, fail_500=0.25, fail_malformed=0.05)
    plan = FaultPlan(config.fault_rates())
    faults = [plan.fault_for(n) for n in range(1000)]
    assert faults == [FaultPlan(config.fault_rates()).fault_for(n) for n in range(1000)]
    # A golden-ratio sequence keeps every count within a few requests of its rate.
    assert abs(faults.count(Fault.RATE_LIMITED) - 100) <= 3
    assert abs(faults.count(Fault.SERVER_ERROR) - 250) <= 3
    assert abs(faults.count(Fault.MALFORMED) - 50) <= 3
    assert faults.count(Fault.TIMEOUT) == 0
    assert faults[0] is Fault.RATE_LIMITED


def test_fault_rates_cannot_exceed_one() -> None:
    with pytest.raises(ValidationError, match="add up to more than 1"):
        MockServerConfig(fail_429=0.6, fail_500=0.6)


async def test_both_paths_answer_and_models_are_listed() -> None:
    body = json.dumps({"model": "x", "messages": [{"role": "user", "content": "hi"}]}).encode()
    async with running_mock_server() as base_url:
        root = base_url.removesuffix("/v1")
        for url in (base_url + "/chat/completions", root + "/chat/completions"):
            status, payload = await _post(url, body)
            assert status == 200
            assert payload["choices"][0]["message"]["content"].endswith("to: hi")
            # "hi": 4 framing + 1; "Mock reply xxxxxx to: hi": 24 characters / 4.
            assert payload["usage"] == {
                "prompt_tokens": 5,
                "completion_tokens": 6,
                "total_tokens": 11,
            }
        models = await _get(base_url + "/models")
    assert [m["id"] for m in models["data"]] == ["corix-mock"]


async def test_invalid_requests_get_400() -> None:
    async with running_mock_server() as base_url:
        url = base_url + "/chat/completions"
        status, payload = await _post(url, b"not json")
        assert status == 400
        status, payload = await _post(url, json.dumps({"messages": []}).encode())
        assert status == 400
        assert "invalid chat completion request" in payload["error"]["message"]


class Judgement(BaseModel):
    severity: int
    reasoning: str


async def test_structured_output_over_http_matches_the_schema() -> None:
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "judgement", "schema": Judgement.model_json_schema()},
    }
    request = ChatRequest(
        messages=[ChatMessage(role="user", content="Judge this.")],
        response_format=response_format,
        extra={"top_p": 0.9},
    )
    async with running_mock_server() as base_url:
        endpoint = EndpointConfig(name="judge", base_url=base_url, model="m")
        async with LLMClient(endpoint) as client:
            response = await client.chat(request)
    Judgement.model_validate_json(response.text)


def test_the_module_runs_as_a_server_until_terminated() -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "corix.llm.mock_server", "--port", "0", "--fail-500", "0.5"],
        stdout=subprocess.PIPE,
        text=True,
    ) as server:
        try:
            assert server.stdout is not None
            line = server.stdout.readline()
            assert line.startswith("corix mock server listening on http://127.0.0.1:")
            assert line.rstrip().endswith("/v1")
        finally:
            server.send_signal(signal.SIGTERM)
            assert server.wait(timeout=10) == 0


async def test_stats_give_requests_in_flight_per_tenth_of_a_second() -> None:
    # Four requests of 0.25 s sent at once, then nothing: 4 in flight for 0.25 s, spread
    # over the tenths of a second that span it; the sum is 4 × 0.25 = 1 request-second.
    async with running_mock_server(MockServerConfig(latency_ms=250)) as base_url:
        endpoint = EndpointConfig(
            base_url=base_url, model="m", max_concurrency=4, adaptive_concurrency=False
        )
        async with LLMClient(endpoint) as client:
            request = ChatRequest(messages=[ChatMessage(role="user", content="hi")])
            await asyncio.gather(*(client.chat(request) for _ in range(4)))
        series = (await mock_stats(base_url))["in_flight_series"]
    assert max(series.values()) <= 4.0 + 1e-9
    assert sum(series.values()) * 0.1 == pytest.approx(1.0, abs=0.05)
    assert sorted(series.values())[-1] == pytest.approx(4.0, abs=0.05)  # a full tenth at 4
