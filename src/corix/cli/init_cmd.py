"""`corix init`: a commented starter plan that runs offline as written."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Annotated

import typer

from corix.cli.common import console, fail

STARTER_PLAN = "starter_plan.yaml"


def init_command(
    path: Annotated[
        Path,
        typer.Argument(help="The plan file to write (a folder gets plan.yaml in it)."),
    ] = Path("plan.yaml"),
) -> None:
    """Write a commented starter plan that runs offline as written; an existing file is
    never overwritten."""
    from corix.config import write_atomically

    target = path / "plan.yaml" if path.is_dir() else path
    if target.exists():
        raise fail(f"{target} already exists; give another path (nothing was written)")
    if not target.parent.is_dir():
        raise fail(f"{target.parent} is not a folder (nothing was written)")
    text = files("corix.cli").joinpath(STARTER_PLAN).read_text(encoding="utf-8")
    try:
        write_atomically(target, text)
    except OSError as exc:
        raise fail(f"cannot write {target}: {exc.strerror or exc}") from None
    console.print(
        f"wrote {target}: check it with `corix run --check {target}`, then `corix run {target}`",
        highlight=False,
        soft_wrap=True,
    )
