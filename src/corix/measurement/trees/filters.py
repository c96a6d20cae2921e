"""Which leaves a node may see: allowed values per leaf column, narrowed down the tree."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from corix.measurement.trees.config import LeafWhere

FILTER_COLUMNS = ("level", "source", "scenario")


@dataclass(frozen=True)
class LeafFilter:
    """Allowed values per column; ``None`` allows any value, an empty set none."""

    level: frozenset[str] | None = None
    source: frozenset[str] | None = None
    scenario: frozenset[str] | None = None

    def allowed(self, column: str) -> frozenset[str] | None:
        allowed: frozenset[str] | None = getattr(self, column)
        return allowed

    def restrict(self, column: str, values: Iterable[str]) -> LeafFilter:
        current = self.allowed(column)
        wanted = frozenset(values)
        return replace(self, **{column: wanted if current is None else current & wanted})

    @classmethod
    def from_where(cls, where: LeafWhere) -> LeafFilter:
        result = cls()
        for column in FILTER_COLUMNS:
            values: list[str] | None = getattr(where, column)
            if values is not None:
                result = result.restrict(column, (str(v) for v in values))
        return result

    def intersect(self, other: LeafFilter) -> LeafFilter:
        result = self
        for column in FILTER_COLUMNS:
            values = other.allowed(column)
            if values is not None:
                result = result.restrict(column, values)
        return result

    def admits(self, column: str, value: str) -> bool:
        allowed = self.allowed(column)
        return allowed is None or value in allowed

    def describe(self, column: str) -> str:
        """``*`` for any value, else the allowed values joined by ``+``."""
        allowed = self.allowed(column)
        return "*" if allowed is None else "+".join(sorted(allowed))
