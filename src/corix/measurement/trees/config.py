"""The YAML form of a CoRIx tree, as pydantic models.

A tree file declares its scale, how each question's answers map onto it, and its nodes.
A node is one of three kinds:

* a **question node** (``question:``) summarizing the responses to one question;
* an **inner node** (``children:``) summarizing other nodes, each edge with a weight;
* a **split node** (``split_by: level | source | scenario``) with one child per value,
  each a copy of the ``each`` subtree restricted to that value. ``each`` names one node,
  or one node per value (``{annotation: labels, questionnaire: perception}``).

``where:`` restricts every leaf under a node (``where: {scenario: meal_planner}``).
Children may be written inline as ``- question: q_id`` instead of a separate node.
Cross-references (unknown nodes, questions, summarizers, cycles) are checked when the
tree is compiled (:mod:`corix.measurement.trees.compiled`).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from corix.domain import JsonObject, Level
from corix.measurement.trees.leaves import LeafSource
from corix.measurement.trees.mappings import QuestionMapping

NodeId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]+$")]
SplitColumn = Literal["level", "source", "scenario"]


def _check_weight(weight: float) -> float:
    if not math.isfinite(weight) or weight < 0:
        raise ValueError(f"weight must be a finite number ≥ 0 (zero is allowed), got {weight}")
    return weight


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LeafWhere(_Strict):
    """Keep only leaves whose column is one of the listed values (one value or a list)."""

    level: list[Level] | None = None
    source: list[LeafSource] | None = None
    scenario: list[str] | None = None

    _one_or_many = field_validator("level", "source", "scenario", mode="before")(_as_list)


class ScaleConfig(_Strict):
    min: float = 0.0
    max: float = 10.0

    @model_validator(mode="after")
    def _ordered(self) -> ScaleConfig:
        if not self.min < self.max:
            raise ValueError(f"scale min ({self.min:g}) must be below max ({self.max:g})")
        return self


class ChildConfig(_Strict):
    """An edge: ``node_id``, ``{node: id, weight: w}``, or an inline ``{question: id, ...}``."""

    node: NodeId | None = None
    question: str | None = None
    weight: float = 1.0
    id: NodeId | None = None
    label: str | None = None
    summarizer: str | None = None
    params: JsonObject = Field(default_factory=dict)
    where: LeafWhere = Field(default_factory=LeafWhere)

    @model_validator(mode="before")
    @classmethod
    def _bare_node_id(cls, data: Any) -> Any:
        return {"node": data} if isinstance(data, str) else data

    _weight = field_validator("weight")(_check_weight)

    @model_validator(mode="after")
    def _one_target(self) -> ChildConfig:
        if (self.node is None) == (self.question is None):
            raise ValueError("a child names either 'node' or 'question'")
        inline_only = {"id", "label", "summarizer", "params", "where"} & self.model_fields_set
        if self.node is not None and inline_only:
            raise ValueError(
                f"{', '.join(sorted(inline_only))} belong on node '{self.node}' itself"
            )
        return self


class NodeConfig(_Strict):
    label: str | None = None
    summarizer: str | None = Field(
        default=None,
        description="Registered summarizer; default 'mean', or the question's own for a "
        "question node.",
    )
    params: JsonObject = Field(default_factory=dict)
    where: LeafWhere = Field(default_factory=LeafWhere)
    question: str | None = None
    children: list[ChildConfig] | None = None
    split_by: SplitColumn | None = None
    values: list[str] | None = None
    each: NodeId | dict[str, NodeId] | None = None
    weights: dict[str, float] = Field(default_factory=dict)

    @field_validator("weights")
    @classmethod
    def _weights_not_negative(cls, weights: dict[str, float]) -> dict[str, float]:
        return {value: _check_weight(weight) for value, weight in weights.items()}

    @model_validator(mode="after")
    def _one_kind(self) -> NodeConfig:
        kinds = [
            name
            for name, given in (
                ("question", self.question is not None),
                ("children", self.children is not None),
                ("split_by", self.split_by is not None),
            )
            if given
        ]
        if len(kinds) != 1:
            raise ValueError(
                "a node has exactly one of 'question', 'children' or 'split_by'"
                + (f"; this one has {', '.join(kinds)}" if kinds else "")
            )
        split_fields = {"values", "each", "weights"} & self.model_fields_set
        if self.split_by is None and split_fields:
            raise ValueError(f"{', '.join(sorted(split_fields))} need 'split_by'")
        if self.split_by is not None and self.each is None:
            raise ValueError("'split_by' needs 'each': the node copied for every value")
        if isinstance(self.each, dict) and self.values is not None:
            raise ValueError("with one 'each' node per value, the values are its keys")
        return self

    def split_values(self) -> list[str] | None:
        """The values given for a split node, or ``None`` to use the column's defaults."""
        return list(self.each) if isinstance(self.each, dict) else self.values

    def each_for(self, value: str) -> str:
        """The node copied for ``value`` (``each`` is set whenever ``split_by`` is)."""
        if isinstance(self.each, dict):
            return self.each[value]
        if self.each is None:
            raise ValueError("not a split node")
        return self.each


class TreeConfig(_Strict):
    """A CoRIx tree file."""

    name: NodeId
    title: str = ""
    description: str = ""
    scale: ScaleConfig = Field(default_factory=ScaleConfig)
    root: NodeId = "root"
    questions: dict[str, QuestionMapping] = Field(default_factory=dict)
    nodes: dict[NodeId, NodeConfig] = Field(min_length=1)
