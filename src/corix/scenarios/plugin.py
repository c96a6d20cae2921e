"""corix's own scenario packs (:data:`corix.registry.BUILTIN_PLUGINS`)."""

from __future__ import annotations

from corix.registry import Plugin
from corix.scenarios.loader import PACK_FOLDERS, builtin_pack_dir, list_builtin_packs


def register(plugin: Plugin) -> None:
    for name in list_builtin_packs():
        plugin.add(PACK_FOLDERS, name, builtin_pack_dir() / name)
