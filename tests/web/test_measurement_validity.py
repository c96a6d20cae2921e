"""One run, every route, one set of numbers.

The run (model testing and red teaming of both demo applications) is labelled by reference
rules, an LLM annotator with three repeats (the deterministic mock model) and two people
(imported labels), so every way several labels of one dialogue could be counted is
exercised, and it belongs to an evaluation series so the series routes see it too. The
measurement core's numbers are the reference; every consumer — ``corix defects``,
``corix agreement``, ``corix personas``, ``corix report`` (run and series; JSON, HTML,
Markdown), the admin's report pages and JSON, the agreement page — must show the same
numbers under the same printed specification and settlement. The same plan run twice
must give an identical report JSON, intervals included.
"""

from __future__ import annotations

import asyncio
import html
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from web_support import FAST_SETTINGS, PASSWORD, Browser

from corix.assessment.agreement import pairwise_agreement
from corix.assessment.annotation_run import AnnotateOptions, annotate_run_async
from corix.assessment.importing import import_labels
from corix.assessment.schema import QuestionType
from corix.cli.main import app as cli
from corix.demo import demo_plan
from corix.domain import Level
from corix.execution import execute_plan
from corix.llm import EndpointConfig, LLMClient, MockModel, ScriptedTransport
from corix.measurement.core import Measurement, measure
from corix.measurement.spec import AnnotatorSelector, MeasurementSpec
from corix.report import write_report
from corix.report.labels import annotator_label
from corix.storage import Database, get_run, measured_dialogues
from corix.storage.web.series import create_series, link_run
from corix.web import Role
from corix.web.app import create_app
from corix.web.services import human_run_id

# One worker builds the module's shared fixture once, instead of each worker building it.
pytestmark = pytest.mark.xdist_group("test_measurement_validity")

SERIES = "validity"
EVALUATION_ID = "ev-validity"
GUARDRAIL = "guardrail_violation"

RateCounts = tuple[float, int, int, int]
"""defects, n, not measurable, ties: what every route must print alike."""


async def _labelled_run(db: Database, tmp_path: Path) -> str:
    plan = demo_plan()
    levels = (Level.MODEL_TESTING, Level.RED_TEAMING)
    plan = plan.model_copy(update={"levels": {level: plan.levels[level] for level in levels}})
    run_id = (await execute_plan(plan, db)).run_id
    await annotate_run_async(db, run_id)
    transport = ScriptedTransport(MockModel())
    endpoint = EndpointConfig(name="judge", transport="mock", model="judge")
    async with LLMClient(endpoint, transport=transport) as client:
        await annotate_run_async(
            db,
            run_id,
            "llm",
            options=AnnotateOptions(categories=("risk_assessment",), repeats=3, temperature=1.0),
            client=client,
        )
    sessions = _sessions(db, run_id)
    rng = random.Random(11)
    lines = ["session_id,category,question_id,annotator,value"]
    for person in ("alice", "bob"):
        for session_id in sessions[::2]:
            released = rng.choice(("yes", "no", "no"))
            lines.append(f"{session_id},risk_assessment,ra_prohibited_released,{person},{released}")
            lines.append(f"{session_id},risk_assessment,ra_permitted_withheld,{person},no")
            # A legal half point: alice 7.5, bob 8 (within ±1, never equal).
            usefulness = "7.5" if person == "alice" else "8"
            lines.append(f"{session_id},dialogue_utility,du_usefulness,{person},{usefulness}")
            lines.append(f"{session_id},dialogue_utility,du_added_work,{person},no")
            if released == "yes":
                lines += [
                    f"{session_id},risk_assessment,ra_user_induced,{person},yes",
                    f"{session_id},risk_assessment,ra_risk_type,{person},data_privacy",
                    f"{session_id},risk_assessment,ra_outcome,{person},negative",
                ]
    labels = tmp_path / "people.csv"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_labels(db, run_id, labels)
    return run_id


def _sessions(db: Database, run_id: str) -> list[str]:
    """The run's session ids in work-item order, which is the same for every run of a plan."""
    dialogues = sorted(measured_dialogues(db, [run_id]), key=lambda dialogue: dialogue.key)
    return [dialogue.session_id for dialogue in dialogues]


