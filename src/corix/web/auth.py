"""Who is asking: session cookies, role guards and CSRF checks as FastAPI dependencies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Request, Response

from corix.web.roles import ANNOTATOR_ROLES, TESTER_ROLES, Role
from corix.web.security import new_token
from corix.web.services.accounts import SignedInUser
from corix.web.state import web_state

SESSION_COOKIE = "corix_session"
CSRF_COOKIE = "corix_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class NotSignedIn(Exception):
    """Handled by sending the browser to the sign-in page."""


class NotAllowed(Exception):
    """A signed-in user asked for another role's page: answered with 403."""


class CsrfFailure(Exception):
    """A form without a valid CSRF token: answered with 403."""


def current_user(request: Request) -> SignedInUser | None:
    """The signed-in user, looked up once per request."""
    if not hasattr(request.state, "user"):
        token = request.cookies.get(SESSION_COOKIE)
        request.state.user = web_state(request).accounts.user_for_session(token) if token else None
    found: SignedInUser | None = request.state.user
    return found


def signed_in(request: Request) -> SignedInUser:
    user = current_user(request)
    if user is None:
        raise NotSignedIn()
    return user


def role_guard(*roles: Role) -> Callable[[Request], SignedInUser]:
    """A dependency admitting only ``roles``; everyone else gets 403 or the sign-in page."""
    allowed = frozenset(roles)

    def guard(request: Request) -> SignedInUser:
        user = signed_in(request)
        if user.role not in allowed:
            raise NotAllowed()
        return user

    guard.__name__ = f"only_{'_'.join(sorted(allowed))}"
    return guard


only_admin = role_guard(Role.ADMIN)
only_testers = role_guard(*TESTER_ROLES)
only_annotators = role_guard(*ANNOTATOR_ROLES)
only_seniors = role_guard(Role.SENIOR_ANNOTATOR)

Admin = Annotated[SignedInUser, Depends(only_admin)]
Tester = Annotated[SignedInUser, Depends(only_testers)]
Annotator = Annotated[SignedInUser, Depends(only_annotators)]
Senior = Annotated[SignedInUser, Depends(only_seniors)]


# -- cookies -----------------------------------------------------------------------------
def _secure(request: Request) -> bool:
    configured = web_state(request).settings.cookie_secure
    return request.url.scheme == "https" if configured is None else configured


def set_cookie(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        httponly=True,
        samesite="lax",
        secure=_secure(request),
        path="/",
    )


def set_session_cookie(request: Request, response: Response, token: str) -> None:
    hours = web_state(request).settings.session_hours
    set_cookie(request, response, SESSION_COOKIE, token, int(hours * 3600))
    # A new sign-in gets new CSRF tokens: forms rendered for the previous identity expire.
    response.delete_cookie(CSRF_COOKIE, path="/")


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/")


# -- CSRF --------------------------------------------------------------------------------
def csrf_seed(request: Request) -> str | None:
    """What a CSRF token is bound to: the session cookie, or an anonymous cookie before it."""
    return request.cookies.get(SESSION_COOKIE) or request.cookies.get(CSRF_COOKIE)


def csrf_token(request: Request) -> str:
    """The token for forms on this page, minting the anonymous seed cookie if needed."""
    seed = csrf_seed(request) or getattr(request.state, "new_csrf_seed", None)
    if seed is None:
        seed = new_token()
        request.state.new_csrf_seed = seed
    return web_state(request).csrf.token_for(seed)


def issue_csrf_cookie(request: Request, response: Response) -> None:
    seed = getattr(request.state, "new_csrf_seed", None)
    if seed is not None:
        set_cookie(request, response, CSRF_COOKIE, seed, 7 * 24 * 3600)


async def verify_csrf(request: Request) -> None:
    """Applied to every route: unsafe methods need the page's token (form field or header)."""
    if request.method not in UNSAFE_METHODS:
        return
    token = request.headers.get(CSRF_HEADER)
    if token is None:
        content_type = request.headers.get("content-type", "")
        if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            field = (await request.form()).get(CSRF_FIELD)
            token = field if isinstance(field, str) else None
    if not web_state(request).csrf.valid(csrf_seed(request), token):
        raise CsrfFailure()
