"""Which executor runs a plan's work items: settings, and the executor they build."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from corix.execution.executors import LocalRunExecutor, RunExecutor

__all__ = ["ExecutorSettings", "build_executor"]


class ExecutorSettings(BaseModel):
    """Which executor runs the work items, and where its cluster is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    """An existing Ray cluster (``ray://host:10001`` or ``auto``); none starts a local one."""
    ray_workers: int | None = Field(default=None, ge=1)
    """Worker processes; by default one per CPU of the cluster."""


def build_executor(settings: ExecutorSettings) -> RunExecutor:
    if settings.kind == "local":
        if settings.ray_address is not None or settings.ray_workers is not None:
            raise ValueError("the Ray address and workers are options of the 'ray' executor")
        return LocalRunExecutor()
    from corix.execution.ray_executor import RayRunExecutor  # ray is an optional extra

    return RayRunExecutor(address=settings.ray_address, workers=settings.ray_workers)
