"""Admin pages: evaluation series, applications, assignments, progress, runs, reports, users."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from functools import partial
from typing import Annotated

import anyio
from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from pydantic import ValidationError

from corix.domain import Level
from corix.errors import ConfigError
from corix.measurement import MeasurementSpec
from corix.report import (
    ReportContent,
    ReportSettings,
    build_report,
    build_series_report,
    export_jsonl,
    render_html,
    report_document,
    spreadsheet_safe,
)
from corix.scenarios import resolve_pack
from corix.storage import get_run
from corix.web.auth import Admin, only_admin
from corix.web.rendering import RefusedForm, redirect, render
from corix.web.roles import ANNOTATOR_ROLES, ROLES_BY_PRIVILEGE, TESTER_ROLES
from corix.web.routes._forms import MAX_STORED_INT, FormId, RowId
from corix.web.services import Conflict, EvaluationSettings, InputError, agreement_by_question
from corix.web.services.accounts import MAX_USERNAME_LIST, chosen_people, parse_role
from corix.web.services.annotation_selection import HumanAnnotation
from corix.web.services.assignments import DESIGN_COLUMNS
from corix.web.services.automation import automatable_levels
from corix.web.services.balancing import AssignmentDesign
from corix.web.services.evaluations import available_scenarios
from corix.web.services.machine_annotation import EVERY_RUN, MachineAnnotator, llm_endpoint
from corix.web.services.progress import evaluation_progress
from corix.web.services.resolutions_view import series_resolutions
from corix.web.state import web_state

router = APIRouter(prefix="/admin", dependencies=[Depends(only_admin)])
_DEFAULTS = EvaluationSettings()

# A report is a self-contained page with its own inline style and script. It is served
# sandboxed (an opaque origin without the admin's cookies) and may load nothing else.
REPORT_POLICY = (
    "sandbox allow-scripts; default-src 'none'; style-src 'unsafe-inline'; "
    "script-src 'unsafe-inline'; img-src data:"
)


@router.get("")
def dashboard(request: Request, _user: Admin) -> Response:
    return _dashboard(request)


def _dashboard(request: Request, refused: RefusedForm | None = None) -> Response:
    state = web_state(request)
    return render(
        request,
        "admin/dashboard.html",
        {
            "evaluations": state.evaluations.all(),
            "scenarios": available_scenarios(),
            "levels": list(Level),
            "defaults": EvaluationSettings(),
        },
        refused=refused,
    )


def _chosen_levels(values: list[str] | None) -> list[Level]:
    """The levels ticked in a form; a value that names no level refuses the form."""
    try:
        return [Level(value) for value in values or []]
    except ValueError:
        raise InputError("unknown level") from None


@router.post("/evaluations")
def create_evaluation(
    request: Request,
    _user: Admin,
    name: Annotated[str, Form(max_length=200)],
    description: Annotated[str, Form(max_length=5000)] = "",
    scenarios: Annotated[list[str] | None, Form()] = None,
    levels: Annotated[list[str] | None, Form()] = None,
    passes_per_item: Annotated[
        int, Form(ge=-MAX_STORED_INT, le=MAX_STORED_INT)
    ] = _DEFAULTS.passes_per_item,
    review_rate: Annotated[float, Form(allow_inf_nan=False)] = _DEFAULTS.review_rate,
    max_turns: Annotated[int, Form(ge=-MAX_STORED_INT, le=MAX_STORED_INT)] = _DEFAULTS.max_turns,
) -> Response:
    try:
        evaluation_id = web_state(request).evaluations.create(
            name,
            description=description,
            scenarios=scenarios or [],
            levels=_chosen_levels(levels),
            settings=EvaluationSettings(
                passes_per_item=passes_per_item, review_rate=review_rate, max_turns=max_turns
            ),
        )
    except InputError as exc:
        values = {"name": name, "description": description}
        return _dashboard(request, RefusedForm.of(exc, values=values))
    return redirect(f"/admin/evaluations/{evaluation_id}", notice="evaluation_created")


@router.get("/evaluations/{evaluation_id}")
def evaluation_page(request: Request, _user: Admin, evaluation_id: str) -> Response:
    return _evaluation_page(request, evaluation_id)


def _evaluation_page(
    request: Request,
    evaluation_id: str,
    refused: RefusedForm | None = None,
    *,
    section: str | None = None,
) -> Response:
    """The series' page; a refused form's error is shown in its ``section``."""
    state = web_state(request)
    evaluation = state.evaluations.get(evaluation_id)
    users = state.accounts.users()
    return render(
        request,
        "admin/evaluation.html",
        {
            "evaluation": evaluation,
            "applications": state.evaluations.applications(evaluation_id),
            "testers": [u for u in users if u.role in TESTER_ROLES and u.active],
            "annotators": [u for u in users if u.role in ANNOTATOR_ROLES and u.active],
            "categories": state.schema.ordered_categories(),
            "assignments": state.assigner.tester_assignments(evaluation_id),
            "queues": state.assigner.annotator_queues(evaluation_id),
            "progress": evaluation_progress(state.db, evaluation_id),
            "claims": state.queue.open_claims(evaluation_id),
            "claim_minutes": state.queue.claim_minutes(evaluation_id),
            "default_claim_minutes": state.settings.annotation_claim_minutes,
            "automatable": automatable_levels(evaluation),
            "designs": list(AssignmentDesign),
            "selections": list(HumanAnnotation),
            "running": state.automation.running,
            "annotating": state.machine_annotation.running,
            "machine_annotators": list(MachineAnnotator),
            "every_run": EVERY_RUN,
            "section": section,
        },
        refused=refused,
    )


@router.post("/evaluations/{evaluation_id}/applications")
async def register_application(
    request: Request,
    _user: Admin,
    evaluation_id: str,
    name: Annotated[str, Form(max_length=200)],
    spec: Annotated[str, Form(max_length=2000)],
    credentials: Annotated[str, Form(max_length=10000)] = "",
) -> Response:
    try:
        await web_state(request).registry.register(
            evaluation_id, name=name, spec=spec, credentials_json=credentials
        )
    except InputError as exc:
        refused = RefusedForm.of(exc, values={"name": name, "spec": spec})
        page = partial(_evaluation_page, request, evaluation_id, refused, section="applications")
        return await anyio.to_thread.run_sync(page)
    return redirect(f"/admin/evaluations/{evaluation_id}", notice="application_registered")


@router.post("/applications/{application_id}/versions")
async def new_application_version(
    request: Request,
    _user: Admin,
    application_id: RowId,
    spec: Annotated[str, Form(max_length=2000)],
    credentials: Annotated[str, Form(max_length=10000)] = "",
) -> Response:
    state = web_state(request)
    evaluation_id, _ = await anyio.to_thread.run_sync(state.evaluations.application, application_id)
    try:
        await state.registry.new_version(application_id, spec=spec, credentials_json=credentials)
    except InputError as exc:
        refused = RefusedForm.of(exc, values={"edit_spec": spec, "edited": str(application_id)})
        page = partial(_evaluation_page, request, evaluation_id, refused, section="applications")
        return await anyio.to_thread.run_sync(page)
    return redirect(f"/admin/evaluations/{evaluation_id}", notice="application_versioned")


@router.post("/applications/{application_id}/retire")
def retire_application(
    request: Request,
    _user: Admin,
    application_id: RowId,
    confirm: Annotated[bool, Form()] = False,
) -> Response:
    """Retiring cannot be undone: the form's confirmation box must be ticked."""
    state = web_state(request)
    evaluation_id, application = state.evaluations.application(application_id)
    if not confirm:
        refused = RefusedForm(
            f'tick "Yes, retire {application.name}" to confirm: retiring cannot be undone',
            422,
        )
        return _evaluation_page(request, evaluation_id, refused, section="applications")
    state.registry.retire(application_id)
    return redirect(f"/admin/evaluations/{evaluation_id}", notice="application_retired")


