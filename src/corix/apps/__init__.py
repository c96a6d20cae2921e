"""Applications under test: the interface and its adapters, selected by spec string."""

from corix.apps import aria, demo_adapter, http_json, openai_chat, python_class
from corix.apps.base import Application, ApplicationError, AppReply, AppSession
from corix.apps.specs import ADAPTERS, AdapterSpec, build_application

__all__ = [
    "ADAPTERS",
    "AdapterSpec",
    "AppReply",
    "AppSession",
    "Application",
    "ApplicationError",
    "aria",
    "build_application",
    "demo_adapter",
    "http_json",
    "openai_chat",
    "python_class",
]
