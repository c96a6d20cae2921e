"""Adapter options: every name is checked, one name per setting, old names warn."""

from __future__ import annotations

from pathlib import Path

import pytest

from corix.apps import build_application
from corix.apps.openai_chat import OpenAIChatApplication
from corix.apps.options import (
    DeprecatedOptionWarning,
    InvalidOptionError,
    UnknownOptionError,
)
from corix.llm.mock_server import MockServerConfig, running_mock_server

SUBMISSION = Path(__file__).parent / "submissions"


def _openai(options: str) -> OpenAIChatApplication:
    app = build_application(f"openai:http://127.0.0.1:9/v1?model=m&{options}")
    assert isinstance(app, OpenAIChatApplication)
    return app


def test_an_unknown_option_is_refused_with_what_it_may_mean() -> None:
    with pytest.raises(UnknownOptionError) as raised:
        _openai("max_retriez=0")
    message = str(raised.value)
    assert "unknown option 'max_retriez' of the 'openai' adapter" in message
    assert "Did you mean 'max_retries'?" in message
    with pytest.raises(UnknownOptionError, match="unknown option 'bogus_opt'"):
        _openai("bogus_opt=1")


@pytest.mark.parametrize(
    ("spec", "option"),
    [
        ("demo:guarded?sessions=2", "sessions"),
        ("http:http://127.0.0.1:9/chat?path=reply&pth=x", "pth"),
        ("local:model.gguf?n_ctx=4096", "n_ctx"),
        ("python:support.apps:EchoApp?delay_ms=5&fail_onn=x", "fail_onn"),
    ],
)
def test_every_builtin_adapter_checks_its_options(spec: str, option: str) -> None:
    with pytest.raises(UnknownOptionError, match=f"unknown option '{option}'"):
        build_application(spec)


def test_a_python_application_takes_its_constructors_parameters() -> None:
    with pytest.raises(UnknownOptionError) as raised:
        build_application("python:support.apps:EchoApp?delay_mz=5")
    assert "Did you mean 'delay_ms'?" in str(raised.value)
    assert "Known: delay_ms, fail_on." in str(raised.value)
    app = build_application("python:support.apps:EchoApp?delay_ms=250&fail_on=boom")
    assert (vars(app)["delay_s"], vars(app)["fail_on"]) == (0.25, "boom")
    with pytest.raises(InvalidOptionError, match="needs option\\(s\\) greeting"):
        build_application("python:support.apps:GreetingApp")
    greeting = build_application("python:support.apps:GreetingApp?greeting=hi&tone=warm")
    assert vars(greeting)["extra"] == {"tone": "warm"}


def test_the_endpoint_models_names_are_the_specs_names() -> None:
    app = _openai(
        "max_retries=0&timeout_s=2.5&max_concurrency=3&adaptive_concurrency=false"
        "&requests_per_minute=60&price_per_1k_prompt=0.5&retry_after_max_s=9&call_deadline_s=30"
    )
    endpoint = app.endpoint
    assert (endpoint.max_retries, endpoint.timeout_s, endpoint.max_concurrency) == (0, 2.5, 3)
    assert endpoint.adaptive_concurrency is False
    assert endpoint.requests_per_minute == 60 and endpoint.price_per_1k_prompt == 0.5
    assert (endpoint.retry_after_max_s, endpoint.call_deadline_s) == (9, 30)


def test_an_old_name_still_works_and_warns() -> None:
    with pytest.warns(DeprecatedOptionWarning, match="'retries' .* use 'max_retries'"):
        app = _openai("retries=1")
    assert app.endpoint.max_retries == 1
    with pytest.warns(DeprecatedOptionWarning, match="adaptive_concurrency=false"):
        fixed = _openai("fixed_concurrency=true")
    assert fixed.endpoint.adaptive_concurrency is False


def test_the_old_name_concurrency_keeps_its_fixed_bound() -> None:
    # Issue 36: a plan's 'concurrency=N' held N in flight before endpoints adapted; read
    # as an adaptive ceiling it started at 2 and took a dozen latencies to get there.
    with pytest.warns(DeprecatedOptionWarning, match="use 'max_concurrency'"):
        old = _openai("concurrency=40")
    assert (old.endpoint.max_concurrency, old.endpoint.adaptive_concurrency) == (40, False)
    with pytest.warns(DeprecatedOptionWarning):
        adaptive = _openai("concurrency=40&adaptive_concurrency=true")
    assert adaptive.endpoint.adaptive_concurrency is True
    assert _openai("max_concurrency=40").endpoint.adaptive_concurrency is True


def test_a_bad_value_names_the_option_and_the_value() -> None:
    with pytest.raises(InvalidOptionError, match=r"timeout_s: .*number \(got 'soon'\)"):
        _openai("timeout_s=soon")


async def test_max_retries_zero_means_one_attempt() -> None:
    async with running_mock_server(MockServerConfig(fail_500=1.0)) as base_url:
        app = build_application(f"openai:{base_url}?model=m&max_retries=0")
        reply = await (await app.start_session()).respond("hi")
        await app.close()
    assert reply.error is not None and "after 1 attempt(s)" in reply.error


def test_an_aria_submissions_options_are_checked() -> None:
    with pytest.raises(UnknownOptionError, match="Did you mean 'threads'"):
        build_application(f"aria:{SUBMISSION}?thread=2")
