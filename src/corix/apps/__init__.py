"""Applications under test: the interface and its adapters, selected by spec string.

Adapter kinds register in ``ADAPTERS`` (corix's own in :mod:`corix.apps.plugin`).
"""

from corix.apps.base import Application, ApplicationError, AppReply, AppSession
from corix.apps.specs import ADAPTERS, AdapterSpec, build_application

__all__ = [
    "ADAPTERS",
    "AdapterSpec",
    "AppReply",
    "AppSession",
    "Application",
    "ApplicationError",
    "build_application",
]