def _chosen_design(value: str) -> AssignmentDesign:
    try:
        return AssignmentDesign(value)
    except ValueError:
        raise InputError("unknown assignment design", {"design": "unknown"}) from None


@router.post("/evaluations/{evaluation_id}/assignments")
def assign_testers(
    request: Request,
    _user: Admin,
    evaluation_id: str,
    testers: Annotated[list[FormId] | None, Form()] = None,
    everyone: Annotated[bool, Form()] = False,
    usernames: Annotated[str, Form(max_length=MAX_USERNAME_LIST)] = "",
    per_tester: Annotated[int, Form(ge=1, le=100)] = 1,
    seed: Annotated[int, Form(ge=0, le=MAX_STORED_INT)] = 0,
    design: Annotated[str, Form(max_length=50)] = AssignmentDesign.COUNTERBALANCED,
) -> Response:
    state = web_state(request)
    try:
        chosen = chosen_people(
            state.accounts.users(), TESTER_ROLES, testers, everyone=everyone, usernames=usernames
        )
        state.assigner.assign_testers(
            evaluation_id,
            chosen,
            per_tester=per_tester,
            seed=seed,
            design=_chosen_design(design),
        )
    except InputError as exc:
        return _evaluation_page(request, evaluation_id, RefusedForm.of(exc), section="testers")
    return redirect(f"/admin/evaluations/{evaluation_id}", notice="testers_assigned")


