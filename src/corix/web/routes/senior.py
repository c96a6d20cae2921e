"""Senior annotator pages: sampled reviews, disagreements and resolutions, flags, agreement."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import Response

from corix.scenarios import resolve_pack
from corix.web.auth import Senior, only_seniors
from corix.web.rendering import RefusedForm, redirect, render
from corix.web.routes._forms import FormValues, RowId
from corix.web.services import Forbidden, InputError, SignedInUser, agreement_by_question
from corix.web.services.consensus import UNRESOLVED
from corix.web.services.review import VERDICTS
from corix.web.state import web_state

router = APIRouter(prefix="/senior", dependencies=[Depends(only_seniors)])


@router.get("")
def home(request: Request, user: Senior) -> Response:
    state = web_state(request)
    sample = state.review.review_sample(user)
    return render(
        request,
        "senior/home.html",
        {
            "to_review": sum(p.verdict is None for p in sample),
            "sampled": len(sample),
            "disagreements": state.consensus.disagreements(user),
            "flagged": len(state.review.flagged(user)),
        },
    )


@router.get("/reviews")
def reviews(request: Request, user: Senior) -> Response:
    sample = web_state(request).review.review_sample(user)
    return render(request, "senior/reviews.html", {"passes": sample})


@router.get("/reviews/{pass_id}")
def review_page(request: Request, user: Senior, pass_id: RowId) -> Response:
    return _review_page(request, user, pass_id)


def _review_page(
    request: Request, user: SignedInUser, pass_id: RowId, refused: RefusedForm | None = None
) -> Response:
    detail = web_state(request).review.pass_detail(user, pass_id)
    return render(
        request,
        "senior/review.html",
        {
            "detail": detail,
            "verdicts": VERDICTS,
            "pack": resolve_pack(detail.dialogue.scenario),
        },
        refused=refused,
    )


@router.post("/reviews/{pass_id}")
def record_review(
    request: Request,
    user: Senior,
    pass_id: RowId,
    verdict: Annotated[str, Form(max_length=20)] = "",
    note: Annotated[str, Form(max_length=5000)] = "",
) -> Response:
    try:
        web_state(request).review.record_review(user, pass_id, verdict, note.strip() or None)
    except InputError as exc:
        return _review_page(request, user, pass_id, RefusedForm.of(exc))
    return redirect("/senior/reviews", notice="review_saved")


@router.get("/disagreements")
def disagreements(request: Request, user: Senior) -> Response:
    items = web_state(request).consensus.disagreements(user)
    return render(request, "senior/disagreements.html", {"items": items})


@router.get("/disagreements/{session_id}/{category}")
def consensus_page(request: Request, user: Senior, session_id: str, category: str) -> Response:
    return _consensus_page(request, user, session_id, category)


def _consensus_page(
    request: Request,
    user: SignedInUser,
    session_id: str,
    category: str,
    refused: RefusedForm | None = None,
) -> Response:
    view = web_state(request).consensus.consensus(user, session_id, category)
    return render(
        request,
        "senior/consensus.html",
        {
            "view": view,
            "unresolved": UNRESOLVED,
            "pack": resolve_pack(view.dialogue.scenario),
            "read_only": False,
        },
        refused=refused,
    )


@router.post("/disagreements/{session_id}/{category}")
def resolve(
    request: Request, user: Senior, session_id: str, category: str, form: FormValues
) -> Response:
    try:
        web_state(request).consensus.resolve(user, session_id, category, form)
    except InputError as exc:
        return _consensus_page(request, user, session_id, category, RefusedForm.of(exc))
    return redirect(f"/senior/disagreements/{session_id}/{category}", notice="resolution_saved")


@router.get("/flags")
def flags(request: Request, user: Senior) -> Response:
    passes = web_state(request).review.flagged(user)
    return render(request, "senior/flags.html", {"passes": passes})


@router.get("/agreement")
def agreement(request: Request, user: Senior, evaluation: str | None = None) -> Response:
    state = web_state(request)
    mine = state.review.evaluations_of(user)
    if evaluation is None and mine:
        evaluation = mine[0]
    if evaluation is not None and evaluation not in mine:
        raise Forbidden("you do not annotate in that evaluation series")
    chosen = state.evaluations.get(evaluation) if evaluation else None
    return render(
        request,
        "agreement.html",
        {
            "evaluation": chosen,
            "evaluations": [state.evaluations.get(e) for e in mine],
            "agreement": (
                agreement_by_question(state.db, state.schema, evaluation) if evaluation else None
            ),
            "base_url": "/senior/agreement",
        },
    )
