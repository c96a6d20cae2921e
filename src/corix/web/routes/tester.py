"""Tester pages: assignments, consent, the blinded chat, and the post-session questionnaire.

Every page and JSON answer here is built from blinded view models; URLs carry only the
assignment's opaque token.
"""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import JSONResponse, Response

from corix.web.auth import Tester, only_testers
from corix.web.rendering import RefusedForm, redirect, render, wants_json
from corix.web.routes._forms import FormValues
from corix.web.schemas import ErrorOut, TurnOut
from corix.web.services import Conflict, InputError, SignedInUser
from corix.web.services.questionnaires import field_name as item_field
from corix.web.services.session_summary import session_summary
from corix.web.services.tester_sessions import MessageLimitReached, Status
from corix.web.state import web_state

router = APIRouter(prefix="/tester", dependencies=[Depends(only_testers)])

RESTART_NOTICE = (
    "The assistant was restarted here and does not remember the messages above. "
    "Repeat what it needs to know, or end the session."
)
FAILED_REPLY = (
    "Sorry, the assistant could not answer just now. Please try again, "
    "or end the session if this keeps happening."
)


def _next_page(token: str, status: str) -> str:
    return {
        Status.ASSIGNED: f"/tester/a/{token}",
        Status.IN_SESSION: f"/tester/a/{token}/chat",
        Status.QUESTIONNAIRE: f"/tester/a/{token}/questionnaire",
    }.get(status, "/tester")


@router.get("")
def home(request: Request, user: Tester) -> Response:
    assignments = web_state(request).testers.assignments(user)
    upcoming = next((a for a in assignments if a.status != Status.DONE), None)
    return render(
        request,
        "tester/home.html",
        {
            "assignments": assignments,
            "upcoming": upcoming,
            "next_page": _next_page,
            "done": sum(a.status == Status.DONE for a in assignments),
        },
    )


@router.get("/a/{token}")
def consent_page(request: Request, user: Tester, token: str) -> Response:
    return _consent_page(request, user, token)


def _consent_page(
    request: Request, user: SignedInUser, token: str, refused: RefusedForm | None = None
) -> Response:
    testers = web_state(request).testers
    assignment = testers.assignment(user, token)
    if assignment.status != Status.ASSIGNED:
        return redirect(_next_page(token, assignment.status))
    return render(
        request,
        "tester/consent.html",
        {"assignment": assignment, "pack": testers.pack(assignment)},
        refused=refused,
    )


@router.post("/a/{token}/start")
async def start(
    request: Request, user: Tester, token: str, consent: Annotated[str, Form()] = ""
) -> Response:
    try:
        await web_state(request).testers.start(user, token, consent=consent == "yes")
    except InputError as exc:
        return await anyio.to_thread.run_sync(
            _consent_page, request, user, token, RefusedForm.of(exc)
        )
    return redirect(f"/tester/a/{token}/chat")


@router.get("/a/{token}/chat")
def chat_page(request: Request, user: Tester, token: str) -> Response:
    return _chat_page(request, user, token)


def _chat_page(
    request: Request, user: SignedInUser, token: str, refused: RefusedForm | None = None
) -> Response:
    testers = web_state(request).testers
    assignment = testers.assignment(user, token)
    if assignment.status != Status.IN_SESSION:
        return redirect(_next_page(token, assignment.status))
    return render(
        request,
        "tester/chat.html",
        {
            "chat": testers.chat(user, token),
            "pack": testers.pack(assignment),
            "failed_reply": FAILED_REPLY,
            "restart_notice": RESTART_NOTICE,
            "max_chars": web_state(request).settings.max_message_chars,
        },
        refused=refused,
    )


@router.post("/a/{token}/messages")
async def send_message(
    request: Request,
    user: Tester,
    token: str,
    message: Annotated[str, Form()] = "",
    turn: Annotated[int | None, Form()] = None,
) -> Response:
    testers = web_state(request).testers
    try:
        sent = await testers.send(user, token, message, expected_index=turn)
    except (InputError, Conflict) as exc:
        if wants_json(request):
            error = ErrorOut(error=str(exc), at_limit=isinstance(exc, MessageLimitReached))
            return JSONResponse(error.model_dump(), status_code=exc.status_code)
        refused = RefusedForm.of(exc, values={"message": message})
        return await anyio.to_thread.run_sync(_chat_page, request, user, token, refused)
    if wants_json(request):
        return JSONResponse(TurnOut.of(sent, FAILED_REPLY).model_dump())
    return redirect(f"/tester/a/{token}/chat#turn-{sent.index}")


@router.post("/a/{token}/end")
async def end_session(request: Request, user: Tester, token: str) -> Response:
    try:
        await web_state(request).testers.end(user, token)
    except Conflict as exc:
        return await anyio.to_thread.run_sync(_chat_page, request, user, token, RefusedForm.of(exc))
    return redirect(f"/tester/a/{token}/questionnaire")


@router.get("/a/{token}/questionnaire")
def questionnaire_page(request: Request, user: Tester, token: str) -> Response:
    return _questionnaire_page(request, user, token)


def _questionnaire_page(
    request: Request, user: SignedInUser, token: str, refused: RefusedForm | None = None
) -> Response:
    testers = web_state(request).testers
    assignment = testers.assignment(user, token)
    if assignment.status != Status.QUESTIONNAIRE:
        return redirect(_next_page(token, assignment.status))
    return render(
        request,
        "tester/questionnaire.html",
        {
            "assignment": assignment,
            "items": testers.questionnaire_items(assignment),
            "item_field": item_field,
            "max_chars": web_state(request).settings.max_text_answer_chars,
        },
        refused=refused,
    )


@router.post("/a/{token}/questionnaire")
def submit_questionnaire(request: Request, user: Tester, token: str, form: FormValues) -> Response:
    try:
        web_state(request).testers.submit_questionnaire(user, token, form)
    except InputError as exc:
        return _questionnaire_page(request, user, token, RefusedForm.of(exc, values=form))
    except Conflict:
        return redirect("/tester", notice="questionnaire_done")
    return redirect(f"/tester/a/{token}/summary")


@router.get("/a/{token}/summary")
def summary_page(request: Request, user: Tester, token: str) -> Response:
    testers = web_state(request).testers
    assignment = testers.assignment(user, token)
    if assignment.status != Status.DONE:
        return redirect(_next_page(token, assignment.status))
    summary = session_summary(web_state(request).db, user, token)
    return render(request, "tester/summary.html", {"summary": summary})
