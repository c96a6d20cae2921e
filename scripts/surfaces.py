"""Measure corix's public surfaces: how many names each package exports, and who uses them.

A package's surface is the ``__all__`` of its ``__init__``; another package uses a name when
one of its modules writes ``from corix.<package> import <name>`` (the only way the import
contract allows). Tests and scripts are not consumers: a name only they import belongs to
its defining module, not to the surface.

``PYTHONPATH=src python scripts/surfaces.py`` prints one row per package; ``--names PACKAGE``
lists that package's names with the packages using each.
"""

from __future__ import annotations

import argparse
import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "corix"


@dataclass(frozen=True)
class Surface:
    """One package's exported names, each with the other src packages that import it."""

    package: str
    users: dict[str, frozenset[str]]

    @property
    def exported(self) -> int:
        return len(self.users)

    def used_by(self, count: int) -> list[str]:
        """The names used by exactly ``count`` other packages."""
        return sorted(name for name, users in self.users.items() if len(users) == count)

    @property
    def used_widely(self) -> list[str]:
        """The names used by two other packages or more."""
        return sorted(name for name, users in self.users.items() if len(users) >= 2)


def exported_names(init: Path) -> list[str] | None:
    """The literal ``__all__`` of a package's ``__init__``, or None when it has none."""
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            return list(ast.literal_eval(node.value))
    return None


def imports_by_package(src: Path) -> dict[tuple[str, str], set[str]]:
    """``(package, name) -> packages importing it``, from every module under ``src``.

    A module's package is its top-level part (``corix/web/x.py`` and ``corix/demo.py`` are
    ``web`` and ``demo``); imports inside functions count as much as those at the top.
    """
    users: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path in src.rglob("*.py"):
        importer = path.relative_to(src).parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
                continue
            parts = node.module.split(".")
            if len(parts) == 2 and parts[0] == "corix" and parts[1] != importer:
                for alias in node.names:
                    users[(parts[1], alias.name)].add(importer)
    return users


def surfaces(src: Path = SRC) -> list[Surface]:
    """Every top-level package with an ``__all__``, sorted by name."""
    users = imports_by_package(src)
    found: list[Surface] = []
    for init in sorted(src.glob("*/__init__.py")):
        package = init.parent.name
        names = exported_names(init)
        if names is not None:
            found.append(
                Surface(package, {n: frozenset(users.get((package, n), ())) for n in names})
            )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", metavar="PACKAGE", help="list one package's names")
    args = parser.parse_args()
    found = surfaces()
    if args.names:
        (surface,) = (s for s in found if s.package == args.names)
        for name, users in sorted(surface.users.items(), key=lambda item: len(item[1])):
            print(f"{name:40} {', '.join(sorted(users)) or '-'}")
        return
    print(f"{'package':12} {'exported':>8} {'used by 0':>9} {'by 1':>5} {'by 2+':>6}")
    for s in found:
        print(
            f"{s.package:12} {s.exported:8} {len(s.used_by(0)):9} {len(s.used_by(1)):5}"
            f" {len(s.used_widely):6}"
        )
    print(f"{'total':12} {sum(s.exported for s in found):8}")


if __name__ == "__main__":
    main()
