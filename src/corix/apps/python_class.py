"""Adapter for applications written against corix's own interface (``python:module:Class``)."""

from __future__ import annotations

import importlib

from corix.apps.base import Application
from corix.apps.specs import AdapterSpec
from corix.errors import CorixError


def python_class_adapter(spec: AdapterSpec) -> Application:
    module_name, sep, class_name = spec.target.partition(":")
    if not sep:
        raise CorixError(f"python adapter needs MODULE:CLASS, got '{spec.target}'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CorixError(f"cannot import '{module_name}': {exc}") from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Application)):
        raise CorixError(f"'{spec.target}' is not a subclass of corix.apps.base.Application")
    return cls(**spec.options)
