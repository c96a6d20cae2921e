"""Reading submitted forms whose fields are not known in advance (questionnaires, passes)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Request
from pydantic import Field


async def form_values(request: Request) -> dict[str, str]:
    """Text fields of the submitted form; file uploads are ignored."""
    form = await request.form()
    return {key: value for key, value in form.items() if isinstance(value, str)}


FormValues = Annotated[dict[str, str], Depends(form_values)]
"""The whole form, for sync handlers (FastAPI reads it in the event loop, then runs them)."""


def safe_next(target: str | None, default: str) -> str:
    """A local path to go to after signing in; anything that could leave the site is refused."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return default
    return target


RowId = Annotated[int, Path(ge=1, le=2**31 - 1)]
"""A stored row's id in a URL: a number no database column can hold names no page (404)."""

MAX_STORED_INT = 2**31 - 1
"""The largest value an INTEGER column holds on PostgreSQL: no form field may pass it."""
FormId = Annotated[int, Field(ge=1, le=MAX_STORED_INT)]
"""A row's id chosen in a form (a checkbox's value): out of range is a 422, never a 500."""