def _put_in_a_series(db: Database, run_id: str) -> None:
    """Make the series the web reports on and put the run in it, as the web's "Start run"
    does."""
    run = get_run(db, run_id)
    made = create_series(
        db,
        slug=EVALUATION_ID,
        name=SERIES,
        description="",
        scenarios=list(demo_plan().scenarios),
        levels=[Level.MODEL_TESTING, Level.RED_TEAMING],
        passes_per_item=2,
        review_rate=0.2,
        max_turns=30,
        human_run_id=human_run_id,
        human_run_name=f"{SERIES} (human sessions)",
        packs=[],
    )
    assert made == EVALUATION_ID
    link_run(db, run.name, EVALUATION_ID)


# -- one run, every output -------------------------------------------------------------------


@dataclass(frozen=True)
class World:
    db: Database
    run_id: str
    measurement: Measurement
    out: Path
    pages: dict[str, str]
    reports: dict[tuple[str, ...], dict[str, str]]
    """Report files written so far, by the command's target arguments."""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("validity")
    db = Database(f"sqlite:///{tmp / 'validity.db'}")
    try:
        run_id = asyncio.run(_labelled_run(db, tmp))
        _put_in_a_series(db, run_id)
        pages = asyncio.run(_web_pages(db, run_id))
        yield World(db, run_id, measure(db, [run_id]), tmp, pages, {})
    finally:
        db.dispose()


WEB_PAGES = {
    "report.json": "/admin/runs/{run}/report.json",
    "report.json by majority": "/admin/runs/{run}/report.json?settling=majority&kind=llm",
    "report": "/admin/runs/{run}/report",
    "series report": f"/admin/evaluations/{EVALUATION_ID}/report",
    "agreement": f"/admin/evaluations/{EVALUATION_ID}/agreement",
}


REFUSED_SPECS = {
    "unknown rule": "settling=loudest",
    "unknown kind": "kind=oracle",
}


async def _web_pages(db: Database, run_id: str) -> dict[str, str]:
    app = create_app(db, settings=FAST_SETTINGS)
    app.state.corix.accounts.create_user("admin", PASSWORD, Role.ADMIN)
    browser = Browser(app)
    pages = {}
    try:
        await browser.login("admin")
        for name, url in WEB_PAGES.items():
            page = await browser.get(url.format(run=run_id))
            assert page.status_code == 200, (name, page.text[:500])
            pages[name] = page.text
        for name, query in REFUSED_SPECS.items():
            page = await browser.get(f"/admin/runs/{run_id}/report.json?{query}")
            pages[name] = f"{page.status_code} {page.text}"
    finally:
        await browser.aclose()
    return pages


def _invoke(world: World, *args: str) -> str:
    shown = CliRunner().invoke(cli, [*args, "--db", world.db.url], env={"COLUMNS": "400"})
    assert shown.exit_code == 0, shown.output
    return shown.output


def _report_files(world: World, *target: str) -> dict[str, str]:
    """``corix report TARGET``'s JSON, HTML and Markdown files (written once per target)."""
    if target not in world.reports:
        out = world.out / "-".join(target).replace("--", "")
        _invoke(world, "report", *target, "--out", str(out))
        world.reports[target] = {
            suffix: next(out.glob(f"*.{suffix}")).read_text(encoding="utf-8")
            for suffix in ("json", "html", "md")
        }
    return world.reports[target]


# -- rates -----------------------------------------------------------------------------------


def _key(group: dict[str, Any]) -> str:
    return json.dumps(group, sort_keys=True)


def _counts(rate: dict[str, Any]) -> RateCounts:
    return (rate["defects"], rate["n"], rate["not_measurable"], rate["ties"])


def _from_json_rates(rates: list[dict[str, Any]]) -> dict[str, RateCounts]:
    return {_key(rate["group"]): _counts(rate) for rate in rates}


def _from_report_json(document: dict[str, Any]) -> dict[str, RateCounts]:
    parts = ("violation_rates", "defect_rates", "violation_totals", "defect_totals")
    return _from_json_rates([rate for part in parts for rate in document[part]])


