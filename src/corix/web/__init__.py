"""The human testbed in the browser: ``corix serve``.

Blinded red-team and field-test chat sessions, post-session questionnaires, and the
annotation workbench (training, qualification, queues, senior review), over the same
storage as the command line.

Roles and settings load at once; the app and its services (FastAPI, the stores) load when
first used, so a command that only names a role or a setting does not wait for them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from corix.web.roles import Role
from corix.web.settings import WebSettings

if TYPE_CHECKING:
    from corix.web.results_home import results_home_app
    from corix.web.services.accounts import Accounts
    from corix.web.services.service_errors import InputError, ServiceError
    from corix.web.serving import ServeConfig, serve
    from corix.web.state import accounts_for

_LOADED_WHEN_USED = {
    "Accounts": "corix.web.services.accounts",
    "InputError": "corix.web.services.service_errors",
    "ServiceError": "corix.web.services.service_errors",
    "ServeConfig": "corix.web.serving",
    "serve": "corix.web.serving",
    "accounts_for": "corix.web.state",
    "results_home_app": "corix.web.results_home",
}


def __getattr__(name: str) -> Any:
    if name not in _LOADED_WHEN_USED:
        raise AttributeError(f"module 'corix.web' has no attribute '{name}'")
    return getattr(import_module(_LOADED_WHEN_USED[name]), name)


__all__ = [
    "Accounts",
    "InputError",
    "Role",
    "ServeConfig",
    "ServiceError",
    "WebSettings",
    "accounts_for",
    "results_home_app",
    "serve",
]
