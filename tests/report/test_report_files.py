"""The report a person opens: files, offline, drill-down links, empty nodes, hostile text."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from corix.measurement import load_tree, score_tree
from corix.measurement.core import stored_leaves
from corix.measurement.questionnaires.item_statistics import TESTER_MEANS_METHOD
from corix.report import ReportPaths, write_report
from corix.report.anchors import group_anchor, node_anchor, session_anchor
from corix.report.formatting import interval, number
from corix.storage import Database
from support.run_builder import (
    HOSTILE_REASONING,
    HOSTILE_REPLY,
    RunBuilder,
    write_synthetic_run,
    write_tiny_run,
)


class _Page(HTMLParser):
    """Every start tag with its attributes, the ids, and the scripts' text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data

    @property
    def ids(self) -> set[str]:
        return {attrs["id"] for _, attrs in self.tags if attrs.get("id")}

    def links(self) -> list[str]:
        return [attrs["href"] or "" for _, attrs in self.tags if "href" in attrs]


def _element(html: str, element_id: str, tag: str = "details") -> str:
    """The HTML of the element with ``element_id`` up to its own summary's end."""
    start = html.index(f'<{tag} id="{element_id}"')
    return html[start : html.index("</summary>", start)]


def _body(html: str, element_id: str) -> str:
    """From the element's start to the next node of the tree (its summary and session list)."""
    start = html.index(f'<details id="{element_id}"')
    following = html.find("<details id=", start + 1)
    return html[start : following if following != -1 else None]


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ReportPaths, str]]:
    folder = tmp_path_factory.mktemp("tiny")
    db = Database(f"sqlite:///{folder / 'corix.db'}")
    run_id = asyncio.run(write_tiny_run(db))
    yield write_report(db, run_id, folder / "report", bootstrap=50), run_id
    db.dispose()


@pytest.fixture(scope="module")
def synthetic_report(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ReportPaths, Database]]:
    folder = tmp_path_factory.mktemp("synthetic")
    db = Database(f"sqlite:///{folder / 'corix.db'}")
    run_id = asyncio.run(write_synthetic_run(db, sessions_per_cell=3))
    yield write_report(db, run_id, folder / "report", bootstrap=200, seed=1), db
    db.dispose()


def test_report_writes_html_markdown_and_json(tiny_report: tuple[ReportPaths, str]) -> None:
    paths, _ = tiny_report
    for path in (paths.html, paths.markdown, paths.json):
        assert path.is_file() and path.stat().st_size > 0
    assert paths.html.name == "report.html"


