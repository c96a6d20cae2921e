"""corix's own adapter kinds (:data:`corix.registry.BUILTIN_PLUGINS`)."""

from __future__ import annotations

from corix.apps.aria import aria_adapter
from corix.apps.demo_adapter import demo_adapter
from corix.apps.http_json import http_adapter
from corix.apps.openai_chat import local_adapter, openai_adapter
from corix.apps.python_class import python_class_adapter
from corix.apps.specs import ADAPTERS
from corix.registry import Plugin


def register(plugin: Plugin) -> None:
    plugin.add(ADAPTERS, "aria", aria_adapter)
    plugin.add(ADAPTERS, "demo", demo_adapter)
    plugin.add(ADAPTERS, "http", http_adapter)
    plugin.add(ADAPTERS, "local", local_adapter)
    plugin.add(ADAPTERS, "openai", openai_adapter)
    plugin.add(ADAPTERS, "python", python_class_adapter)
