"""Deterministic instances of JSON schemas, so the mock model can answer structured requests.

Covers the subset that structured-output schemas (including pydantic's) use: objects,
arrays, enums and consts, integers and numbers with bounds, strings, booleans, nulls,
``anyOf``/``oneOf``/``allOf`` and local ``$ref`` into ``$defs``/``definitions``.
"""

from __future__ import annotations

import random
from typing import Any

from corix.domain import JsonObject, JsonSchema

_DEFAULT_INTEGER_RANGE = (0, 100)
_DEFAULT_NUMBER_RANGE = (0.0, 1.0)
_DEFAULT_MAX_EXTRA_ITEMS = 2


def schema_of_response_format(response_format: JsonObject) -> JsonSchema | None:
    """The JSON schema inside an OpenAI ``response_format`` (or a ``json_object`` one with
    llama.cpp's ``schema`` field), if it carries one."""
    if response_format.get("type") == "json_object":
        schema = response_format.get("schema")
        return schema if isinstance(schema, dict) else None
    if response_format.get("type") != "json_schema":
        return None
    json_schema = response_format.get("json_schema")
    if not isinstance(json_schema, dict):
        return None
    schema = json_schema.get("schema")
    return schema if isinstance(schema, dict) else None


def instance_of(schema: JsonSchema, rng: random.Random) -> Any:
    """A value valid against ``schema``, drawn from ``rng`` (same seed, same value)."""
    return _Sampler(schema, rng).sample(schema)


class _Sampler:
    def __init__(self, root: JsonSchema, rng: random.Random) -> None:
        self._root = root
        self._rng = rng

    def sample(self, schema: JsonSchema) -> Any:
        schema = self._resolve(schema)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self._rng.choice(schema["enum"])
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                return self.sample(self._rng.choice(self._prefer_values(schema[keyword])))
        if "allOf" in schema:
            merged: JsonSchema = {}
            for part in schema["allOf"]:
                merged.update(self._resolve(part))
            return self.sample(merged)
        return self._sample_typed(schema, self._type_of(schema))

    def _sample_typed(self, schema: JsonSchema, kind: str) -> Any:
        if kind == "object":
            properties = schema.get("properties", {})
            return {name: self.sample(sub) for name, sub in properties.items()}
        if kind == "array":
            low = schema.get("minItems", 1)
            high = schema.get("maxItems", low + _DEFAULT_MAX_EXTRA_ITEMS)
            item_schema = schema.get("items", {})
            return [self.sample(item_schema) for _ in range(self._rng.randint(low, high))]
        if kind == "integer":
            return self._rng.randint(*self._integer_bounds(schema))
        if kind == "number":
            low = float(schema.get("minimum", _DEFAULT_NUMBER_RANGE[0]))
            high = float(schema.get("maximum", max(low, _DEFAULT_NUMBER_RANGE[1])))
            return min(high, max(low, round(self._rng.uniform(low, high), 2)))
        if kind == "string":
            return self._string(schema)
        if kind == "boolean":
            return self._rng.random() < 0.5
        if kind == "null":
            return None
        raise ValueError(f"the mock model cannot produce JSON schema type '{kind}'")

    def _resolve(self, schema: JsonSchema) -> JsonSchema:
        while "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#/"):
                raise ValueError(f"only local schema references are supported, got {ref!r}")
            target: Any = self._root
            for part in ref[2:].split("/"):
                target = target[part]
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return schema

    def _prefer_values(self, options: list[JsonSchema]) -> list[JsonSchema]:
        # An optional field (pydantic's ``X | None``) is more useful filled in.
        values = [o for o in options if self._resolve(o).get("type") != "null"]
        return values or options

    @staticmethod
    def _type_of(schema: JsonSchema) -> str:
        declared = schema.get("type")
        if isinstance(declared, list):
            # Prefer a real value over null when a type list allows both.
            non_null = [t for t in declared if t != "null"]
            declared = non_null[0] if non_null else "null"
        if isinstance(declared, str):
            return declared
        if "properties" in schema:
            return "object"
        if "items" in schema:
            return "array"
        return "string"

    @staticmethod
    def _integer_bounds(schema: JsonSchema) -> tuple[int, int]:
        low = schema.get("minimum", _DEFAULT_INTEGER_RANGE[0])
        if "exclusiveMinimum" in schema:
            low = schema["exclusiveMinimum"] + 1
        high = schema.get("maximum", max(low, _DEFAULT_INTEGER_RANGE[1]))
        if "exclusiveMaximum" in schema:
            high = schema["exclusiveMaximum"] - 1
        return int(low), int(high)

    def _string(self, schema: JsonSchema) -> str:
        text = f"mock-{self._rng.getrandbits(32):08x}"
        min_length = schema.get("minLength", 0)
        max_length = schema.get("maxLength", max(min_length, len(text)))
        return text.ljust(min_length, "x")[:max_length]
