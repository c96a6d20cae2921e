"""The adapter for the built-in demo applications, ``demo:VARIANT``."""

from __future__ import annotations

from corix.apps.base import Application
from corix.apps.demo import build_demo_application
from corix.apps.options import checked_options
from corix.apps.specs import AdapterSpec


def demo_adapter(spec: AdapterSpec) -> Application:
    checked_options(spec, ())  # the demo applications take no options
    return build_demo_application(spec.target)