@router.post("/evaluations/{evaluation_id}/assignments/redraw")
def redraw_assignments(
    request: Request,
    _user: Admin,
    evaluation_id: str,
    seed: Annotated[int, Form(ge=0, le=MAX_STORED_INT)] = 0,
    design: Annotated[str, Form(max_length=50)] = AssignmentDesign.COUNTERBALANCED,
) -> Response:
    try:
        web_state(request).assigner.redraw(evaluation_id, seed=seed, design=_chosen_design(design))
    except (InputError, Conflict) as exc:
        return _evaluation_page(request, evaluation_id, RefusedForm.of(exc), section="testers")
    return redirect(f"/admin/evaluations/{evaluation_id}", notice="testers_redrawn")


@router.get("/evaluations/{evaluation_id}/design.csv")
def design_export(request: Request, _user: Admin, evaluation_id: str) -> Response:
    """The assignment design as CSV: who met which application, in which scenario, when."""
    rows = web_state(request).assigner.design(evaluation_id)
    out = io.StringIO()
    table = csv.writer(out)
    table.writerow(DESIGN_COLUMNS)
    for row in rows:
        table.writerow(
            spreadsheet_safe(cell)
            for cell in [
                row.tester_id,
                row.level.value,
                row.position,
                row.application_id,
                row.application,
                row.scenario,
                row.status,
                row.session_id or "",
            ]
        )
    return Response(
        out.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": f'attachment; filename="{evaluation_id}-design.csv"'},
    )


@router.post("/evaluations/{evaluation_id}/annotators")
def assign_annotators(
    request: Request,
    _user: Admin,
    evaluation_id: str,
    annotators: Annotated[list[FormId] | None, Form()] = None,
    everyone: Annotated[bool, Form()] = False,
    usernames: Annotated[str, Form(max_length=MAX_USERNAME_LIST)] = "",
    categories: Annotated[list[str] | None, Form()] = None,
) -> Response:
    state = web_state(request)
    try:
        chosen = chosen_people(
            state.accounts.users(),
            ANNOTATOR_ROLES,
            annotators,
            everyone=everyone,
            usernames=usernames,
        )
        state.assigner.assign_annotators(evaluation_id, chosen, categories or [])
    except InputError as exc:
        return _evaluation_page(request, evaluation_id, RefusedForm.of(exc), section="annotators")
    return redirect(f"/admin/evaluations/{evaluation_id}", notice="annotators_assigned")


@router.post("/evaluations/{evaluation_id}/human-annotation")
def choose_human_annotation(
    request: Request,
    _user: Admin,
    evaluation_id: str,
    selection: Annotated[str, Form(max_length=20)] = "",
    sample_size: Annotated[int, Form(ge=0, le=100_000)] = 0,
) -> Response:
    try:
        try:
            chosen = HumanAnnotation(selection)
        except ValueError:
            raise InputError("choose which sessions go to human annotators") from None
        web_state(request).evaluations.choose_human_annotation(evaluation_id, chosen, sample_size)
    except InputError as exc:
        refused = RefusedForm.of(exc, values={"sample_size": str(sample_size)})
        return _evaluation_page(request, evaluation_id, refused, section="annotators")
    return redirect(f"/admin/evaluations/{evaluation_id}", notice="selection_saved")


@router.post("/evaluations/{evaluation_id}/claim-time")
def set_claim_time(
    request: Request,
    _user: Admin,
    evaluation_id: str,
    claim_minutes: Annotated[float | None, Form(allow_inf_nan=False)] = None,
) -> Response:
    """How long a claimed dialogue stays with its annotator; blank: the server's default."""
    try:
        web_state(request).evaluations.set_claim_time(evaluation_id, claim_minutes)
    except InputError as exc:
        refused = RefusedForm.of(exc, values={"claim_minutes": str(claim_minutes)})
        return _evaluation_page(request, evaluation_id, refused, section="annotators")
    return redirect(f"/admin/evaluations/{evaluation_id}", notice="claim_time_saved")


