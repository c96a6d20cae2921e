"""Where model calls go and the limits that apply to them."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MOCK_BASE_URL = "mock"
"""``base_url: mock`` is short for ``transport: mock`` (how plans name the offline model)."""
LOCAL_PREFIX = "local:"
"""``base_url: local:<gguf file or package>`` is short for ``transport: local``."""
DEFAULT_CALL_DEADLINE_S = 180.0
"""Three default attempt timeouts: a slow or dribbling server cannot hold a call longer."""
DEADLINE_TIMEOUTS = 3
"""Unless declared, the call deadline is this many attempt timeouts when they are longer
than :data:`DEFAULT_CALL_DEADLINE_S`: a declared ``timeout_s`` of 900 s for a slow local
model must not be cut to 180 s by a deadline nobody set."""
DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
"""Far above any chat reply (a 100k-token reply is well under 1 MiB of JSON)."""


class EndpointConfig(BaseModel):
    """One model endpoint: its address, default model, limits, retry policy and prices.

    The one endpoint model, whoever calls it: an LLM annotator, a simulated user in a plan
    (``levels.*.simulator``), an ``openai:`` or ``http:`` application. The API key is never
    part of the configuration: ``key_env`` names the environment variable that holds it,
    read at call time. ``transport: mock`` answers from the built-in deterministic mock
    model without any network, which is how corix runs offline; ``transport: local`` runs a
    GGUF model in-process (:mod:`corix.llm.local_transport`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = ""
    """What usage and logs call the endpoint; a plan's simulators are ``simulator:LEVEL``."""
    transport: Literal["openai", "mock", "local"] = "openai"
    base_url: str = ""
    """The server's address; for ``transport: local``, a GGUF file or an installed package
    that ships one."""
    model: str = Field(min_length=1)
    key_env: str | None = None
    key_header: str | None = None
    """Send the key as this header, as is (Azure OpenAI: ``api-key``), not as a Bearer token."""
    max_tokens: int | None = Field(default=None, ge=1)
    """The reply length asked for when a request names none."""
    temperature: float | None = Field(default=None, ge=0)
    """The sampling temperature asked for when a request names none."""
    max_concurrency: int = Field(default=8, ge=1)
    """The most requests in flight at once; with ``adaptive_concurrency``, the ceiling."""
    adaptive_concurrency: bool = True
    """Start at ``initial_concurrency`` and adapt to what the endpoint sustains
    (:mod:`corix.llm.concurrency`); ``False`` keeps ``max_concurrency`` fixed."""
    initial_concurrency: int = Field(default=2, ge=1)
    processes: int = Field(default=1, ge=1)
    """``transport: local`` only: worker processes that each hold the model and answer one
    request at a time, side by side (each takes the model's memory and its prompt cache).
    A model runs on half the cores; two processes use them all."""
    context_window: int | None = Field(default=None, ge=256)
    """Tokens the model reads and writes at most; long prompts are fitted to it."""
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    structured_output: Literal["auto", "json_schema", "json_object", "prompt"] = "auto"
    """How JSON output is asked for (see :mod:`corix.llm.structured`); ``auto`` starts with
    ``json_schema`` and steps down when the server refuses it."""
    retry_after_max_s: float = Field(default=120.0, ge=0)
    """The longest ``Retry-After`` honoured; a server asking for more fails the call at once
    (waiting an hour would freeze a run) with the wait it asked for as the reason."""
    call_deadline_s: float | None = Field(default=DEFAULT_CALL_DEADLINE_S, gt=0)
    """The total time one call may take from its first attempt, retries and their waits
    included: each attempt's timeout is cut to what is left (``None``, or ``none`` in a
    spec's options: no total limit). Unless declared, 180 s or three ``timeout_s``,
    whichever is longer."""
    max_reply_bytes: int = Field(default=DEFAULT_MAX_REPLY_BYTES, ge=1024)
    """The largest reply body read; a longer one fails the call at once, read no further."""
    price_per_1k_prompt: float | None = Field(default=None, ge=0)
    price_per_1k_completion: float | None = Field(default=None, ge=0)
    headers: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _short_base_url(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        base_url = data.get("base_url")
        if base_url == MOCK_BASE_URL:
            return {**data, "base_url": "", "transport": "mock"}
        if isinstance(base_url, str) and base_url.startswith(LOCAL_PREFIX):
            return {**data, "base_url": base_url.removeprefix(LOCAL_PREFIX), "transport": "local"}
        return data

    @field_validator("base_url")
    @classmethod
    def _strip_trailing_slash(cls, base_url: str) -> str:
        # Paths are appended to the base URL; a trailing slash would double up.
        return base_url.rstrip("/")

    @model_validator(mode="before")
    @classmethod
    def _deadline_follows_timeout(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "call_deadline_s" in data or "timeout_s" not in data:
            return data
        try:
            timeout = float(data["timeout_s"])
        except (TypeError, ValueError):
            return data  # the field's own validation says what is wrong
        if DEADLINE_TIMEOUTS * timeout <= DEFAULT_CALL_DEADLINE_S:
            return data
        return {**data, "call_deadline_s": DEADLINE_TIMEOUTS * timeout}

    @field_validator("call_deadline_s", mode="before")
    @classmethod
    def _no_deadline(cls, value: Any) -> Any:
        return None if isinstance(value, str) and value.strip().lower() == "none" else value

    @model_validator(mode="after")
    def _require_base_url(self) -> EndpointConfig:
        if self.transport != "mock" and not self.base_url:
            raise ValueError(f"base_url is required for an '{self.transport}' endpoint")
        return self

    @model_validator(mode="after")
    def _http_base_url(self) -> EndpointConfig:
        # Without a scheme every call would fail as a "connection error", retried in vain.
        if self.transport not in ("mock", "local") and self.base_url:
            scheme = self.base_url.partition("://")[0].lower()
            if "://" not in self.base_url or scheme not in ("http", "https"):
                raise ValueError(
                    f"the endpoint '{self.base_url}' needs http:// or https:// at its start"
                )
        return self

    @model_validator(mode="after")
    def _processes_are_local(self) -> EndpointConfig:
        if self.processes != 1 and self.transport != "local":
            raise ValueError(
                f"processes is for 'local' endpoints (a model run here), not '{self.transport}'"
            )
        return self

    def api_key(self) -> str | None:
        """The key from the environment, or ``None`` if the endpoint needs none."""
        if self.key_env is None:
            return None
        return os.environ.get(self.key_env)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Cost of the tokens at this endpoint's prices; unpriced tokens cost nothing."""
        prompt_price = self.price_per_1k_prompt or 0.0
        completion_price = self.price_per_1k_completion or 0.0
        return (prompt_tokens * prompt_price + completion_tokens * completion_price) / 1000.0
