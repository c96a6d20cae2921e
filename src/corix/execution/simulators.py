"""Clients for the models that play simulated users: one per level whose engine is ``llm``."""

from __future__ import annotations

from collections.abc import Container

from corix.domain import Level, Plan
from corix.llm import EndpointConfig, HTTPConnections, LLMClient, ResponseCache


def simulator_endpoint(level: Level, endpoint: EndpointConfig) -> EndpointConfig:
    """A level's simulator endpoint, named ``simulator:LEVEL`` unless the plan names it."""
    return (
        endpoint
        if endpoint.name
        else endpoint.model_copy(update={"name": f"simulator:{level.value}"})
    )


def open_simulators(
    plan: Plan,
    *,
    skip: Container[str] = (),
    cache: ResponseCache | None = None,
    connections: HTTPConnections | None = None,
) -> dict[str, LLMClient]:
    """A client per level (keyed by its value) played by the LLM engine, except ``skip``.

    The caller owns the clients and closes them with ``aclose()``, and ``cache`` and
    ``connections`` after them.
    """
    return {
        level.value: LLMClient(
            simulator_endpoint(level, settings.simulator), cache=cache, connections=connections
        )
        for level, settings in plan.levels.items()
        if settings.engine == "llm" and settings.simulator is not None and level.value not in skip
    }
