"""YAML is only the serialized form of pydantic models; this module validates it on load.

Every validation error is reported with the file, the dotted field path and the line the
offending value sits on, so a person can fix a pack, plan or tree without guessing.

Configuration comes from people and is not trusted: text must be UTF-8, nesting is bounded,
and aliases may not expand a small document into a huge one (the "billion laughs").
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar, get_args

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from corix.errors import ConfigError, ConfigErrors, closest_name

ModelT = TypeVar("ModelT", bound=BaseModel)
Location = tuple[str | int, ...]

MAX_DEPTH = 64
"""Nesting deeper than any plan, pack or tree needs; deeper documents are refused."""
ALIAS_BUDGET = 10_000
"""Nodes that aliases may repeat in one document: generous for shared anchors, far below
what an alias bomb needs to hurt."""


def _scalar(node: yaml.Node) -> Any:
    # A fresh constructor per scalar: SafeConstructor keeps per-document state.
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)


class _Builder:
    """Turns a composed YAML node into plain Python, recording each value's line.

    A node reached again is an alias being expanded; every such node counts against
    ``ALIAS_BUDGET``.
    """

    def __init__(self, source: str | Path) -> None:
        self.source = source
        self.lines: dict[Location, int] = {}
        self._seen: set[int] = set()
        self._repeated = 0

    def build(self, node: yaml.Node, path: Location = ()) -> Any:
        line = node.start_mark.line + 1
        if len(path) > MAX_DEPTH:
            raise ConfigError(f"nested deeper than {MAX_DEPTH} levels", path=self.source, line=line)
        if id(node) in self._seen:
            self._repeated += 1
            if self._repeated > ALIAS_BUDGET:
                raise ConfigError(
                    f"aliases expand to more than {ALIAS_BUDGET} repeated values",
                    path=self.source,
                    line=line,
                )
        self._seen.add(id(node))
        self.lines[path] = line
        if isinstance(node, yaml.MappingNode):
            result: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = _scalar(key_node)
                result[key] = self.build(value_node, (*path, key))
            return result
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return _scalar(node)


_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # without libyaml: Python's


def compose_yaml(text: str, *, source: str | Path) -> yaml.Node | None:
    """The YAML node graph of ``text``; syntax errors and runaway nesting name the file."""
    try:
        # libyaml's composer is about ten times faster (a pack of 5,000 scripts: seconds);
        # what it refuses is composed again in Python, whose errors corix words.
        return yaml.compose(text, Loader=_FAST_LOADER)
    except (yaml.YAMLError, RecursionError):
        pass
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ConfigError(
            f"not valid YAML: {getattr(exc, 'problem', exc)}", path=source, line=line
        ) from None
    except RecursionError:  # the composer recurses once per nesting level
        raise ConfigError(f"nested deeper than {MAX_DEPTH} levels", path=source) from None


def yaml_data(text: str, *, source: str | Path) -> tuple[Any, dict[Location, int]]:
    """Plain Python from YAML ``text`` and the line of every value, within the budgets."""
    root = compose_yaml(text, source=source)
    builder = _Builder(source)
    data = builder.build(root) if root is not None else {}
    return data, builder.lines


def read_config_text(path: Path) -> str:
    """A configuration file's text; unreadable or non-UTF-8 files name the file and line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=path) from None
    try:
        return raw.decode("utf-8-sig")  # a byte-order mark (Excel's CSV) is no content
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
            path=path,
            line=line,
        ) from None


def line_for(loc: Location, lines: Mapping[Location, int]) -> int | None:
    # Pydantic locations may name a field that is missing: fall back to its nearest parent.
    for end in range(len(loc), -1, -1):
        line = lines.get(tuple(loc[:end]))
        if line is not None:
            return line
    return None


def format_location(loc: Location) -> str:
    return ".".join(str(part) for part in loc) or "<root>"


def validation_summary(exc: ValidationError) -> str:
    """Pydantic's errors as ``field: problem; …`` on one line, without its links."""
    return "; ".join(validation_problem(error) for error in exc.errors())


def validation_problem(error: ErrorDetails) -> str:
    """One of pydantic's errors as ``field: problem`` (a model-level check has no field,
    and its message reads whole without pydantic's "Value error, ")."""
    message = error["msg"].removeprefix("Value error, ")
    field = ".".join(map(str, error["loc"]))
    return f"{field}: {message}" if field else message


def parse_yaml_model(text: str, model: type[ModelT], *, source: str | Path) -> ModelT:
    """Validate YAML ``text`` into ``model``; ``source`` names the file in errors."""
    return parse_yaml_document(text, model, source=source)[0]


def parse_yaml_document(
    text: str, model: type[ModelT], *, source: str | Path
) -> tuple[ModelT, dict[Location, int]]:
    """``model`` from YAML ``text``, with the line of every value (for later errors)."""
    data, lines = yaml_data(text, source=source)
    try:
        return model.model_validate(data, context={"source": str(source)}), lines
    except ValidationError as exc:
        problems = [
            ConfigError(
                _message(model, error),
                path=source,
                field=format_location(tuple(error["loc"])),
                line=line_for(tuple(error["loc"]), lines),
            )
            for error in _causes(exc.errors())
        ]
        problems.sort(key=lambda problem: problem.line or 0)
        raise ConfigErrors(problems) from None


def _causes(errors: list[ErrorDetails]) -> list[ErrorDetails]:
    """The errors that are not mere consequences of another: a container reported empty or
    invalid because an item inside it failed says nothing the item's own error does not."""
    locations = [tuple(error["loc"]) for error in errors]
    return [
        error
        for error, loc in zip(errors, locations, strict=True)
        if not any(len(other) > len(loc) and other[: len(loc)] == loc for other in locations)
    ]


def _message(model: type[BaseModel], error: ErrorDetails) -> str:
    """Pydantic's message; an unknown field gets the field it most likely meant."""
    loc = tuple(error["loc"])
    if error["type"] != "extra_forbidden" or not loc:
        return error["msg"]
    known = _fields_at(model, loc[:-1])
    if not known:
        return error["msg"]
    close = closest_name(str(loc[-1]), known)
    hint = f"; did you mean '{close}'?" if close else f"; known: {', '.join(sorted(known))}"
    return f"unknown field '{loc[-1]}'{hint}"


def _fields_at(model: type[BaseModel], loc: Location) -> list[str]:
    """The field names of the model found at ``loc`` inside ``model``, if one is found."""
    current: Any = model
    for part in loc:
        current = _model_in(current)
        if current is None:
            return []
        if isinstance(part, int) or part not in current.model_fields:
            continue  # a list index or a dict key: the item's type is already current
        current = current.model_fields[part].annotation
    found = _model_in(current)
    return list(found.model_fields) if found is not None else []


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The one pydantic model an annotation holds (itself, or inside a list, dict, union)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    models = [m for arg in get_args(annotation) if (m := _model_in(arg)) is not None]
    return models[0] if len(models) == 1 else None


def load_yaml_model(path: Path, model: type[ModelT]) -> ModelT:
    """Read and validate ``path`` into ``model``."""
    return parse_yaml_model(read_config_text(path), model, source=path)
