"""The bounded Jinja sandbox: every render finishes small and fast, whatever the template.

Each bomb is a template a pack, a strategy plugin or an ``http:`` body could hold; unbounded,
the first took 4 GB and 152 s to validate. Bounded, each fails in well under a second with
memory to match, and ordinary templates render exactly as Jinja's own sandbox renders them.
"""

from __future__ import annotations

import time
import tracemalloc

import pytest
from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from corix.config import BoundedSandbox
from corix.config import render_bounded as render
from corix.config.templates import MAX_LOOP_STEPS, MAX_TEXT, TemplateLimitError

BOUNDED = BoundedSandbox(undefined=StrictUndefined, autoescape=False)
PLAIN = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)

_NESTED = "{% for a in outer %}{% for b in outer %}{% endfor %}{% endfor %}"
_DOUBLING = (
    "{% set ns = namespace(s='xx') %}{% for i in range(40) %}{% set ns.s = NEW %}{% endfor %}"
)

BOMBS = {
    "repetition": "{{ 'x' * 10**9 }}",
    "repetition of a list": "{{ ([1] * 10**9) | length }}",
    "nested loops": "{% set outer = range(100000) %}" + _NESTED,
    "loop over a long string, twice": "{% set outer = 'x' * 5000 %}" + _NESTED,
    "doubling": _DOUBLING.replace("NEW", "ns.s + ns.s"),
    "doubling by ~": _DOUBLING.replace("NEW", "ns.s ~ ns.s"),
    "a filter's width": "{{ 'x' | center(10**9) }}",
    "a method's width": "{{ 'x'.ljust(10**9) }}",
    "replace that grows": "{{ ('x' * 100000) | replace('x', 'x' * 100000) }}",
    "join that grows": "{{ (['y' * 100000] * 100) | join }}",
    "join with a long separator": "{{ ('x' * 100000) | join('y' * 100) }}",
    "a format's width": "{{ '{:>100000000}'.format(1) }}",
    "a printf width": "{{ '%100000000s' % 'a' }}",
    "a printf width through the filter": "{{ '%100000000s' | format('a') }}",
    "a huge power": "{{ 7 ** (10 ** 8) }}",
    "output alone": "{% for i in range(200) %}{{ 'y' * 10000 }}{% endfor %}",
}


@pytest.mark.parametrize("source", BOMBS.values(), ids=BOMBS.keys())
def test_a_bomb_fails_fast_with_memory_bounded(source: str) -> None:
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(TemplateLimitError):
            render(BOUNDED.from_string(source), {})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 10  # unbounded, the first took 152 s
    assert peak < 8 * MAX_TEXT * 4, f"peak {peak:,} bytes"


def test_a_template_cannot_shadow_the_loop_budget() -> None:
    source = (
        "{% set budgeted = None %}{% set bounded_text = None %}"
        "{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}"
    )
    with pytest.raises(TemplateLimitError, match=f"{MAX_LOOP_STEPS:,} steps"):
        render(BOUNDED.from_string(source), {})


def test_the_budget_is_per_render() -> None:
    template = BOUNDED.from_string(
        "{% for i in range(100000) %}{% endfor %}{% for i in range(90000) %}{% endfor %}done"
    )
    assert [render(template, {}) for _ in range(3)] == ["done"] * 3


ORDINARY = [
    "Hello {{ name | title }}, {{ items | join(', ') }}!",
    "{% for item in items %}{{ loop.index }}. {{ item ~ '!' }}\n{% endfor %}",
    "{{ '%-5s|' % name }}{{ '{:>6}'.format(name) }}{{ name.replace('a', 'A') }}",
    "{{ (items * 3) | length }} {{ 2 ** 10 }} {{ 'ab' * 3 }} {{ name | center(11) }}",
    "{% for k, v in facts.items() | sort %}{{ k }}={{ v }};{% endfor %}{{ facts | length }}",
    "{% macro say(x) %}<{{ x }}>{% endmacro %}{{ say(name) }}{{ name | wordwrap(3) }}",
]


@pytest.mark.parametrize("source", ORDINARY)
def test_ordinary_templates_render_as_in_jinjas_sandbox(source: str) -> None:
    variables = {"name": "ada", "items": ["tea", "jam"], "facts": {"b": 2, "a": 1}}
    assert render(BOUNDED.from_string(source), variables) == PLAIN.from_string(source).render(
        variables
    )


def test_a_value_just_under_the_limit_is_fine() -> None:
    text = render(BOUNDED.from_string("{{ 'x' * n }}"), {"n": MAX_TEXT})
    assert len(text) == MAX_TEXT
