"""How long a module's functions are, signature and decorators included: the layout tests
hold some packages to a limit."""

from __future__ import annotations

import ast

LIMIT = 60


def long_functions(source: str, name: str) -> list[str]:
    """Every function in ``source`` (nested ones too) longer than ``LIMIT`` lines."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = (node.end_lineno or node.lineno) - first + 1
            if lines > LIMIT:
                found.append(f"{name}:{node.lineno} {node.name} ({lines} lines)")
    return found
