"""Server-side pages: one Jinja environment (autoescaped, strict) and one way to render."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from corix.assessment import HUMAN_ANNOTATOR_PREFIX, Question, QuestionType
from corix.scenarios import resolve_pack
from corix.web.auth import csrf_token, issue_csrf_cookie
from corix.web.roles import HOME_OF_ROLE, ROLE_LABELS
from corix.web.services.annotation_forms import field_name
from corix.web.services.service_errors import InputError, ServiceError

# Fixed messages shown after a redirect, chosen by code: nothing from the URL is echoed.
NOTICES = {
    "signed_out": "You have signed out.",
    "welcome": "Welcome! Your account is ready.",
    "evaluation_created": "The evaluation series was created.",
    "application_registered": "The application passed its check and was registered.",
    "application_versioned": "The new version passed its check; it replaces the old one.",
    "application_retired": "The application was retired; its unstarted assignments were withdrawn.",
    "testers_assigned": "The testers were assigned.",
    "testers_redrawn": "The assignments were drawn afresh.",
    "annotation_started": "The automated annotators have started; passes appear as stored.",
    "selection_saved": "The choice of sessions for human annotators is saved.",
    "claim_time_saved": "The claim time is saved; claims already made age against it too.",
    "annotators_assigned": "The annotators were assigned.",
    "run_started": "The automated run has started; it appears below as it progresses.",
    "user_created": "The account was created.",
    "user_updated": "The account was updated.",
    "questionnaire_done": "This questionnaire was already submitted; thank you.",
    "queue_empty": "There is nothing left in that queue for you right now.",
    "pass_saved": "Your annotation is saved.",
    "task_skipped": "The dialogue went back to the queue.",
    "review_saved": "Your review is saved.",
    "resolution_saved": "Your resolution is saved next to the passes.",
}


def _paragraphs(text: str) -> Markup:
    """Plain text as HTML, escaped first: blank lines part paragraphs, "- " lines make lists.

    Other line breaks are the wrapping of the source file and are joined with spaces.
    """
    parts: list[Markup] = []
    for block in str(text).split("\n\n"):
        prose: list[str] = []
        items: list[str] = []
        for line in (line.strip() for line in block.splitlines()):
            if line.startswith("- "):
                if prose:
                    parts.append(Markup("<p>{}</p>").format(" ".join(prose)))
                    prose = []
                items.append(line[2:])
            elif line:
                if items:
                    parts.append(_list(items))
                    items = []
                prose.append(line)
        if prose:
            parts.append(Markup("<p>{}</p>").format(" ".join(prose)))
        if items:
            parts.append(_list(items))
    return Markup("").join(parts)


def _list(items: list[str]) -> Markup:
    inner = Markup("").join(Markup("<li>{}</li>").format(item) for item in items)
    return Markup('<ul class="plain">{}</ul>').format(inner)


def _person(annotator: str) -> str:
    """An annotator as people know them: the username, without the stored ``user:`` prefix."""
    return annotator.removeprefix(HUMAN_ANNOTATOR_PREFIX)


def _scenario_title(name: str) -> str:
    return resolve_pack(name).title


def _level_label(level: str) -> str:
    """``red_teaming`` → ``red teaming``: levels as people say them (ids stay in exports)."""
    return str(level).replace("_", " ")


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "not measured"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def _sentence(text: str) -> str:
    """A service message as a sentence: capitalized, ending with a full stop."""
    text = str(text).strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def _answer(value: object) -> str:
    """A stored answer as shown and as submitted back: ``7`` rather than ``7.0``."""
    if value is None:
        return "—"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _answer_label(question: Question, value: str | float | None) -> str:
    """An answer as people read it: option labels, "Yes"/"No", ``7`` rather than ``7.0``."""
    if value is None or isinstance(value, float):
        return _answer(value)
    if question.type is QuestionType.YES_NO:
        return value.capitalize()
    for option in question.options:
        if option.value == value:
            return option.label
    return value


def _number(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


templates = Environment(
    loader=PackageLoader("corix.web", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
templates.filters["paragraphs"] = _paragraphs
templates.filters["person"] = _person
templates.filters["scenario_title"] = _scenario_title
templates.filters["level_label"] = _level_label
templates.filters["duration"] = _duration
templates.filters["sentence"] = _sentence
templates.filters["answer"] = _answer
templates.filters["number"] = _number
templates.filters["percent"] = _percent
templates.globals["field_name"] = field_name
templates.globals["answer_label"] = _answer_label
templates.globals["role_labels"] = ROLE_LABELS
templates.globals["home_of_role"] = HOME_OF_ROLE


def wants_json(request: Request) -> bool:
    """The chat script asks for JSON; a plain form post gets a page."""
    return "application/json" in request.headers.get("accept", "")


@dataclass(frozen=True)
class RefusedForm:
    """A submitted form that was refused, to show again: why, which fields, what was typed."""

    message: str
    status_code: int
    problems: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, exc: ServiceError, values: Mapping[str, Any] | None = None) -> RefusedForm:
        problems = exc.problems if isinstance(exc, InputError) else {}
        return cls(str(exc), exc.status_code, problems, values or {})


def render(
    request: Request,
    template: str,
    context: Mapping[str, Any] | None = None,
    *,
    status_code: int = 200,
    refused: RefusedForm | None = None,
) -> HTMLResponse:
    """Render a page with what every page needs: the user, a CSRF token, a notice.

    With ``refused``, the page is the form shown again, with the refusal's status code.
    """
    notice = NOTICES.get(request.query_params.get("notice", ""))
    if refused is not None:
        status_code = refused.status_code
    page = templates.get_template(template).render(
        {
            "request": request,
            "user": getattr(request.state, "user", None),
            "csrf_token": csrf_token(request),
            "notice": notice,
            "error": refused.message if refused else None,
            "problems": refused.problems if refused else {},
            "values": refused.values if refused else {},
            **(context or {}),
        }
    )
    response = HTMLResponse(page, status_code=status_code)
    issue_csrf_cookie(request, response)
    return response


def redirect(url: str, *, notice: str | None = None) -> RedirectResponse:
    """A 303 redirect (so the browser follows with GET), optionally with a notice code."""
    if notice is not None:
        if notice not in NOTICES:
            raise KeyError(notice)
        url = f"{url}{'&' if '?' in url else '?'}notice={notice}"
    return RedirectResponse(url, status_code=303)
