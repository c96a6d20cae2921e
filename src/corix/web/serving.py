"""Serving the app with uvicorn, in one process or several.

Every process builds its own app from one :class:`ServeConfig` handed down in the
environment (uvicorn starts workers by importing a factory), so all of them share the
database, the settings and the secret key that signs forms: a form rendered by one process
is accepted by another, and nothing a request needs lives in one process only.
"""

from __future__ import annotations

import os

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict

from corix.storage import Database
from corix.web.app import create_app
from corix.web.settings import WebSettings

__all__ = ["CONFIG_ENV", "ServeConfig", "app_from_environment", "proxy_settings", "serve"]

CONFIG_ENV = "CORIX_SERVE_CONFIG"
FACTORY = "corix.web.serving:app_from_environment"


class ServeConfig(BaseModel):
    """What every server process needs to build the same app."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    database_url: str
    settings: WebSettings


def app_from_environment() -> FastAPI:
    """The app a server process runs (uvicorn's factory); the database is already migrated
    by the command that started the processes."""
    config = ServeConfig.model_validate_json(os.environ[CONFIG_ENV])
    return create_app(Database(config.database_url, run_migrations=False), settings=config.settings)


def serve(
    config: ServeConfig,
    *,
    host: str,
    port: int,
    workers: int = 1,
    trusted_proxies: list[str] | None = None,
) -> None:
    """Run ``workers`` server processes on one port until interrupted."""
    import uvicorn

    os.environ[CONFIG_ENV] = config.model_dump_json()
    believe, proxies = proxy_settings(trusted_proxies)
    uvicorn.run(
        FACTORY,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
        proxy_headers=believe,
        forwarded_allow_ips=proxies,
        # Browsers keep connections open between messages; a short keep-alive made testers
        # pausing between messages meet closed connections (resets under load).
        timeout_keep_alive=75,
        backlog=4096,
    )


def proxy_settings(trusted: list[str] | None) -> tuple[bool, str | None]:
    """uvicorn's proxy options: forwarded headers only from the named proxies, or never."""
    if not trusted:
        return False, None
    return True, ",".join(trusted)