class _RateCells(HTMLParser):
    """The rate cells of a report page: each carries its group and counts as data."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, RateCounts] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        data = dict(attrs)
        if tag == "td" and data.get("data-group"):
            defects, n, left_out, ties = str(data["data-counts"]).split("/")
            group = json.loads(str(data["data-group"]))
            self.found[_key(group)] = (float(defects), int(n), int(left_out), int(ties))


def _from_html(page: str) -> dict[str, RateCounts]:
    parser = _RateCells()
    parser.feed(page)
    return parser.found


RATE_ROUTES: dict[str, Callable[[World], dict[str, RateCounts]]] = {
    "corix defects --json": lambda w: _from_json_rates(
        json.loads(_invoke(w, "defects", w.run_id, "--json"))["rates"]
    ),
    "corix defects --series --json": lambda w: _from_json_rates(
        json.loads(_invoke(w, "defects", "--series", SERIES, "--json"))["rates"]
    ),
    "corix report (JSON)": lambda w: _from_report_json(
        json.loads(_report_files(w, w.run_id)["json"])
    ),
    "corix report --series (JSON)": lambda w: _from_report_json(
        json.loads(_report_files(w, "--series", SERIES)["json"])
    ),
    "corix report (HTML)": lambda w: _from_html(_report_files(w, w.run_id)["html"]),
    "web report.json": lambda w: _from_report_json(json.loads(w.pages["report.json"])),
    "web report page": lambda w: _from_html(w.pages["report"]),
    "web series report page": lambda w: _from_html(w.pages["series report"]),
}


def _core_rates(measurement: Measurement) -> tuple[dict[str, RateCounts], set[str]]:
    """Every rate the core gives (cells and totals), and the keys of the cells."""
    cells = measurement.rates()
    totals = measurement.rates(by=("harm", "application"))
    found = {_key(r.group): (r.defects, r.n, r.not_measurable, r.ties) for r in cells + totals}
    return found, {_key(r.group) for r in cells}


@pytest.mark.parametrize("route", list(RATE_ROUTES))
def test_every_route_prints_the_cores_rates(world: World, route: str) -> None:
    expected, cells = _core_rates(world.measurement)
    shown = RATE_ROUTES[route](world)
    assert cells <= set(shown), f"{route} leaves out rates"
    assert {key: expected.get(key) for key in shown} == shown
    sources = {json.loads(key)["source"] for key in shown}
    assert sources == {"reference", "llm", "human"}


def test_the_web_report_takes_the_specification_as_the_cli_does(world: World) -> None:
    shown = _invoke(
        world, "defects", world.run_id, "--settling", "majority", "--kind", "llm", "--json"
    )
    cli = json.loads(shown)
    web = json.loads(world.pages["report.json by majority"])
    assert web["measurement"]["digest"] == cli["measurement"]["digest"]
    assert web["measurement"]["headline"] == cli["measurement"]["headline"]
    rates = _from_report_json(web)
    assert {json.loads(key)["source"] for key in rates} == {"llm"}
    assert _from_json_rates(cli["rates"]).items() <= rates.items()
    for name in REFUSED_SPECS:
        status, _, text = world.pages[name].partition(" ")
        assert status == "422", (name, text[:300])
    assert "loudest" in world.pages["unknown rule"]


def test_the_core_counts_each_dialogue_once_per_source(world: World) -> None:
    """Several labels per dialogue (three LLM repeats, two people) still give n = dialogues."""
    for rate in world.measurement.rates():
        assert rate.n == len(rate.dialogues)
        if rate.group["source"] == "human":
            assert rate.n <= len(_sessions(world.db, world.run_id)) // 2 + 1


# -- the specification and the settlement, printed with every number --------------------------


HEADLINE_ROUTES: dict[str, Callable[[World], str]] = {
    "corix defects": lambda w: _invoke(w, "defects", w.run_id),
    "corix defects --json": lambda w: json.loads(_invoke(w, "defects", w.run_id, "--json"))[
        "measurement"
    ]["headline"],
    "corix agreement --run": lambda w: _invoke(
        w, "agreement", "--run", w.run_id, "--a", "alice", "--b", "bob"
    ),
    "corix personas": lambda w: _invoke(w, "personas", w.run_id),
    "corix personas --json": lambda w: json.loads(_invoke(w, "personas", w.run_id, "--json"))[
        "measurement"
    ]["headline"],
    "corix gate": lambda w: _invoke(w, "gate", w.run_id, "--max", "guardrail_violation=1"),
    "corix tree leaves": lambda w: _invoke(
        w, "tree", "leaves", w.run_id, "-o", str(w.out / "leaves.csv")
    ),
    "corix report (JSON)": lambda w: json.loads(_report_files(w, w.run_id)["json"])["measurement"][
        "headline"
    ],
    "corix report (HTML)": lambda w: _report_files(w, w.run_id)["html"],
    "corix report (Markdown)": lambda w: _report_files(w, w.run_id)["md"],
    "web report.json": lambda w: json.loads(w.pages["report.json"])["measurement"]["headline"],
    "web report page": lambda w: w.pages["report"],
}


def _plain(text: str) -> str:
    """Text as a reader sees it: tags dropped, entities decoded, whitespace collapsed, and
    Markdown's escapes undone."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return " ".join(re.sub(r"\\([\\`*_{}\[\]()#+\-.!|>])", r"\1", text).split())


