"""The human testbed in the browser: ``corix serve``.

Blinded red-team and field-test chat sessions, post-session questionnaires, and the
annotation workbench (training, qualification, queues, senior review), over the same
storage as the command line.
"""

from corix.web.app import create_app
from corix.web.roles import Role
from corix.web.services.accounts import Accounts
from corix.web.services.service_errors import InputError, ServiceError
from corix.web.serving import ServeConfig, serve
from corix.web.settings import WebSettings
from corix.web.state import accounts_for

__all__ = [
    "Accounts",
    "InputError",
    "Role",
    "ServeConfig",
    "ServiceError",
    "WebSettings",
    "accounts_for",
    "create_app",
    "serve",
]
