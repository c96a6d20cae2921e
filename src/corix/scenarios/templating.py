"""Jinja for prompt and persona templates: sandboxed, strict about undefined variables.

Templates produce plain text sent to applications and models, not HTML, so autoescaping is
off; the sandbox keeps a pack's templates from reaching Python internals, and its bounds keep a
render small and quick (:mod:`corix.config.templates`). Simulated users'
own messages have an environment of their own, with obfuscation filters
(:mod:`corix.levels.simulation.message_templates`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, Template, meta, nodes

from corix.config import BoundedSandbox, render_bounded

_ENVIRONMENT = BoundedSandbox(
    undefined=StrictUndefined,
    autoescape=False,  # plain-text prompts: escaping would turn "don't" into "don&#39;t"
    keep_trailing_newline=False,
)


def template_variables(source: str) -> set[str]:
    """The top-level variables ``source`` reads; raises ``jinja2.TemplateSyntaxError``."""
    return set(meta.find_undeclared_variables(_ENVIRONMENT.parse(source)))


def private_attributes(source: str) -> list[str]:
    """Attributes and keys starting with ``_`` that ``source`` reads, such as ``__class__``.

    The sandbox refuses them when a render reaches them; finding them in the syntax tree
    catches those in branches that no parameter set takes.
    """
    tree = _ENVIRONMENT.parse(source)
    names = [node.attr for node in tree.find_all(nodes.Getattr)]
    names += [
        node.arg.value
        for node in tree.find_all(nodes.Getitem)
        if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str)
    ]
    return [name for name in names if name.startswith("_")]


@lru_cache(maxsize=1024)
def _compiled(source: str) -> Template:
    return _ENVIRONMENT.from_string(source)


def render(source: str, variables: Mapping[str, Any]) -> str:
    """Render ``source``; an undefined variable raises ``jinja2.UndefinedError``, a template
    past the sandbox's bounds ``TemplateLimitError``."""
    return render_bounded(_compiled(source), variables).strip()