READER_ROUTES = {"corix report (HTML)", "corix report (Markdown)", "web report page"}
"""Outputs for people, which name annotators as readers know them ("alice", not "user:alice")."""


@pytest.mark.parametrize("route", list(HEADLINE_ROUTES))
def test_every_output_prints_the_specification_and_the_settlement(world: World, route: str) -> None:
    shown = _plain(HEADLINE_ROUTES[route](world))
    name = annotator_label if route in READER_ROUTES else str
    spec, settlement = world.measurement.headline(name).split("\n")
    assert " ".join(spec.split()) in shown
    assert " ".join(settlement.split()) in shown
    for annotator in ("reference", "alice", "bob"):
        assert annotator in settlement


# -- agreement -------------------------------------------------------------------------------

Agreement = dict[str, tuple[int, float | None, float | None]]
"""question → items, exact ratio, ±1 ratio."""


def _agreement(reports: list[dict[str, Any]]) -> Agreement:
    return {
        r["question_id"]: (r["n_items"], r["exact_agreement"], r["relaxed_agreement"])
        for r in reports
        if r["n_items"]
    }


def test_corix_agreement_and_the_report_agree_for_every_pair(world: World) -> None:
    document = json.loads(_report_files(world, world.run_id)["json"])
    web = json.loads(world.pages["report.json"])
    names = sorted(world.measurement.annotators())
    assert {"alice", "bob", "reference"} <= set(names)
    text = {q.id for q in world.measurement.schema.questions() if q.type is QuestionType.TEXT}
    in_report = {(p["a"], p["b"]): _agreement(p["questions"]) for p in document["agreement"]}
    assert in_report == {(p["a"], p["b"]): _agreement(p["questions"]) for p in web["agreement"]}
    assert set(in_report) == set(combinations(names, 2))
    people = in_report[("alice", "bob")]["du_usefulness"]
    assert people[1:] == (0.0, 1.0)  # half points compare as numbers: never exact, all ±1
    for pair in document["agreement"]:
        # Provenance: each agreement lists the items (dialogues or turns) it compared.
        assert all(len(q["items"]) == q["n_items"] for q in pair["questions"])
    for a, b in combinations(names, 2):
        shown = _invoke(world, "agreement", "--run", world.run_id, "--a", a, "--b", b, "--json")
        core = [r.model_dump() for r in world.measurement.agreement(a, b)]
        assert _agreement(json.loads(shown)) == _agreement(core)
        # The report leaves out free-text questions: exact agreement of prose means nothing.
        compared = {q: v for q, v in _agreement(core).items() if q not in text}
        assert in_report[(a, b)] == compared


