"""A Jinja sandbox with bounds on work and size, for templates that users write.

Jinja's own sandbox keeps a template from Python's internals but not from the machine:
``{{ 'x' * 10**9 }}`` took 4 GB and 152 s to validate, and two nested loops over
``range(100000)`` run for hours. :class:`BoundedSandbox` makes every render finish small
and fast, deterministically (the same template passes or fails on any machine, at any load):

- **work**: a render may take at most :data:`MAX_LOOP_STEPS` loop iterations in all;
  every ``for`` loop counts its steps against that budget;
- **size**: no value a template makes (a repetition, a concatenation, a filter's or a
  method's result) and no rendered text may exceed :data:`MAX_TEXT` characters (or items);
  repetitions, exponents, widths and joins are checked *before* they allocate;
- **numbers**: an integer argument to a filter or method (a width, a count) may not exceed
  :data:`MAX_TEXT`, and ``**`` may not make an integer over :data:`MAX_INT_BITS` bits.

A template over a bound raises :class:`TemplateLimitError` (a ``SecurityError``) naming the
bound, so pack validation reports it like any other refusal of the sandbox.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from contextvars import ContextVar
from functools import wraps
from typing import Any, cast

from jinja2 import Template, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment
from jinja2.visitor import NodeTransformer

MAX_TEXT = 1_000_000
"""Characters (or items) in any value a template makes, and in its rendered text."""
MAX_LOOP_STEPS = 200_000
"""Loop iterations in one render, all loops together."""
MAX_INT_BITS = 4_096
"""The largest integer ``**`` may make, in bits."""

_steps_left: ContextVar[int] = ContextVar("template_steps_left", default=MAX_LOOP_STEPS)
# A format spec's width or precision: ``{:>1000000000}`` or ``%1000000000s``.
_FORMAT_NUMBER = re.compile(r"\d{7,}")


class TemplateLimitError(SecurityError):
    """A template went past one of the bounds of :class:`BoundedSandbox`."""


def _size(value: object) -> int:
    return len(value) if isinstance(value, Sized) and not isinstance(value, Mapping) else 0


def _check_size(value: Any, what: str) -> Any:
    if _size(value) > MAX_TEXT:
        raise TemplateLimitError(f"{what} makes a value over {MAX_TEXT:,} characters")
    return value


def _check_arguments(args: Iterable[Any], what: str) -> None:
    for arg in args:
        if isinstance(arg, int) and not isinstance(arg, bool) and abs(arg) > MAX_TEXT:
            raise TemplateLimitError(f"{what} was given {arg:,}: over the limit of {MAX_TEXT:,}")
        if isinstance(arg, str) and _FORMAT_NUMBER.search(arg) and ("{" in arg or "%" in arg):
            raise TemplateLimitError(f"{what} was given a format with a width over {MAX_TEXT:,}")


def _check_amplification(name: str, subject: Any, args: tuple[Any, ...]) -> None:
    """Refuse the calls whose result can outgrow their inputs before they run."""
    if name == "replace" and isinstance(subject, str) and len(args) >= 2:
        old, new = str(args[0]), str(args[1])
        growth = (len(subject) + 1) * max(len(new) - len(old), 0) // max(len(old), 1)
        if len(subject) + growth > MAX_TEXT:
            raise TemplateLimitError(f"replace could make a value over {MAX_TEXT:,} characters")
    elif name == "format" and isinstance(subject, str) and _FORMAT_NUMBER.search(subject):
        raise TemplateLimitError(f"format was given a width over {MAX_TEXT:,}")
    elif name == "join":
        parts = args[0] if args else subject
        if isinstance(parts, list | tuple):
            total = sum(_size(part) for part in parts) + len(parts) * _size(subject)
            if total > MAX_TEXT:
                raise TemplateLimitError(f"join makes a value over {MAX_TEXT:,} characters")


def budgeted(iterable: Iterable[Any]) -> Iterator[Any]:
    """Iterate ``iterable``, counting each step against the render's loop budget."""
    for item in iterable:
        left = _steps_left.get() - 1
        if left < 0:
            raise TemplateLimitError(
                f"the template's loops went past {MAX_LOOP_STEPS:,} steps in one render"
            )
        _steps_left.set(left)
        yield item


def bounded_text(value: str) -> str:
    """A concatenation's result (``a ~ b``), checked for size."""
    return str(_check_size(value, "a concatenation"))


