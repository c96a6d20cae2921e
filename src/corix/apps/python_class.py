"""Adapter for applications written against corix's own interface (``python:module:Class``).

The class's constructor says which options it takes: any other name is refused with a
"did you mean", and a required one left out is named, before anything is run.
"""

from __future__ import annotations

import importlib
import inspect

from corix.apps.base import Application
from corix.apps.options import InvalidOptionError, checked_options
from corix.apps.specs import AdapterSpec
from corix.errors import CorixError

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


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
    parameters = inspect.signature(cls).parameters.values()
    named = [p for p in parameters if p.kind in _NAMED]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        options = dict(spec.options)  # the class takes any name: it checks its own
    else:
        options = checked_options(spec, [p.name for p in named])
    missing = [p.name for p in named if p.default is p.empty and p.name not in options]
    if missing:
        raise InvalidOptionError(
            f"the '{spec.public()}' application needs option(s) {', '.join(missing)}"
        )
    return cls(**options)
