"""YAML is only the serialized form of pydantic models; this module validates it on load.

Every validation error is reported with the file, the dotted field path and the line the
offending value sits on, so a person can fix a pack, plan or tree without guessing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from corix.errors import ConfigError

ModelT = TypeVar("ModelT", bound=BaseModel)
Location = tuple[str | int, ...]


def _scalar(node: yaml.Node) -> Any:
    # A fresh constructor per scalar: SafeConstructor keeps per-document state.
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)


def _construct(node: yaml.Node, path: Location, lines: dict[Location, int]) -> Any:
    """Turn a composed YAML node into plain Python, recording each value's line."""
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node)
            result[key] = _construct(value_node, (*path, key), lines)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_construct(item, (*path, i), lines) for i, item in enumerate(node.value)]
    return _scalar(node)


def _line_for(loc: Location, lines: dict[Location, int]) -> int | None:
    # Pydantic locations may name a field that is missing: fall back to its nearest parent.
    for end in range(len(loc), -1, -1):
        line = lines.get(tuple(loc[:end]))
        if line is not None:
            return line
    return None


def format_location(loc: Location) -> str:
    return ".".join(str(part) for part in loc) or "<root>"


def parse_yaml_model(text: str, model: type[ModelT], *, source: str | Path) -> ModelT:
    """Validate YAML ``text`` into ``model``; ``source`` names the file in errors."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ConfigError(
            f"not valid YAML: {getattr(exc, 'problem', exc)}", path=source, line=line
        ) from None
    lines: dict[Location, int] = {}
    data = _construct(root, (), lines) if root is not None else {}
    try:
        return model.model_validate(data, context={"source": str(source)})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        raise ConfigError(
            first["msg"],
            path=source,
            field=format_location(loc),
            line=_line_for(loc, lines),
        ) from None


def load_yaml_model(path: Path, model: type[ModelT]) -> ModelT:
    """Read and validate ``path`` into ``model``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=path) from None
    return parse_yaml_model(text, model, source=path)
