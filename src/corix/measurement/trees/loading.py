"""Loading CoRIx trees: from a YAML file, from YAML text, or a shipped tree by name."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import yaml

from corix.config import parse_yaml_model, read_config_text
from corix.errors import unknown_name
from corix.measurement.trees.compiled import Location, TreeSpec, compile_tree
from corix.measurement.trees.config import TreeConfig

_BUILTIN_DIRECTORY = "trees"


def builtin_trees() -> tuple[str, ...]:
    """Names of the trees shipped with corix (``aria_pilot``, ``ai_rmf``)."""
    directory = resources.files("corix.measurement").joinpath(_BUILTIN_DIRECTORY)
    return tuple(
        sorted(
            entry.name.removesuffix(".yaml")
            for entry in directory.iterdir()
            if entry.name.endswith(".yaml")
        )
    )


def parse_tree(text: str, *, source: str = "<tree>") -> TreeSpec:
    """Validate and compile YAML ``text``; ``source`` names it in errors."""
    config = parse_yaml_model(text, TreeConfig, source=source)
    return compile_tree(config, source=source, find_line=_LineFinder(text))


def load_tree(path_or_name: Path | str) -> TreeSpec:
    """Load a tree from a YAML file, or a shipped tree by name (see :func:`builtin_trees`)."""
    text, source = read_tree_text(path_or_name)
    return parse_tree(text, source=source)


def read_tree_text(path_or_name: Path | str) -> tuple[str, str]:
    """A tree file's text and the name errors give it: a YAML path, or a shipped tree's name."""
    if isinstance(path_or_name, Path) or path_or_name.endswith((".yaml", ".yml")):
        path = Path(path_or_name)
        return read_config_text(path), str(path)
    if path_or_name not in builtin_trees():
        raise unknown_name("built-in tree", path_or_name, builtin_trees())
    resource = (
        resources.files("corix.measurement")
        .joinpath(_BUILTIN_DIRECTORY)
        .joinpath(f"{path_or_name}.yaml")
    )
    source = f"corix.measurement/{_BUILTIN_DIRECTORY}/{path_or_name}.yaml"
    return resource.read_text(encoding="utf-8"), source


class _LineFinder:
    """The line of a field in YAML text, for errors found after validation."""

    def __init__(self, text: str) -> None:
        self.root = yaml.compose(text, Loader=yaml.SafeLoader)

    def __call__(self, location: Location) -> int | None:
        node = self.root
        line = None
        for part in location:
            child = self._child(node, part)
            if child is None:
                break
            node = child
            line = node.start_mark.line + 1
        return line

    @staticmethod
    def _child(node: yaml.Node | None, part: str | int) -> yaml.Node | None:
        if isinstance(node, yaml.MappingNode):
            return next((value for key, value in node.value if key.value == str(part)), None)
        if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            child: yaml.Node = node.value[part]
            return child
        return None
