"""Jinja for prompt and persona templates: sandboxed, strict about undefined variables.

Templates produce plain text sent to applications and models, not HTML, so autoescaping is
off; the sandbox keeps a pack's templates from reaching Python internals.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, Template, meta
from jinja2.sandbox import SandboxedEnvironment

_ENVIRONMENT = SandboxedEnvironment(
    undefined=StrictUndefined,
    autoescape=False,  # plain-text prompts: escaping would turn "don't" into "don&#39;t"
    keep_trailing_newline=False,
)


def template_variables(source: str) -> set[str]:
    """The top-level variables ``source`` reads; raises ``jinja2.TemplateSyntaxError``."""
    return set(meta.find_undeclared_variables(_ENVIRONMENT.parse(source)))


@lru_cache(maxsize=1024)
def _compiled(source: str) -> Template:
    return _ENVIRONMENT.from_string(source)


def render(source: str, variables: Mapping[str, Any]) -> str:
    """Render ``source``; an undefined variable raises ``jinja2.UndefinedError``."""
    return _compiled(source).render(variables).strip()
