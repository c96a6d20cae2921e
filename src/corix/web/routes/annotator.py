"""Annotator pages: training, the qualification test, category queues and the dialogue view.

Annotators see the scenario and the turns; never the application or the testing level.
"""

from __future__ import annotations

import math

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from corix.domain import JsonObject
from corix.scenarios import resolve_pack
from corix.web.auth import Annotator, only_annotators
from corix.web.rendering import RefusedForm, redirect, render
from corix.web.routes._forms import FormValues, RowId
from corix.web.services import Conflict, InputError, SignedInUser
from corix.web.services.annotation_forms import checked_answers, read_note
from corix.web.services.annotation_queue import ClaimLost, TaskStatus
from corix.web.services.qualification import gold_prefix
from corix.web.services.training import GoldDialogue
from corix.web.state import web_state

router = APIRouter(prefix="/annotate", dependencies=[Depends(only_annotators)])


@router.get("")
def home(request: Request, user: Annotator) -> Response:
    state = web_state(request)
    return render(
        request,
        "annotate/home.html",
        {
            "queues": state.queue.queues(user),
            "qualification": state.qualification.status(user),
            "pass_mark": state.qualification.pass_mark,
        },
    )


@router.get("/training")
def training(request: Request, _user: Annotator) -> Response:
    state = web_state(request)
    scenarios = sorted({q.scenario for q in state.qualification.gold.dialogues})
    return render(
        request,
        "annotate/training.html",
        {
            "schema": state.schema,
            "categories": state.schema.ordered_categories(),
            "exemplars": state.exemplars.by_question(),
            "packs": [resolve_pack(name) for name in scenarios],
        },
    )


@router.get("/qualification")
def qualification_page(request: Request, user: Annotator) -> Response:
    return _qualification_page(request, user)


def _qualification_page(
    request: Request, user: SignedInUser, refused: RefusedForm | None = None
) -> Response:
    """The open attempt's draw, or why no attempt can be made now."""
    qualification = web_state(request).qualification
    status = qualification.status(user)
    return render(
        request,
        "annotate/qualification.html",
        {
            "gold": qualification.draw(user) if status.can_attempt else [],
            "category": web_state(request).schema.screening_category,
            "prefix": gold_prefix,
            "context_of": _gold_context,
            "title_of": _gold_title,
            "status": status,
            "rules": qualification.rules,
        },
        refused=refused,
    )


def _gold_title(dialogue: GoldDialogue) -> str:
    return resolve_pack(dialogue.scenario).title


def _gold_context(dialogue: GoldDialogue) -> JsonObject:
    return resolve_pack(dialogue.scenario).packet.guardrail_context(dialogue.context)


@router.post("/qualification")
def submit_qualification(request: Request, user: Annotator, form: FormValues) -> Response:
    qualification = web_state(request).qualification
    try:
        result = qualification.submit(user, form)
    except InputError as exc:
        return _qualification_page(request, user, RefusedForm.of(exc, values=form))
    return render(
        request,
        "annotate/qualification_result.html",
        {"result": result, "status": qualification.status(user)},
    )


@router.post("/queues/{queue_id}/next")
def next_task(request: Request, user: Annotator, queue_id: RowId) -> Response:
    token = web_state(request).queue.claim_next(user, queue_id)
    if token is None:
        return redirect("/annotate", notice="queue_empty")
    return redirect(f"/annotate/tasks/{token}")


@router.get("/tasks/{token}")
def task_page(request: Request, user: Annotator, token: str) -> Response:
    return _task_page(request, user, token)


def _task_page(
    request: Request, user: SignedInUser, token: str, refused: RefusedForm | None = None
) -> Response:
    task = web_state(request).queue.task(user, token)
    if task.status not in (TaskStatus.OPEN, TaskStatus.LOST):
        return redirect("/annotate", notice="pass_saved")
    if task.token != token and refused is None:  # the dialogue was claimed again meanwhile
        return redirect(f"/annotate/tasks/{task.token}")
    return render(
        request,
        "annotate/task.html",
        {"task": task, "pack": resolve_pack(task.dialogue.scenario), "category": task.category},
        refused=refused,
    )


@router.post("/tasks/{token}")
def submit_task(request: Request, user: Annotator, token: str, form: FormValues) -> Response:
    state = web_state(request)
    try:
        # A claim that ran out is claimed again here if its dialogue is still free.
        task = state.queue.task(user, token)
        if task.status == TaskStatus.LOST:
            raise ClaimLost(task.lost or "this dialogue is not yours any more")
        answers = checked_answers(state.schema, task.category, form, len(task.dialogue.turns))
        state.queue.submit(
            user,
            task.token,
            answers,
            flagged=form.get("flagged") == "yes",
            note=read_note(form),
            seconds_in_view=_seconds(form.get("seconds_in_view", "")),
        )
    except (InputError, ClaimLost) as exc:  # the form again, with what was typed
        return _task_page(request, user, token, RefusedForm.of(exc, values=form))
    except Conflict:
        return redirect("/annotate", notice="pass_saved")  # submitted twice: the first saved
    # Auto-advance: straight on to the queue's next dialogue, unless the page said this one
    # was the last (the form then has no such box).
    if form.get("advance") == "yes":
        following = state.queue.claim_next(user, task.queue_id)
        if following is not None:
            return redirect(f"/annotate/tasks/{following}", notice="pass_saved")
    return redirect("/annotate", notice="pass_saved")


def _seconds(value: str) -> float | None:
    """The page's measured seconds in view; anything unreadable counts as not measured."""
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) else None


@router.post("/tasks/{token}/skip")
def skip_task(request: Request, user: Annotator, token: str) -> Response:
    web_state(request).queue.skip(user, token)
    return redirect("/annotate", notice="task_skipped")