class _BoundTheTree(NodeTransformer):
    """Rewrites a parsed template: every ``for`` loop iterates a budgeted iterator, every
    ``~`` passes its result through a size check. The helpers are imported by dotted name
    (``nodes.ImportedName``), so a template cannot shadow them with a variable of its own."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = _helper_call("budgeted", cast(nodes.Expr, node.iter))
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _helper_call("bounded_text", node)


def _helper_call(helper: str, argument: nodes.Expr) -> nodes.Call:
    call = nodes.Call(nodes.ImportedName(f"{__name__}.{helper}"), [argument], [], None, None)
    call.set_lineno(argument.lineno)
    return call


class _BoundedCodeGenerator(CodeGenerator):
    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        super().visit_Template(_BoundTheTree().visit(node), frame)


def _bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    # A filter marked to take the environment or context gets it first: it is not data.
    skip = 1 if getattr(function, "jinja_pass_arg", None) is not None else 0

    @wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        if len(args) > skip + 1 or kwargs:
            rest = args[skip + 1 :]
            _check_arguments([*rest, *kwargs.values()], f"the filter '{name}'")
            _check_amplification(name, args[skip] if len(args) > skip else None, rest)
        return _check_size(function(*args, **kwargs), f"the filter '{name}'")

    return bounded


class BoundedSandbox(SandboxedEnvironment):
    """Jinja's sandbox with bounds on loop steps, value sizes and numbers (see the module)."""

    code_generator_class = _BoundedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.filters = {name: _bounded_filter(name, f) for name, f in self.filters.items()}

    def add_filters(self, filters: Mapping[str, Callable[..., Any]]) -> None:
        """Register filters of one's own, bounded like Jinja's."""
        self.filters.update({name: _bounded_filter(name, f) for name, f in filters.items()})

    def call_binop(self, context: Any, operator_name: str, left: Any, right: Any) -> Any:
        if operator_name == "*":
            for sequence, count in ((left, right), (right, left)):
                if isinstance(count, int) and _size(sequence) * max(count, 0) > MAX_TEXT:
                    raise TemplateLimitError(
                        f"a repetition makes a value over {MAX_TEXT:,} characters"
                    )
        elif operator_name == "**" and isinstance(left, int) and isinstance(right, int):
            if right > 0 and max(abs(left), 1).bit_length() * right > MAX_INT_BITS:
                raise TemplateLimitError(f"a power makes a number over {MAX_INT_BITS:,} bits")
        elif operator_name == "%" and isinstance(left, str):
            _check_arguments([left], "a % format")
        result = super().call_binop(context, operator_name, left, right)
        return _check_size(result, f"'{operator_name}'")

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        # Jinja swaps ``str.format`` for a sandboxed formatter when it is looked up; the
        # format's widths are checked then, before anything is formatted.
        if getattr(value, "__name__", None) in {"format", "format_map"}:
            _check_amplification("format", getattr(value, "__self__", None), ())
        return super().wrap_str_format(value)

    def call(
        __self,
        __context: Any,
        __obj: Any,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        if __obj is budgeted or __obj is bounded_text:  # the sandbox's own, on every loop
            return __obj(*args)
        name = getattr(__obj, "__name__", "a call")
        _check_arguments([*args, *kwargs.values()], f"'{name}'")
        _check_amplification(name, getattr(__obj, "__self__", None), args)
        result = super().call(__context, __obj, *args, **kwargs)
        return _check_size(result, f"'{name}'")


def render_bounded(template: Template, variables: Mapping[str, Any]) -> str:
    """Render ``template`` within the bounds; raises :class:`TemplateLimitError` past one."""
    token = _steps_left.set(MAX_LOOP_STEPS)
    try:
        pieces: list[str] = []
        length = 0
        for piece in template.generate(variables):
            length += len(piece)
            if length > MAX_TEXT:
                raise TemplateLimitError(f"the rendered text is over {MAX_TEXT:,} characters")
            pieces.append(piece)
        return "".join(pieces)
    finally:
        _steps_left.reset(token)


__all__ = [
    "MAX_INT_BITS",
    "MAX_LOOP_STEPS",
    "MAX_TEXT",
    "BoundedSandbox",
    "TemplateLimitError",
    "render_bounded",
]
