"""Clients for the models that play simulated users: one per level whose engine is ``llm``."""

from __future__ import annotations

from collections.abc import Container

from corix.domain import Level
from corix.execution.plan import EndpointRef, Plan
from corix.llm import EndpointConfig, LLMClient
from corix.llm.endpoint import address_fields


def simulator_endpoint(level: Level, ref: EndpointRef) -> EndpointConfig:
    """The client configuration for a level's simulator (``base_url`` as in
    :func:`~corix.llm.endpoint.address_fields`: ``mock`` stays offline)."""
    return EndpointConfig(
        name=f"simulator:{level.value}",
        **address_fields(ref.base_url),
        model=ref.model,
        api_key_env=ref.key_env,
        max_concurrency=ref.concurrency,
        adaptive_concurrency=not ref.fixed_concurrency,
        context_window=ref.context_window,
        timeout_s=ref.timeout_s,
        max_tokens=ref.max_tokens,
        max_retries=ref.max_retries,
        requests_per_minute=ref.requests_per_minute,
        tokens_per_minute=ref.tokens_per_minute,
        price_per_1k_prompt=ref.price_per_1k_prompt,
        price_per_1k_completion=ref.price_per_1k_completion,
        headers=ref.headers,
        key_header=ref.key_header,
        structured_output=ref.structured_output,
    )


def open_simulators(plan: Plan, *, skip: Container[str] = ()) -> dict[str, LLMClient]:
    """A client per level (keyed by its value) played by the LLM engine, except ``skip``.

    The caller owns the clients and closes them with ``aclose()``.
    """
    return {
        level.value: LLMClient(simulator_endpoint(level, settings.simulator))
        for level, settings in plan.levels.items()
        if settings.engine == "llm" and settings.simulator is not None and level.value not in skip
    }