@router.post("/evaluations/{evaluation_id}/runs")
async def start_run(
    request: Request,
    _user: Admin,
    evaluation_id: str,
    levels: Annotated[list[str] | None, Form()] = None,
    sessions: Annotated[int, Form(ge=-MAX_STORED_INT, le=MAX_STORED_INT)] = 2,
    seed: Annotated[int, Form(ge=0, le=MAX_STORED_INT)] = 0,
) -> Response:
    state = web_state(request)
    evaluation = await anyio.to_thread.run_sync(state.evaluations.get, evaluation_id)
    applications = await anyio.to_thread.run_sync(
        partial(state.evaluations.applications, evaluation_id, active_only=True)
    )
    try:
        state.automation.start(
            evaluation, applications, levels=_chosen_levels(levels), sessions=sessions, seed=seed
        )
    except InputError as exc:
        page = partial(
            _evaluation_page, request, evaluation_id, RefusedForm.of(exc), section="runs"
        )
        return await anyio.to_thread.run_sync(page)
    return redirect(f"/admin/evaluations/{evaluation_id}", notice="run_started")


@router.post("/evaluations/{evaluation_id}/annotate")
async def annotate_runs(
    request: Request,
    _user: Admin,
    evaluation_id: str,
    run: Annotated[str, Form(max_length=100)] = EVERY_RUN,
    annotator: Annotated[str, Form(max_length=20)] = MachineAnnotator.REFERENCE,
    endpoint_url: Annotated[str, Form(max_length=2000)] = "",
    model: Annotated[str, Form(max_length=200)] = "",
    key_env: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    state = web_state(request)
    try:
        try:
            chosen = MachineAnnotator(annotator)
        except ValueError:
            raise InputError("choose the reference or the LLM annotator") from None
        endpoint = (
            llm_endpoint(endpoint_url, model, key_env) if chosen is MachineAnnotator.LLM else None
        )
        runs = await anyio.to_thread.run_sync(state.machine_annotation.runs_of, evaluation_id, run)
    except InputError as exc:
        values = {"endpoint_url": endpoint_url, "model": model, "key_env": key_env}
        page = partial(
            _evaluation_page, request, evaluation_id, RefusedForm.of(exc, values), section="runs"
        )
        return await anyio.to_thread.run_sync(page)
    state.machine_annotation.start(runs, chosen, endpoint)
    return redirect(f"/admin/evaluations/{evaluation_id}", notice="annotation_started")


@router.get("/evaluations/{evaluation_id}/resolutions")
def resolutions(request: Request, _user: Admin, evaluation_id: str) -> Response:
    state = web_state(request)
    return render(
        request,
        "admin/resolutions.html",
        {
            "evaluation": state.evaluations.get(evaluation_id),
            "resolutions": series_resolutions(state.db, state.schema, evaluation_id),
            "disagreements": state.consensus.series_disagreements(evaluation_id),
            "categories": state.schema.ordered_categories(),
        },
    )


@router.get("/evaluations/{evaluation_id}/disagreements/{session_id}/{category}")
def disagreement(
    request: Request, _user: Admin, evaluation_id: str, session_id: str, category: str
) -> Response:
    """One dialogue's passes side by side with the senior's resolutions, to read."""
    state = web_state(request)
    evaluation = state.evaluations.get(evaluation_id)
    view = state.consensus.series_consensus(evaluation_id, session_id, category)
    return render(
        request,
        "senior/consensus.html",
        {
            "view": view,
            "pack": resolve_pack(view.dialogue.scenario),
            "read_only": True,
            "back": f"/admin/evaluations/{evaluation.id}/resolutions",
        },
    )


@router.get("/evaluations/{evaluation_id}/agreement")
def agreement(request: Request, _user: Admin, evaluation_id: str) -> Response:
    state = web_state(request)
    evaluation = state.evaluations.get(evaluation_id)
    return render(
        request,
        "agreement.html",
        {
            "evaluation": evaluation,
            "evaluations": [evaluation],
            "agreement": agreement_by_question(state.db, state.schema, evaluation_id),
            "base_url": f"/admin/evaluations/{evaluation_id}/agreement",
        },
    )


@router.get("/runs/{run_id}/export.jsonl")
def export_run(request: Request, _user: Admin, run_id: str) -> Response:
    get_run(web_state(request).db, run_id)
    lines = (line + "\n" for line in export_jsonl(web_state(request).db, run_id))
    return StreamingResponse(
        lines,
        media_type="application/x-ndjson",
        headers={"content-disposition": f'attachment; filename="{run_id}.jsonl"'},
    )


def _report_settings(request: Request) -> ReportSettings:
    """The report's measurement specification from the query, as `corix report`'s flags:
    ``?settling=RULE`` and ``?kind=KIND`` (repeatable); defaults otherwise."""
    fields: dict[str, object] = {}
    if rule := request.query_params.get("settling"):
        fields["settling"] = rule
    if kinds := request.query_params.getlist("kind"):
        fields["annotators"] = [{"kind": kind} for kind in kinds]
    try:
        spec = MeasurementSpec.model_validate(fields)
    except ValidationError as error:
        problems = {str(e["loc"][0]): str(e["msg"]) for e in error.errors()}
        said = "; ".join(f"{field}: {message}" for field, message in problems.items())
        raise InputError(f"measurement specification: {said}", problems) from None
    return ReportSettings(measurement=spec)


def _built_report(build: Callable[[], ReportContent]) -> ReportContent:
    try:
        return build()
    except ConfigError as error:  # a selector that matches no annotator of the record
        raise InputError(str(error)) from None


@router.get("/runs/{run_id}/report")
def run_report(request: Request, _user: Admin, run_id: str) -> Response:
    db = web_state(request).db
    get_run(db, run_id)
    content = _built_report(partial(build_report, db, run_id, _report_settings(request)))
    return HTMLResponse(render_html(content), headers={"content-security-policy": REPORT_POLICY})


@router.get("/runs/{run_id}/report.json")
def run_report_json(request: Request, _user: Admin, run_id: str) -> Response:
    """The run's report as JSON: the same document ``corix report`` writes."""
    db = web_state(request).db
    get_run(db, run_id)
    content = _built_report(partial(build_report, db, run_id, _report_settings(request)))
    return JSONResponse(report_document(content).to_json())


@router.get("/evaluations/{evaluation_id}/report")
def series_report(request: Request, _user: Admin, evaluation_id: str) -> Response:
    """One report for the series: automated runs and human sessions measured together."""
    state = web_state(request)
    evaluation = state.evaluations.get(evaluation_id)
    settings = _report_settings(request)
    content = _built_report(partial(build_series_report, state.db, evaluation.name, settings))
    return HTMLResponse(render_html(content), headers={"content-security-policy": REPORT_POLICY})


# -- users -----------------------------------------------------------------------------------
@router.get("/users")
def users_page(request: Request, _user: Admin) -> Response:
    return _users_page(request)


def _users_page(
    request: Request,
    refused: RefusedForm | None = None,
    *,
    invitation_link: str | None = None,
) -> Response:
    state = web_state(request)
    return render(
        request,
        "admin/users.html",
        {
            "users": state.accounts.users(),
            "invitations": state.accounts.pending_invitations(),
            "roles": ROLES_BY_PRIVILEGE,
            "invitation_link": invitation_link,
        },
        refused=refused,
    )


@router.post("/users")
def create_user(
    request: Request,
    _user: Admin,
    username: Annotated[str, Form(max_length=200)],
    password: Annotated[str, Form(max_length=1000)],
    role: Annotated[str, Form(max_length=50)] = "",
) -> Response:
    try:
        web_state(request).accounts.create_user(username, password, parse_role(role))
    except InputError as exc:
        return _users_page(
            request, RefusedForm.of(exc, values={"username": username, "role": role})
        )
    return redirect("/admin/users", notice="user_created")


@router.post("/invitations")
def invite(
    request: Request, user: Admin, role: Annotated[str, Form(max_length=50)] = ""
) -> Response:
    try:
        token = web_state(request).accounts.invite(parse_role(role), created_by=user.id)
    except InputError as exc:
        # Only the message: the field problems belong to the form for new accounts.
        return _users_page(request, RefusedForm(str(exc), exc.status_code))
    public_url = web_state(request).settings.public_url
    if public_url is None:  # the address this request came to, port included
        link = str(request.url_for("invitation_page", token=token))
    else:
        link = f"{public_url.rstrip('/')}/invite/{token}"
    return _users_page(request, invitation_link=link)


@router.post("/users/{user_id}/active")
def set_active(
    request: Request, user: Admin, user_id: RowId, active: Annotated[bool, Form()]
) -> Response:
    if user_id == user.id and not active:
        refusal = "you cannot deactivate your own account: you would lock yourself out"
        return _users_page(request, RefusedForm(refusal, 409))
    web_state(request).accounts.set_active(user_id, active)
    return redirect("/admin/users", notice="user_updated")
