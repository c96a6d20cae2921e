"""The FastAPI app factory: ``create_app(db)`` gives the whole human testbed."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from urllib.parse import quote

import anyio.to_thread
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy.pool import QueuePool
from starlette.exceptions import HTTPException as StarletteHTTPException

from corix.registry import load_plugins
from corix.storage import Database, NotFoundError
from corix.web.auth import CsrfFailure, NotAllowed, NotSignedIn, verify_csrf
from corix.web.middleware import BodyLimit, SecurityHeaders, ServerTiming
from corix.web.rendering import redirect, render, wants_json
from corix.web.routes import admin, annotator, auth, senior, tester
from corix.web.schemas import ErrorOut
from corix.web.services.service_errors import ServiceError
from corix.web.settings import WebSettings
from corix.web.state import WebState

MAX_BODY_BYTES = 256 * 1024
DEFAULT_WORKER_THREADS = 8


def error_response(request: Request, status_code: int, message: str) -> Response:
    if wants_json(request):
        return JSONResponse(ErrorOut(error=message).model_dump(), status_code=status_code)
    return render(request, "error.html", {"message": message}, status_code=status_code)


def match_threads_to_connections(db: Database) -> None:
    """Run blocking work (all database access) on no more threads than the pool has connections.

    More threads than pooled connections only queue for a connection, or open and close
    overflow connections on every request, and fight over the GIL: under load that costs
    about twice the CPU per request.
    """
    pool = db.engine.pool
    size = pool.size() if isinstance(pool, QueuePool) else DEFAULT_WORKER_THREADS
    anyio.to_thread.current_default_thread_limiter().total_tokens = max(1, size)


def create_app(
    db: Database,
    *,
    secret_key: str | None = None,
    settings: WebSettings | None = None,
    rng: random.Random | None = None,
) -> FastAPI:
    """The web app over ``db``. ``secret_key`` overrides the settings' key (which signs CSRF
    tokens); without either, a random key is made and open forms expire on restart.
    ``rng`` draws qualification dialogues (a seeded one makes draws reproducible)."""
    # Every registry is filled before the first request: threads never race to load them.
    load_plugins()
    settings = settings or WebSettings()
    if secret_key is not None:
        settings = settings.model_copy(update={"secret_key": secret_key})
    state = WebState.build(db, settings, rng=rng)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        match_threads_to_connections(db)
        yield
        await state.automation.close()
        await state.machine_annotation.close()
        await state.live.close()
        state.accounts.close()

    app = FastAPI(
        title="corix",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
        dependencies=[Depends(verify_csrf)],
    )
    app.state.corix = state
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)
    app.add_middleware(SecurityHeaders)
    # Outermost: the time covers every other layer.
    app.add_middleware(ServerTiming)
    static = resources.files("corix.web").joinpath("static")
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    for module in (auth, admin, tester, annotator, senior):
        app.include_router(module.router)
    _install_error_pages(app)
    return app


def _install_error_pages(app: FastAPI) -> None:
    @app.exception_handler(NotSignedIn)
    async def _sign_in(request: Request, _exc: NotSignedIn) -> Response:
        if wants_json(request):
            return error_response(request, 401, "please sign in again")
        back = request.url.path if request.method == "GET" else ""
        return redirect(f"/login?next={quote(back)}" if back else "/login")

    @app.exception_handler(NotAllowed)
    async def _forbidden(request: Request, _exc: NotAllowed) -> Response:
        return error_response(request, 403, "this page is not part of your role")

    @app.exception_handler(CsrfFailure)
    async def _csrf(request: Request, _exc: CsrfFailure) -> Response:
        return error_response(
            request, 403, "this form has expired; go back, reload the page and try again"
        )

    @app.exception_handler(ServiceError)
    async def _service(request: Request, exc: ServiceError) -> Response:
        return error_response(request, exc.status_code, str(exc))

    @app.exception_handler(NotFoundError)
    async def _not_stored(request: Request, exc: NotFoundError) -> Response:
        return error_response(request, 404, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        if any(error.get("loc", ("",))[0] == "path" for error in exc.errors()):
            # A malformed or out-of-range id in a URL names no page.
            return error_response(request, 404, "there is no such page")
        return error_response(request, 422, "the form was incomplete or not valid")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        message = "there is no such page" if exc.status_code == 404 else str(exc.detail)
        return error_response(request, exc.status_code, message)
