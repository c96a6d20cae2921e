"""Registers the built-in demo applications under ``demo:VARIANT``."""

from __future__ import annotations

from corix.apps.base import Application
from corix.apps.demo import build_demo_application
from corix.apps.specs import ADAPTERS, AdapterSpec


@ADAPTERS.register("demo")
def _demo(spec: AdapterSpec) -> Application:
    return build_demo_application(spec.target)
