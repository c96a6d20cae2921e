"""What a run is asked to do — a plan, or a stored run to go on with — and where.

`corix run` parses its flags into a :class:`RunRequest`; :func:`plan_to_run` turns it into
the plan that runs, with the checks every caller needs: a resumed run's stored plan must
still be a plan (an imported run has none), and a response cache, a file of this machine,
cannot go to Ray workers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from corix.domain import PlanFile, runnable_plan
from corix.errors import ConfigError
from corix.execution.executor_settings import ExecutorSettings
from corix.storage import Database, get_run

__all__ = ["RunRequest", "plan_to_run", "was_sequential"]


@dataclass(frozen=True)
class RunRequest:
    """A plan file to run, or the id of a stored run to resume (exactly one)."""

    plan: PlanFile | None = None
    resume_run: str | None = None
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)

    def __post_init__(self) -> None:
        if (self.plan is None) == (self.resume_run is None):
            raise ValueError("a run request names a plan or a run to resume, not both")


def plan_to_run(db: Database, request: RunRequest) -> PlanFile:
    """The plan ``request`` runs: its own, or the one stored with the run it resumes."""
    if request.plan is not None:
        source = request.plan
    else:
        assert request.resume_run is not None  # __post_init__: one of the two
        source = PlanFile(runnable_plan(request.resume_run, get_run(db, request.resume_run).plan))
    if request.executor.kind == "ray" and source.plan.cache:
        # Ray workers open their own applications; a cache file on this machine is not theirs.
        raise ConfigError(
            "a response cache is a file on this machine; --executor ray runs without one"
        )
    return source


def was_sequential(db: Database, resume_run: str | None) -> bool:
    """Whether ``resume_run`` names a run started in waves (it resumes in waves)."""
    return resume_run is not None and get_run(db, resume_run).summary.sequential is not None
