"""One whole annotation invocation as a typed request, and the one call that carries it out."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from corix.assessment.annotation_run._options import AnnotateOptions, ProgressHooks
from corix.assessment.annotation_run._runner import annotate_run
from corix.assessment.annotation_run._summary import AnnotationSummary
from corix.execution import ExecutorSettings
from corix.llm import EndpointConfig
from corix.storage import Database


class AnnotationRequest(BaseModel):
    """Which run, which annotator, what to ask, whom to ask, and where the work runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    annotator: str = "reference"
    options: AnnotateOptions = Field(default_factory=AnnotateOptions)
    endpoint: EndpointConfig | None = None
    """The judge's endpoint (LLM annotators only)."""
    executor: ExecutorSettings = Field(default_factory=ExecutorSettings)
    cache: Path | None = None
    """A SQLite file caching model replies across runs (local executor only)."""


def annotate(
    db: Database, request: AnnotationRequest, progress: ProgressHooks | None = None
) -> AnnotationSummary:
    """Carry out ``request`` here, or over Ray when its executor says so."""
    if request.executor.kind == "ray":
        request.executor.prepare_cluster()  # before Ray, an optional extra, is imported
        from corix.assessment.annotation_run.on_ray import annotate_run_on_ray

        return annotate_run_on_ray(
            db,
            request.run_id,
            request.annotator,
            options=request.options,
            endpoint=request.endpoint,
            settings=request.executor,
            progress=progress,
        )
    return annotate_run(
        db,
        request.run_id,
        request.annotator,
        options=request.options,
        endpoint=request.endpoint,
        cache=request.cache,
        progress=progress,
    )
