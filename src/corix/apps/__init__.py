"""Applications under test: the interface and its adapters, selected by spec string.

Adapter kinds register in ``ADAPTERS`` (corix's own in :mod:`corix.apps.plugin`).
"""

from corix.apps.base import Application, ApplicationError, AppReply, AppSession
from corix.apps.check import CheckReport, check_application
from corix.apps.options import spec_prices
from corix.apps.specs import ADAPTERS, AdapterFactory, AdapterSpec, build_application

__all__ = [
    "ADAPTERS",
    "AdapterFactory",
    "AdapterSpec",
    "AppReply",
    "AppSession",
    "Application",
    "ApplicationError",
    "CheckReport",
    "build_application",
    "check_application",
    "spec_prices",
]
