"""Work items: plain serializable data, so an executor may run them anywhere."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from corix.domain import JsonObject, Level


class WorkItem(BaseModel):
    """One session to produce. ``key`` is stable across runs of the same plan."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    key: str
    kind: str
    application: str
    scenario: str
    level: Level
    seed: int
    payload: JsonObject = Field(default_factory=dict)
