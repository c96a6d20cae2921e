"""Jinja for simulated users' messages and prompts: sandboxed, strict, with obfuscation filters.

These are corix's own templates and the attack strategies plugins register, written as
blocks (``trim_blocks``) and tidied of the blanks an empty variable leaves; a scenario
pack's prompt and persona templates are rendered, and validated, by
:mod:`corix.scenarios.templating` instead, which has neither the filters nor the tidying.
Messages are plain text sent to applications and models, so autoescaping is off; undefined
variables raise, so a broken template fails loudly instead of sending a half-empty message.
The filters implement the obfuscations an attack strategy may use: ``base64``, ``leet`` and
``typos``, all deterministic.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, Template

from corix.config import BoundedSandbox, render_bounded

_LEET = str.maketrans({"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"})
_WORD = re.compile(r"[A-Za-z]{4,}")
_TYPO_EVERY = 3  # every third long word gets two letters swapped
_SPACE_RUNS = re.compile(r"  +")
_LINE_EDGES = re.compile(r" *\n *")


def to_base64(text: str) -> str:
    """``text`` as base64 (UTF-8)."""
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def to_leetspeak(text: str) -> str:
    """Letters swapped for look-alike digits: "secret" → "53cr37"."""
    return text.lower().translate(_LEET)


def with_typos(text: str) -> str:
    """Every third word of four letters or more with its two middle letters swapped."""
    count = 0

    def swap(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        word = match.group()
        if count % _TYPO_EVERY:
            return word
        middle = len(word) // 2
        return word[: middle - 1] + word[middle] + word[middle - 1] + word[middle + 1 :]

    return _WORD.sub(swap, text)


def tidy(text: str) -> str:
    """Collapse the blanks an empty variable leaves behind; keep deliberate line breaks.

    Each run of spaces and tabs becomes one space, and spaces next to a line break go.
    The substring checks skip a regular expression's pass where it would change nothing:
    a pass costs tens of microseconds on a system prompt, rendered once per session.
    """
    if "\t" in text:
        text = text.replace("\t", " ")
    if "  " in text:
        text = _SPACE_RUNS.sub(" ", text)
    if " \n" in text or "\n " in text:
        text = _LINE_EDGES.sub("\n", text)
    return text.strip()


_ENVIRONMENT = BoundedSandbox(
    undefined=StrictUndefined,
    autoescape=False,  # plain-text messages: escaping would turn "don't" into "don&#39;t"
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENVIRONMENT.add_filters({"base64": to_base64, "leet": to_leetspeak, "typos": with_typos})


@lru_cache(maxsize=512)
def _compiled(source: str) -> Template:
    return _ENVIRONMENT.from_string(source)


def render(source: str, variables: Mapping[str, Any]) -> str:
    """Render ``source`` and tidy its blanks; an undefined variable raises ``UndefinedError``."""
    return tidy(render_bounded(_compiled(source), variables))
