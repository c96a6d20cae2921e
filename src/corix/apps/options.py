"""Checking an adapter's options: every name is known, one name per setting.

A misspelt option is an error with a "did you mean", never silently ignored; an old name
still works for now but warns, naming the one to use.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import ValidationError

from corix.apps.specs import AdapterSpec
from corix.config import validation_problem
from corix.domain import JsonObject
from corix.errors import CorixError, closest_name
from corix.llm import EndpointConfig

__all__ = [
    "ENDPOINT_OPTIONS",
    "RENAMED_ENDPOINT_OPTIONS",
    "DeprecatedOptionWarning",
    "InvalidOptionError",
    "UnknownOptionError",
    "checked_options",
    "endpoint_config",
    "endpoint_options",
    "spec_prices",
]


class UnknownOptionError(CorixError):
    """An adapter was given an option it does not take."""


class InvalidOptionError(CorixError):
    """An adapter's option has a value it cannot use."""


class DeprecatedOptionWarning(FutureWarning):
    """An option was given by an old name; it still works, under its current name."""


def checked_options(
    spec: AdapterSpec, accepted: Collection[str], renamed: Mapping[str, str] | None = None
) -> JsonObject:
    """``spec``'s options under their current names; unknown names raise, old ones warn."""
    renamed = renamed or {}
    options: JsonObject = {}
    for name, value in spec.options.items():
        if name in renamed:
            current = renamed[name]
            warnings.warn(
                f"option '{name}' of the '{spec.kind}' adapter is deprecated: use '{current}'",
                DeprecatedOptionWarning,
                stacklevel=2,
            )
            name = current
        elif name not in accepted:
            raise unknown_option(spec.kind, name, accepted)
        options[name] = value
    return options


def unknown_option(kind: str, name: str, accepted: Collection[str]) -> UnknownOptionError:
    close = closest_name(name, accepted)
    hint = f" Did you mean '{close}'?" if close else ""
    listing = ", ".join(sorted(accepted)) or "none"
    return UnknownOptionError(
        f"unknown option '{name}' of the '{kind}' adapter.{hint} Known: {listing}."
    )


ENDPOINT_OPTIONS = frozenset(EndpointConfig.model_fields) - {"transport", "base_url"}
"""A spec's endpoint settings take the names of the one endpoint model, as plans do."""

RENAMED_ENDPOINT_OPTIONS = {
    "concurrency": "max_concurrency",
    "timeout": "timeout_s",
    "retries": "max_retries",
    "retry_after_max": "retry_after_max_s",
    "call_deadline": "call_deadline_s",
    "rpm": "requests_per_minute",
    "tpm": "tokens_per_minute",
    "price_prompt": "price_per_1k_prompt",
    "price_completion": "price_per_1k_completion",
}
"""The short names specs used before they took the endpoint model's."""

_FIXED = "fixed_concurrency"
_OLD_BOUND = "concurrency"


def endpoint_options(spec: AdapterSpec, own: Collection[str] = ()) -> tuple[JsonObject, JsonObject]:
    """``spec``'s options split into endpoint settings and the adapter's ``own`` options."""
    options = dict(spec.options)
    if _FIXED in options:  # the inverse of adaptive_concurrency, under its old name
        warnings.warn(
            f"option '{_FIXED}' of the '{spec.kind}' adapter is deprecated: "
            "use 'adaptive_concurrency=false'",
            DeprecatedOptionWarning,
            stacklevel=2,
        )
        fixed = options.pop(_FIXED)
        options["adaptive_concurrency"] = not _flag(fixed)
    if _OLD_BOUND in options and "adaptive_concurrency" not in options:
        # Before the limit adapted, 'concurrency=N' held N requests in flight from the
        # first call. The old name keeps that meaning: as an adaptive ceiling, a plan
        # written with it started at 2 and spent a dozen latencies reaching N (at 1,000
        # dialogues and 1 s latency, 1.55x the ideal wall instead of 1.10x).
        options["adaptive_concurrency"] = False
    checked = checked_options(
        dataclasses.replace(spec, options=options),
        ENDPOINT_OPTIONS | frozenset(own),
        RENAMED_ENDPOINT_OPTIONS,
    )
    settings = {k: v for k, v in checked.items() if k in ENDPOINT_OPTIONS and v != ""}
    return settings, {k: v for k, v in checked.items() if k in own}


def endpoint_config(spec: AdapterSpec, settings: Mapping[str, Any]) -> EndpointConfig:
    """The endpoint model from ``settings``; a bad value names the option and what it got."""
    try:
        return EndpointConfig.model_validate(settings)
    except ValidationError as exc:
        problems = "; ".join(validation_problem(error) + _given(error) for error in exc.errors())
        raise InvalidOptionError(f"the spec '{spec.public()}' is not valid: {problems}") from None


def _given(error: Any) -> str:
    value = error.get("input")
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return f" (got {str(value)[:40]!r})"
    return ""


def _flag(value: Any) -> bool:
    """An option given as a YAML boolean or as query text (``true``, ``1``, ``yes``)."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def spec_prices(spec: str, options: Mapping[str, Any] | None = None) -> tuple[float, float] | None:
    """The (prompt, completion) prices per 1,000 tokens that an application's spec and
    plan options give, under either name (a missing one is 0); ``None`` when neither is
    given: the price is unknown."""
    given = AdapterSpec.parse(spec, options).options
    prices = [
        given.get(current, given.get(old))
        for old, current in (
            ("price_prompt", "price_per_1k_prompt"),
            ("price_completion", "price_per_1k_completion"),
        )
    ]
    if all(price is None or price == "" for price in prices):
        return None
    return float(prices[0] or 0), float(prices[1] or 0)