class _AgreementRows(HTMLParser):
    """The agreement page's table: one dict per row, keyed by each cell's data-label."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str]] = []
        self._label: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append({})
        elif tag == "td" and self.rows:
            self._label = dict(attrs).get("data-label")
            self.rows[-1][str(self._label)] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._label = None

    def handle_data(self, data: str) -> None:
        if self._label is not None:
            self.rows[-1][self._label] += data.strip()


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def test_the_agreement_page_shows_the_cores_agreement(world: World) -> None:
    """People against the LLM annotator, and people among themselves, as the core and
    `corix agreement --run --group` give them (on the annotators' own labels)."""
    parser = _AgreementRows()
    parser.feed(world.pages["agreement"])
    rows = {row["Question"]: row for row in parser.rows if "Question" in row}
    names = world.measurement.annotators()
    people = sorted(n for n, kind in names.items() if kind == "human")
    models = sorted(n for n, kind in names.items() if kind == "llm")
    groups = {"people": people, "models": models}
    # The page measures people and LLM annotators only (reference rules left out).
    selected = (AnnotatorSelector(kind="human"), AnnotatorSelector(kind="llm"))
    both = measure(world.db, [world.run_id], MeasurementSpec(annotators=selected))
    core = [r.model_dump() for r in both.agreement("people", "models", groups=groups)]
    options = [f"--group={name}={','.join(members)}" for name, members in groups.items()]
    shown = _invoke(
        world,
        "agreement",
        "--run",
        world.run_id,
        "--a",
        "people",
        "--b",
        "models",
        "--json",
        *options,
    )
    assert _agreement(json.loads(shown)) == _agreement(core)
    versus = _agreement(core)
    assert versus, "no question compared people with the LLM"
    for question in world.measurement.schema.questions():
        row = rows[question.text]
        items, exact, _ = versus.get(question.id, (0, None, None))
        assert row["Items (people × LLM)"] == str(items)
        assert row["Exact"] == _percent(exact)
        n, share = pairwise_agreement(
            both.label_rows(question.id, annotators=people), ordinal=question.is_ordinal
        )
        assert (row["Items (people)"], row["Pairs agreeing"]) == (str(n), _percent(share))
    assert " ".join(both.headline(annotator_label).split()) in _plain(world.pages["agreement"])


# -- persona coverage --------------------------------------------------------------------------


def test_persona_coverage_counts_the_cores_violations(world: World) -> None:
    coverage = json.loads(_invoke(world, "personas", world.run_id, "--json"))
    assert coverage["rows"], "the run has red-teaming personas"
    violations: dict[str, float] = {}
    annotated: dict[str, int] = {}
    for row in coverage["rows"]:
        for source, value in row["violations"].items():
            violations[source] = violations.get(source, 0.0) + value
        for source, count in row["annotated"].items():
            annotated[source] = annotated.get(source, 0) + count
    rates = [
        r
        for r in world.measurement.rates(by=("harm", "level"))
        if r.group["harm"] == GUARDRAIL and r.group["level"] == Level.RED_TEAMING.value
    ]
    assert violations == pytest.approx({r.group["source"]: r.defects for r in rates})
    assert annotated == {r.group["source"]: r.n for r in rates}
    left_out = [d for d in world.measurement.not_measurable if d.level == Level.RED_TEAMING.value]
    assert sum(row["not_measurable"] for row in coverage["rows"]) == len(left_out)


# -- reruns ----------------------------------------------------------------------------------


async def test_the_same_plan_twice_gives_the_same_report(tmp_path: Path) -> None:
    documents = []
    for attempt in ("first", "second"):
        db = Database(f"sqlite:///{tmp_path / attempt}.db")
        try:
            run_id = await _labelled_run(db, tmp_path)
            paths = write_report(db, run_id, tmp_path / attempt, bootstrap=50)
            document = json.loads(paths.json.read_text(encoding="utf-8"))
        finally:
            db.dispose()
        documents.append(document)
    first, second = documents
    # Session ids and times differ between runs; every number must not.
    for key in ("violation_rates", "defect_rates", "violation_totals", "defect_totals"):
        assert _stable(first[key]) == _stable(second[key])
    assert _stable(first["trees"]) == _stable(second["trees"])
    assert _stable(first["agreement"]) == _stable(second["agreement"])
    assert first["measurement"]["digest"] == second["measurement"]["digest"]
    assert first["measurement"]["settlement"] == second["measurement"]["settlement"]


def _stable(value: Any) -> Any:
    """``value`` without the session ids that name dialogues (random per run)."""
    if isinstance(value, dict):
        return {
            key: _stable(item)
            for key, item in value.items()
            if key not in ("dialogues", "defect_dialogues", "sessions", "items")
        }
    if isinstance(value, list):
        return [_stable(item) for item in value]
    return value


def test_every_tree_node_names_whose_labels_it_holds(world: World) -> None:
    """Per-source trees hold only their source's labels, and each node says whose."""
    document = json.loads(_report_files(world, world.run_id)["json"])
    seen: dict[str, set[str]] = {}
    for tree in document["trees"].values():
        source = tree["annotator_source"]
        for root in tree["applications"].values():
            stack = [root]
            while stack:
                node = stack.pop()
                stack.extend(node["children"])
                seen.setdefault(source, set()).update(node["annotators"])
                assert {name.split(":", 1)[0] for name in node["annotators"]} <= {source}
    assert seen == {
        "human": {"human:alice", "human:bob"},
        "llm": {"llm:judge"},
        "reference": {"reference:reference"},
    }
