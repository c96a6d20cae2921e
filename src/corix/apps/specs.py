"""Adapter specs: short strings that select and configure an application adapter.

``KIND:TARGET?option=value&option=value`` — for example ``demo:guarded``,
``aria:./submissions/team42``, ``openai:http://127.0.0.1:8000/v1?model=m&key_env=KEY``,
``http:https://host/chat?path=data.reply``, ``python:my_pkg.app:MyApplication``.
Plan files may add an ``options`` mapping, merged over the spec's query options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl

from corix.apps.base import Application
from corix.domain import JsonObject
from corix.errors import CorixError
from corix.llm import HTTPConnections, ResponseCache
from corix.registry import Registry


@dataclass(frozen=True)
class AdapterSpec:
    kind: str
    target: str
    options: JsonObject = field(default_factory=dict)
    cache: ResponseCache | None = field(default=None, compare=False)
    """The response cache of the run, for adapters whose calls go through the client layer."""
    connections: HTTPConnections | None = field(default=None, compare=False)
    """The run's shared HTTP connections, for the same adapters."""

    @classmethod
    def parse(cls, spec: str, options: Mapping[str, Any] | None = None) -> AdapterSpec:
        kind, sep, rest = spec.partition(":")
        if not sep or not kind:
            raise CorixError(
                f"adapter spec '{spec}' must look like KIND:TARGET; known kinds: "
                f"{', '.join(ADAPTERS.names())}"
            )
        target, _, query = rest.partition("?")
        parsed: JsonObject = dict(parse_qsl(query, keep_blank_values=True))
        parsed.update(options or {})
        return cls(kind=kind, target=target, options=parsed)

    def public(self) -> str:
        """The spec without options, which may carry endpoint details but never secrets."""
        return f"{self.kind}:{self.target}"


AdapterFactory = Callable[[AdapterSpec], Application]
# corix.extension_points lists every registry.
ADAPTERS: Registry[AdapterFactory] = Registry("adapter kind", builtins="corix.apps.plugin")


def build_application(
    spec: str,
    options: Mapping[str, Any] | None = None,
    *,
    cache: ResponseCache | None = None,
    connections: HTTPConnections | None = None,
) -> Application:
    """Make the application named by ``spec``; unknown kinds list the known ones.

    ``cache`` and ``connections`` belong to the caller, who closes them after the
    application.
    """
    parsed = replace(AdapterSpec.parse(spec, options), cache=cache, connections=connections)
    return ADAPTERS.get(parsed.kind)(parsed)
