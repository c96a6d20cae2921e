"""Options every measuring command shares: the measurement specification, from a file or flags.

A flag given on the command line overrides the same field of ``--spec FILE``; what is in
force is printed at the top of the output.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from corix.cli.common import fail

if TYPE_CHECKING:
    from corix.measurement import MeasurementSpec

SpecOption = Annotated[
    Path | None,
    typer.Option("--spec", help="Measurement specification (YAML); flags override its fields."),
]
SettlingOption = Annotated[
    str | None,
    typer.Option(
        "--settling",
        help="How an annotator's repeats settle: majority, median, conservative, "
        "keep-disagreement.",
    ),
]
GroupByOption = Annotated[
    str | None,
    typer.Option(
        "--group-annotators-by", help="source (default: human, llm, reference), annotator, all."
    ),
]
AnnotatorsOption = Annotated[
    list[str] | None,
    typer.Option("--annotator", help="Only these annotators (repeatable), e.g. llm:gpt-4o."),
]
KindsOption = Annotated[
    list[str] | None, typer.Option("--kind", help="Only annotators of this kind (repeatable).")
]
SeedOption = Annotated[int | None, typer.Option("--seed", help="Bootstrap seed.")]
SeriesOption = Annotated[
    str | None, typer.Option("--series", help="Measure an evaluation series instead of one run.")
]


def measurement_spec(
    spec_file: Path | None,
    *,
    settling: str | None = None,
    group_by: str | None = None,
    annotators: list[str] | None = None,
    kinds: list[str] | None = None,
    seed: int | None = None,
    confidence: float | None = None,
) -> tuple[MeasurementSpec, str | None]:
    """The specification in force, and the file it came from (``None``: flags only)."""
    from corix.assessment import SETTLING_RULES
    from corix.measurement import AnnotatorSelector, MeasurementSpec, load_spec

    spec = load_spec(spec_file) if spec_file is not None else MeasurementSpec()
    if settling is not None and settling not in SETTLING_RULES:
        raise fail(SETTLING_RULES.unknown_message(settling))
    if group_by is not None and group_by not in ("source", "annotator", "all"):
        raise fail(f"--group-annotators-by must be source, annotator or all, not '{group_by}'")
    if kinds and any(kind not in ("human", "llm", "reference") for kind in kinds):
        raise fail("--kind must be human, llm or reference")
    selectors = [AnnotatorSelector(name=name) for name in annotators or ()]
    selectors += [AnnotatorSelector.model_validate({"kind": kind}) for kind in kinds or ()]
    overrides: dict[str, object] = {
        "settling": settling,
        "group_annotators_by": group_by,
        "annotators": tuple(selectors) or None,
        "seed": seed,
        "confidence": confidence,
    }
    changed = {field: value for field, value in overrides.items() if value is not None}
    spec = MeasurementSpec.model_validate({**spec.model_dump(), **changed})
    return spec, str(spec_file) if spec_file is not None else None


DeltaOption = Annotated[
    float,
    typer.Option(
        "--delta",
        min=0.001,
        max=0.999,
        help="Simulation stands in for people in a cell when every rate difference's "
        "interval lies within ±delta.",
    ),
]
