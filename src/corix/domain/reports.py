"""The settings a report was written with, stored with every run it covers.

``corix report`` takes options that otherwise live only on a command line: the trees, the
bootstrap and its seed, the runs compared over time, the measurement specification.
Stored with the run, they say which settings made the report someone is holding, and
which reports were made of a run, long after the command is gone.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from corix.domain.json_values import JsonObject

ReportFormat = Literal["html", "markdown", "json"]


class ReportTree(BaseModel):
    """A CoRIx tree as given (a shipped name or a file path) and the SHA-256 of what was
    scored, so a tree file edited since is told apart from the one the report used."""

    model_config = ConfigDict(frozen=True)

    tree: str
    sha256: str


class ReportOutput(BaseModel):
    """One file the report was written to."""

    model_config = ConfigDict(frozen=True)

    format: ReportFormat
    path: str = Field(description="absolute, as written")


_DEFAULT_DELTA = 0.10


class WrittenReportSettings(BaseModel):
    """Everything that decided one written report, and where it went."""

    model_config = ConfigDict(frozen=True)

    runs: tuple[str, ...] = Field(description="the runs measured (a series' every run)")
    series: str | None = None
    trees: tuple[ReportTree, ...]
    bootstrap: int
    seed: int
    confidence: float
    transcripts_per_group: int
    view_gap: float
    compare_runs: tuple[str, ...] | None = Field(
        default=None, description="the runs asked for with --compare-runs, as given"
    )
    compared_runs: tuple[str, ...] = Field(
        description="the earlier runs the report compares over time, as resolved"
    )
    measurement: JsonObject = Field(
        description="the measurement specification in force, as applied (its trees' "
        "hashes, corix's version, the file it was read from)"
    )
    measurement_digest: str
    measurement_source: str | None = None
    simulation_delta: float = Field(
        default=_DEFAULT_DELTA,
        description="simulated testers stand in for people in a cell when every rate "
        "difference's interval lies within ± this",
    )
    corix_version: str
    written_at: datetime
    outputs: tuple[ReportOutput, ...]

    @property
    def digest(self) -> str:
        """A short hash of what decides the report's content: not when or where it was
        written, nor how the compared runs were asked for (``compared_runs`` says which
        they were), so two reports of the same record with one digest say the same."""
        left_out = {"written_at", "outputs", "compare_runs"}
        if self.simulation_delta == _DEFAULT_DELTA:  # reports written before it keep their digest
            left_out.add("simulation_delta")
        payload = self.model_dump(mode="json", exclude=left_out)
        text = json.dumps(payload, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]
