"""The adapter for the built-in demo applications, ``demo:VARIANT``."""

from __future__ import annotations

from corix.apps.base import Application
from corix.apps.demo import build_demo_application
from corix.apps.specs import AdapterSpec


def demo_adapter(spec: AdapterSpec) -> Application:
    return build_demo_application(spec.target)
