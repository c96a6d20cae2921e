"""Signing in and out, invitations, and the landing page."""

from __future__ import annotations

import asyncio
import math
from typing import Annotated

import anyio
from fastapi import APIRouter, Form, Request
from fastapi.responses import PlainTextResponse, Response

from corix.storage.web.accounts import UserRecord
from corix.web.auth import (
    SESSION_COOKIE,
    clear_session_cookie,
    current_user,
    set_session_cookie,
)
from corix.web.rendering import RefusedForm, redirect, render
from corix.web.roles import HOME_OF_ROLE
from corix.web.routes._forms import safe_next
from corix.web.security import HashingBusy
from corix.web.services.service_errors import InputError
from corix.web.services.sign_in_throttle import SignInDecision
from corix.web.state import web_state

router = APIRouter()


def _busy(retry_s: int) -> str:
    return f"Many people are signing in at this moment. Please try again in {retry_s} s."


@router.get("/")
def home(request: Request) -> Response:
    user = current_user(request)
    if user is None:
        return redirect("/login")
    return redirect(HOME_OF_ROLE[user.role])


@router.get("/healthz", include_in_schema=False)
def health() -> PlainTextResponse:
    return PlainTextResponse("ok")


@router.get("/login")
def login_page(request: Request, next: str | None = None) -> Response:
    user = current_user(request)
    if user is not None:
        return redirect(HOME_OF_ROLE[user.role])
    return render(request, "login.html", {"next": safe_next(next, "")})


@router.post("/login")
async def login(
    request: Request,
    username: Annotated[str, Form(max_length=200)],
    password: Annotated[str, Form(max_length=1000)],
    next: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    """Async, so that a burst of sign-ins holds no request thread: the database work runs on
    the request threads a moment at a time, the hashing in the hashing pool."""
    state = web_state(request)
    address = request.client.host if request.client else "unknown"
    account = username.strip().lower()

    def refused(message: str, status_code: int) -> Response:
        form = RefusedForm(message, status_code, values={"username": username})
        return render(request, "login.html", {"next": next}, refused=form)

    def count_and_look_up() -> tuple[SignInDecision, tuple[UserRecord, str] | None]:
        # One trip to a request thread for both: under load each trip waits for a thread.
        decision = state.throttle.attempt(account, address)
        return decision, state.accounts.sign_in_record(username) if decision.wait_s <= 0 else None

    decision, found = await anyio.to_thread.run_sync(count_and_look_up)
    if decision.wait_s > 0:
        return refused(
            f"Too many failed attempts. Please wait {_duration(decision.wait_s)} and try again.",
            429,
        )
    if decision.slow_down_s > 0:
        await asyncio.sleep(decision.slow_down_s)
    try:
        user = await state.accounts.verify(found, password)
    except HashingBusy as busy:
        answer = refused(_busy(busy.retry_s), 503)
        answer.headers["retry-after"] = str(busy.retry_s)
        return answer
    if user is None:
        return refused("Wrong username or password.", 401)

    def settle_and_open() -> str:
        state.throttle.succeeded(account, address)
        return state.accounts.open_session(user.id)

    token = await anyio.to_thread.run_sync(settle_and_open)
    response = redirect(safe_next(next, HOME_OF_ROLE[user.role]))
    set_session_cookie(request, response, token)
    return response


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{math.ceil(seconds)} second(s)"
    return f"{math.ceil(seconds / 60)} minute(s)"


@router.post("/logout")
def logout(request: Request) -> Response:
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        web_state(request).accounts.close_session(token)
    response = redirect("/login", notice="signed_out")
    clear_session_cookie(response)
    return response


@router.get("/invite/{token}")
def invitation_page(request: Request, token: str) -> Response:
    """The sign-up form; an unknown, used or expired invitation gets the error page instead."""
    role = web_state(request).accounts.invitation_role(token)
    return render(request, "invite.html", {"token": token, "role": role})


@router.post("/invite/{token}")
async def accept_invitation(
    request: Request,
    token: str,
    username: Annotated[str, Form(max_length=200)],
    password: Annotated[str, Form(max_length=1000)],
    password_again: Annotated[str, Form(max_length=1000)],
) -> Response:
    state = web_state(request)
    role = await anyio.to_thread.run_sync(state.accounts.invitation_role, token)
    try:
        if password != password_again:
            raise InputError("the two passwords differ", {"password_again": "does not match"})
        user = await state.accounts.accept_invitation(token, username, password)
    except InputError as exc:
        refused = RefusedForm.of(exc, values={"username": username})
        return render(request, "invite.html", {"token": token, "role": role}, refused=refused)
    except HashingBusy as busy:
        refused = RefusedForm(_busy(busy.retry_s), 503, values={"username": username})
        return render(request, "invite.html", {"token": token, "role": role}, refused=refused)
    session = await anyio.to_thread.run_sync(state.accounts.open_session, user.id)
    response = redirect(HOME_OF_ROLE[user.role], notice="welcome")
    set_session_cookie(request, response, session)
    return response