def test_html_needs_no_network_and_runs_only_its_hashed_script(
    tiny_report: tuple[ReportPaths, str],
) -> None:
    html = tiny_report[0].html.read_text(encoding="utf-8")
    page = _Page(html)
    sources = [
        value or ""
        for tag, attrs in page.tags
        for name, value in attrs.items()
        if name in ("src", "href", "srcset", "action", "data", "poster")
    ]
    assert sources, "the report links within itself"
    assert all(source.startswith("#") for source in sources), sources
    assert not [tag for tag, _ in page.tags if tag in ("link", "iframe", "object", "embed", "img")]
    scripts = [attrs for tag, attrs in page.tags if tag == "script"]
    assert scripts == [{}], "one inline script, no src"
    policy = next(
        a["content"] for t, a in page.tags if a.get("http-equiv") == "Content-Security-Policy"
    )
    assert policy is not None and "default-src 'none'" in policy
    digest = base64.b64encode(hashlib.sha256(page.scripts[0].encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy
    # No event handler attribute anywhere: data never becomes code.
    assert not [name for _, attrs in page.tags for name in attrs if name.startswith("on")]


def test_hostile_text_renders_as_text(tiny_report: tuple[ReportPaths, str]) -> None:
    html = tiny_report[0].html.read_text(encoding="utf-8")
    assert "<script>alert" not in html
    assert "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "[click me](https://evil.example/steal)" in html  # a Markdown link stays text
    assert "&lt;/span&gt;&lt;script&gt;alert(&#39;reasoning&#39;)" in html
    assert "Asked &lt;b&gt;nicely&lt;/b&gt;" in html
    assert HOSTILE_REPLY not in html and HOSTILE_REASONING not in html
    hrefs = _Page(html).links()
    assert not [href for href in hrefs if "evil" in href or "javascript" in href]


def test_markdown_escapes_names_and_keeps_transcripts_out(
    tiny_report: tuple[ReportPaths, str],
) -> None:
    text = tiny_report[0].markdown.read_text(encoding="utf-8")
    assert "## ARIA pilot CoRIx tree" in text
    assert "alert" not in text
    assert "human:ann1" in text
    assert "Transcripts, with annotations beside each turn, are in the HTML report." in text


def test_tree_nodes_show_value_interval_and_n_and_link_to_sessions(
    synthetic_report: tuple[ReportPaths, Database],
) -> None:
    paths, db = synthetic_report
    html = paths.html.read_text(encoding="utf-8")
    results = score_tree(
        load_tree("aria_pilot"),
        stored_leaves(db, "run-synthetic"),
        bootstrap=200,
        seed=1,
        include_dialogues=True,
    )
    node = results["beta"].find("safety")
    assert node.numeric_value is not None and node.dialogues
    summary = _element(html, node_anchor("aria_pilot-reference", "beta", "safety"))
    assert f">{number(node.numeric_value)}</span>" in summary
    assert interval(node.ci_low, node.ci_high) in summary
    assert f"n={node.n}" in summary
    body = _body(html, node_anchor("aria_pilot-reference", "beta", "safety"))
    first = node.dialogues[0]
    assert f'href="#{session_anchor(first)}"' in body
    assert f"{len(node.dialogues)} sessions" in body
    ids = _Page(html).ids
    assert session_anchor(first) in ids
    # Every link inside the page lands on an element of the page.
    missing = {href[1:] for href in _Page(html).links() if href[1:] not in ids}
    assert not missing


def test_radars_one_for_all_and_one_per_application(
    synthetic_report: tuple[ReportPaths, Database],
) -> None:
    html = synthetic_report[0].html.read_text(encoding="utf-8")
    # Two trees × two annotator sources × (one chart of all three applications + one per
    # application).
    assert html.count('<svg class="radar"') == 2 * 2 * (1 + 3)
    start = html.index('<svg class="radar"')
    radar = html[start : html.index("</svg>", start)]
    assert radar.count('class="point"') == 3 * 4  # three applications × four dimensions
    # The first radar is the first tree of the first annotator source (sorted): llm.
    assert f'href="#{node_anchor("aria_pilot-llm", "gamma", "privacy")}"' in radar


def test_empty_nodes_are_shown_empty_never_zero(tiny_report: tuple[ReportPaths, str]) -> None:
    paths, _ = tiny_report
    html = paths.html.read_text(encoding="utf-8")
    summary = _element(html, node_anchor("ai_rmf-reference", "alpha", "accountable_transparent"))
    assert 'class="chip empty"' in summary
    assert "0.0" not in summary and "n=0" in summary
    document = json.loads(paths.json.read_text(encoding="utf-8"))
    root = document["trees"]["ai_rmf-reference"]["applications"]["alpha"]
    empty = next(c for c in root["children"] if c["id"] == "accountable_transparent")
    assert empty["value"] is None and empty["empty"] is True and empty["n"] == 0


def test_json_document_carries_trees_rates_and_statistics(
    synthetic_report: tuple[ReportPaths, Database],
) -> None:
    document = json.loads(synthetic_report[0].json.read_text(encoding="utf-8"))
    assert document["format"] == "corix.report/1"
    tree = document["trees"]["aria_pilot-reference"]
    assert set(tree["applications"]) == {"alpha", "beta", "gamma"}
    root = tree["applications"]["alpha"]
    assert {"id", "summarizer", "value", "n", "children", "dialogues"} <= root.keys()
    assert tree["dimensions"] == ["validity_reliability", "safety", "privacy", "user_experience"]
    assert len(tree["correlations"]["dialogues"]["names"]) == 4
    violations = document["violation_rates"]
    # Annotator sources side by side, never pooled; every rate names its measurement.
    assert {r["group"]["source"] for r in violations} == {"reference", "llm"}
    assert document["measurement"]["spec"]["settling"] == "conservative"
    assert len(document["measurement"]["digest"]) == 12
    assert all(0 <= r["ci_low"] <= r["rate"] <= r["ci_high"] <= 1 for r in violations)
    assert len(document["sessions"]) == 3 * 3 * 3 * 3
    items = {(i["item"], i["application"]) for i in document["questionnaire"]["items"]}
    # Packs word q_trust per scenario: one item per wording, never pooled.
    trust = {item for item, application in items if item.startswith("q_trust~")}
    assert len(trust) == 3 and all((item, "gamma") in items for item in trust)
    assert document["questionnaire"]["comparisons"], "applications compared per item"
    assert {c["method"] for c in document["questionnaire"]["comparisons"]} == {TESTER_MEANS_METHOD}
    markdown = synthetic_report[0].markdown.read_text(encoding="utf-8")
    assert f"Method: {TESTER_MEANS_METHOD}." in markdown
    assert document["agreement"][0]["a"] == "llm:mock"


async def test_transcripts_are_capped_per_group(sqlite_db: Database, tmp_path: Path) -> None:
    run_id = await write_synthetic_run(sqlite_db, sessions_per_cell=3)
    paths = write_report(sqlite_db, run_id, tmp_path, bootstrap=0, transcripts_per_group=1)
    html = paths.html.read_text(encoding="utf-8")
    groups = 3 * 3 * 3
    assert html.count('<details class="session"') == groups
    assert html.count('<div class="session-row"') == groups * 2
    assert "transcript not embedded" in html
    assert group_anchor("alpha", "red_teaming", "pathfinder") in _Page(html).ids


async def test_runs_sharing_applications_are_compared_over_time(
    sqlite_db: Database, tmp_path: Path
) -> None:
    first = await write_synthetic_run(sqlite_db, run_id="run-a", sessions_per_cell=2, seed=1)
    second = await write_synthetic_run(sqlite_db, run_id="run-b", sessions_per_cell=2, seed=2)
    paths = write_report(sqlite_db, second, tmp_path, bootstrap=0)
    document = json.loads(paths.json.read_text(encoding="utf-8"))
    assert [run["id"] for run in document["history_runs"]] == [first, second]
    history = document["trees"]["aria_pilot-reference"]["history"]["alpha"]
    assert history["runs"] == [first, second]
    earlier = score_tree(load_tree("aria_pilot"), stored_leaves(sqlite_db, first))["alpha"]
    assert history["values"][0][1] == pytest.approx(earlier.find("safety").numeric_value)
    assert 'id="over-time"' in paths.html.read_text(encoding="utf-8")
    alone = write_report(sqlite_db, first, tmp_path / "alone", bootstrap=0)
    assert json.loads(alone.json.read_text(encoding="utf-8"))["history_runs"] == []


def test_node_drilldown_lists_only_its_own_sessions(tiny_report: tuple[ReportPaths, str]) -> None:
    html = tiny_report[0].html.read_text(encoding="utf-8")
    body = _body(html, node_anchor("aria_pilot-reference", "beta", "privacy_labels@model_testing"))
    linked = set(re.findall(r'href="#(s\.[^"]+)"', body))
    assert linked == {session_anchor("s3")}


async def test_a_run_without_annotations_says_so_and_shows_only_empty_values(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run = RunBuilder("run-unannotated")
    run.session("u1", "alpha", "tv_spoilers", "model_testing", [("Hi", "Hello")])
    run_id = await run.write(sqlite_db)
    paths = write_report(sqlite_db, run_id, tmp_path, bootstrap=10)
    html = paths.html.read_text(encoding="utf-8")
    assert "No annotation passes are stored for this run yet" in html
    headline = html[
        html.index('<section id="headline">') : html.index(
            "</section>", html.index('<section id="headline">')
        )
    ]
    assert 'class="chip empty"' in headline and "0.0" not in headline
    assert "Safety (Meal Planner)" in headline, "dimensions keep their labels without scores"
    assert session_anchor("u1") in _Page(html).ids


async def test_the_same_run_reports_the_same_on_both_backends(
    any_db: Database, tmp_path: Path
) -> None:
    run_id = await write_tiny_run(any_db)
    paths = write_report(any_db, run_id, tmp_path, bootstrap=30, seed=4)
    document = json.loads(paths.json.read_text(encoding="utf-8"))
    assert [s["id"] for s in document["sessions"]] == ["s1", "s2", "s3", "s4"]
    assert [s["turns"] for s in document["sessions"]] == [2, 1, 1, 1]
    # One dialogue (s3), a tree per annotator source. Privacy labels at model testing: the
    # reference said no to released and withheld → 0; the LLM and the person answered only
    # released, yes (ties settled toward risk) → 10.
    by_source = {
        source: document["trees"][f"aria_pilot-{source}"]["applications"]["beta"]["children"][2]
        for source in ("reference", "llm", "human")
    }
    assert {s: (p["id"], p["n"]) for s, p in by_source.items()} == dict.fromkeys(
        by_source, ("privacy", 1)
    )
    assert [by_source[s]["value"] for s in ("reference", "llm", "human")] == [0.0, 10.0, 10.0]
