"""Scored nodes: what a tree says about one application."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from typing_extensions import TypeAliasType

from corix.errors import UnknownNameError
from corix.measurement.stats import few_testers_warning

# A numeric node holds a float; an aggregation node the tuple of its children's values.
NodeValue = Union[float, tuple["NodeValue", ...], None]  # noqa: UP007 - recursive alias


@dataclass(frozen=True)
class NodeProvenance:
    """Whose answers a node holds: the annotators (named with their kind, e.g.
    ``llm:judge``) whose labels feed it, and how many questionnaire respondents."""

    annotators: tuple[str, ...] = ()
    respondents: int = 0


@dataclass(frozen=True)
class NodeResult:
    """One node for one application.

    ``value`` is ``None`` when the node is empty (no leaves, or only empty children); it
    is never silently 0. ``n`` counts the dialogues under the node (the unit).
    ``ci_low``/``ci_high`` are the bootstrap interval when one was computed, and
    ``interval`` says how it was made (what was resampled; a ``max``/``min`` node's
    interval from its children's intervals); ``testers`` how many testers
    (a dialogue without one counts as its own) the interval rests on, and ``warning``
    says when they are too few. ``bias`` (``max``/``min`` nodes) is the bootstrap's
    estimate of the published value's bias: the max of noisy children overshoots, so
    ``bias_corrected`` = ``value − bias`` stands beside the value NIST AI 700-2 publishes.
    ``context`` holds the split values on the way from the root (e.g.
    ``{"level": "field_testing"}``); ``dialogues`` the ids behind the node and
    ``provenance`` whose answers they are, when requested.
    In a DAG a shared child is the same object under each parent.
    """

    id: str
    label: str
    summarizer: str
    value: NodeValue
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    interval: str | None = None
    testers: int | None = None
    bias: float | None = None
    children: tuple[NodeResult, ...] = ()
    context: Mapping[str, str] = field(default_factory=dict)
    dialogues: tuple[str, ...] | None = None
    provenance: NodeProvenance | None = None

    @property
    def empty(self) -> bool:
        return self.value is None

    @property
    def skipped(self) -> tuple[str, ...]:
        """Children left out of this node's summary because they are empty."""
        return tuple(child.id for child in self.children if child.empty)

    @property
    def numeric_value(self) -> float | None:
        return self.value if isinstance(self.value, float) else None

    @property
    def bias_corrected(self) -> float | None:
        """``value − bias`` for a ``max``/``min`` node with a bootstrap, else ``None``."""
        value = self.numeric_value
        return None if value is None or self.bias is None else value - self.bias

    @property
    def warning(self) -> str | None:
        """Why the interval should not be trusted (too few testers), if it should not."""
        return None if self.testers is None else few_testers_warning(self.testers)

    def walk(self) -> Iterator[NodeResult]:
        """This node and its descendants, depth first, each once (shared children too)."""
        seen: set[str] = set()
        pending = [self]
        while pending:
            node = pending.pop()
            if node.id in seen:
                continue
            seen.add(node.id)
            yield node
            pending.extend(reversed(node.children))

    def find(self, node_id: str) -> NodeResult:
        for node in self.walk():
            if node.id == node_id:
                return node
        raise UnknownNameError(f"no node '{node_id}' under '{self.id}'")

    def document(self) -> NodeDocument:
        """The node as ``corix tree score --json`` and the report give it (see
        :class:`NodeDocument` for which keys it has)."""
        data: dict[str, object] = {
            "id": self.id,
            "label": self.label,
            "summarizer": self.summarizer,
            "value": _json_value(self.value),
            "n": self.n,
        }
        if self.ci_low is not None and self.ci_high is not None:
            data["ci_low"], data["ci_high"] = self.ci_low, self.ci_high
            if self.interval is not None:
                data["interval"] = self.interval
            if self.testers is not None:
                data["testers"] = self.testers
            if self.warning is not None:
                data["warning"] = self.warning
        if self.bias is not None:
            data["bias"] = self.bias
            data["bias_corrected"] = self.bias_corrected
        if self.empty:
            data["empty"] = True
        if self.skipped:
            data["skipped"] = list(self.skipped)
        if self.context:
            data["context"] = dict(self.context)
        if self.dialogues is not None:
            data["dialogues"] = list(self.dialogues)
        if self.provenance is not None:
            data["annotators"] = list(self.provenance.annotators)
            data["respondents"] = self.provenance.respondents
        data["children"] = [child.document() for child in self.children]
        return NodeDocument.model_validate(data)


JsonNodeValue = TypeAliasType("JsonNodeValue", "float | list[JsonNodeValue] | None")
"""A node's value in JSON: a number, null when empty, an aggregation's list of values."""


class SetKeysOnly(BaseModel):
    """A document that writes only the keys it was given a value for: an optional key is
    absent, not ``null``, where the measurement has nothing to say."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_serializer(mode="wrap")
    def _given_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        return {key: value for key, value in data.items() if key in self.model_fields_set}


class NodeDocument(SetKeysOnly):
    """A scored node as JSON: ``id``, ``label``, ``summarizer``, ``value``, ``n``,
    ``children``; plus ``ci_low`` / ``ci_high`` when computed (with ``interval``,
    ``testers`` and ``warning`` when known), ``bias`` / ``bias_corrected`` for a
    ``max``/``min`` node with a bootstrap, ``empty`` / ``skipped`` when something is empty,
    ``context``, ``dialogues``, ``annotators`` and ``respondents`` when known."""

    id: str
    label: str
    summarizer: str
    value: JsonNodeValue
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    interval: str | None = None
    testers: int | None = None
    warning: str | None = None
    bias: float | None = None
    bias_corrected: float | None = None
    empty: bool = False
    skipped: list[str] = Field(default_factory=list)
    context: dict[str, str] = Field(default_factory=dict)
    dialogues: list[str] | None = None
    annotators: list[str] | None = None
    respondents: int | None = None
    children: list[NodeDocument]


def _json_value(value: NodeValue) -> JsonNodeValue:
    if isinstance(value, tuple):
        return [_json_value(item) for item in value]
    return value
