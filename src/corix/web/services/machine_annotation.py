"""Automated annotators started from the admin pages, run in the server's event loop.

The same code as ``corix annotate`` (:func:`corix.assessment.annotation_run.annotate_run_async`),
on one run of a series or on every run of it. What is already stored is skipped, so
starting it twice does no harm. The reference annotator runs offline; the LLM annotator
uses the built-in mock model unless an OpenAI-compatible endpoint is given, whose API
key is read from a named environment variable of the server, never from the form.
"""

from __future__ import annotations

import logging
from enum import StrEnum

from pydantic import ValidationError

from corix.assessment.annotation_run import AnnotateOptions, annotate_run_async
from corix.llm import MOCK_MODEL_NAME, EndpointConfig, LLMClient
from corix.storage import Database
from corix.storage.web.series import run_ids
from corix.web.services.background import BackgroundTasks
from corix.web.services.service_errors import InputError

log = logging.getLogger(__name__)


class MachineAnnotator(StrEnum):
    REFERENCE = "reference"
    LLM = "llm"

    @property
    def label(self) -> str:
        return MACHINE_LABELS[self]


MACHINE_LABELS = {
    MachineAnnotator.REFERENCE: "Reference annotator (rules, offline)",
    MachineAnnotator.LLM: "LLM annotator",
}
EVERY_RUN = "all"


def llm_endpoint(url: str, model: str, key_env: str) -> EndpointConfig:
    """The LLM annotator's endpoint: the built-in mock model when no URL is given."""
    try:
        if not url.strip():
            return EndpointConfig(name="mock", transport="mock", model=MOCK_MODEL_NAME)
        if not model.strip():
            raise InputError("an endpoint needs a model name", {"model": "required"})
        return EndpointConfig(
            name="annotator",
            base_url=url.strip(),
            model=model.strip(),
            key_env=key_env.strip() or None,
        )
    except ValidationError as exc:
        raise InputError(f"the endpoint is not valid: {exc.errors()[0]['msg']}") from None


class MachineAnnotations:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._background = BackgroundTasks()

    def runs_of(self, evaluation_id: str, chosen: str) -> list[str]:
        """The run ids to annotate: one run of the series, or all of them (``all``)."""
        runs = run_ids(self._db, evaluation_id)
        if chosen == EVERY_RUN:
            return runs
        if chosen not in runs:
            raise InputError("choose a run of this series", {"run": "unknown"})
        return [chosen]

    def start(
        self, run_ids: list[str], annotator: MachineAnnotator, endpoint: EndpointConfig | None
    ) -> None:
        """Schedule the annotation of ``run_ids``. Must be called in the event loop."""
        self._background.spawn(self._run(run_ids, annotator, endpoint))

    async def _run(
        self, run_ids: list[str], annotator: MachineAnnotator, endpoint: EndpointConfig | None
    ) -> None:
        try:
            if endpoint is None:
                for run_id in run_ids:
                    await annotate_run_async(self._db, run_id, annotator, options=AnnotateOptions())
                return
            async with LLMClient(endpoint) as client:
                for run_id in run_ids:
                    await annotate_run_async(
                        self._db, run_id, annotator, options=AnnotateOptions(), client=client
                    )
        except Exception:
            log.exception("annotating %s with '%s' failed", ", ".join(run_ids), annotator)

    @property
    def running(self) -> int:
        return self._background.running

    async def close(self) -> None:
        await self._background.close()
