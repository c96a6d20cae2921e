"""The human testbed in the browser: ``corix serve``.

Blinded red-team and field-test chat sessions, post-session questionnaires, and the
annotation workbench (training, qualification, queues, senior review), over the same
storage as the command line.
"""

from corix.web.app import create_app
from corix.web.roles import Role
from corix.web.settings import WebSettings

__all__ = ["Role", "WebSettings", "create_app"]
