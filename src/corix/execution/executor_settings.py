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
    db_pool: int | None = Field(default=None, ge=1)
    """PostgreSQL connections the workers hold together (split evenly, at least one each);
    by default ``DEFAULT_WORKER_POOL`` per worker."""

    def prepare_cluster(self) -> None:
        """Check the Ray cluster asked for and set the token authentication it expects
        (:mod:`corix.execution.ray_access`): call it before Ray is imported, which reads
        ``RAY_AUTH_MODE`` then."""
        from corix.execution.ray_access import prepare_cluster

        prepare_cluster(self.ray_address)


def build_executor(settings: ExecutorSettings) -> RunExecutor:
    if settings.kind == "local":
        if (settings.ray_address, settings.ray_workers, settings.db_pool) != (None, None, None):
            raise ValueError("the Ray address, workers and pool are options of the 'ray' executor")
        return LocalRunExecutor()
    settings.prepare_cluster()  # before Ray is imported
    from corix.execution.ray_executor import RayRunExecutor  # ray is an optional extra

    return RayRunExecutor(
        address=settings.ray_address, workers=settings.ray_workers, db_pool=settings.db_pool
    )
