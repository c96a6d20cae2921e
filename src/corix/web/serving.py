"""Serving the app with uvicorn, in one process or several.

Every process builds its own app from one :class:`ServeConfig` handed down in the
environment (uvicorn starts workers by importing a factory), so all of them share the
database, the settings and the secret key that signs forms: a form rendered by one process
is accepted by another, and nothing a request needs lives in one process only.
"""

from __future__ import annotations

import contextlib
import os
import socket
from typing import TYPE_CHECKING

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict

from corix.storage import Database
from corix.web.app import create_app
from corix.web.settings import WebSettings

if TYPE_CHECKING:
    import uvicorn

__all__ = [
    "CONFIG_ENV",
    "ServeConfig",
    "app_from_environment",
    "proxy_settings",
    "serve",
    "shared_listener",
]

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
    from uvicorn.supervisors import Multiprocess

    os.environ[CONFIG_ENV] = config.model_dump_json()
    believe, proxies = proxy_settings(trusted_proxies)
    server_config = uvicorn.Config(
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
    if workers == 1:
        server = uvicorn.Server(server_config)
        server.run()
        if not server.started:
            raise SystemExit(3)  # as uvicorn.run: the server never started
        return
    with contextlib.suppress(KeyboardInterrupt):
        Multiprocess(server_config, sockets=[shared_listener(server_config)]).run()


def shared_listener(server_config: uvicorn.Config) -> socket.socket:
    """The listening socket several worker processes accept on, with Nagle's algorithm off:
    their connections inherit it, and without it every page waited ~40 ms for a delayed
    ACK (44 ms against 2.4 ms in one process)."""
    listener = server_config.bind_socket()
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return listener


def proxy_settings(trusted: list[str] | None) -> tuple[bool, str | None]:
    """uvicorn's proxy options: forwarded headers only from the named proxies, or never."""
    if not trusted:
        return False, None
    return True, ",".join(trusted)
