"""The results home (``corix view``): runs with the core's rates, their reports, and two
runs compared with the numbers of ``corix runs compare``; every stored text escaped."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from corix.measurement import compare_measurements, measure
from corix.report import safe_folder, value_with_interval
from corix.storage import Database
from corix.web import results_home_app
from support.run_builder import write_tiny_run

HOSTILE = 'run-"><img src=x onerror=alert(1)>'


@pytest.fixture
async def home(sqlite_db: Database, tmp_path: Path) -> tuple[TestClient, Database, Path]:
    await write_tiny_run(sqlite_db, HOSTILE)
    reports = tmp_path / "reports"
    return TestClient(results_home_app(sqlite_db, reports)), sqlite_db, reports


def test_runs_are_listed_escaped_with_the_cores_rates(
    home: tuple[TestClient, Database, Path],
) -> None:
    client, db, _ = home
    page = client.get("/")
    assert page.status_code == 200
    assert "<img" not in page.text and "&lt;img src=x onerror=alert(1)&gt;" in page.text
    rates = measure(db, [HOSTILE]).rates(by=("harm",))
    assert rates
    for rate in rates:
        shown = value_with_interval(rate.rate, (rate.ci_low, rate.ci_high), share=True)
        assert f"{shown} <span" in page.text
    assert "none yet" in page.text  # no report written


def test_a_written_report_is_linked_and_served(home: tuple[TestClient, Database, Path]) -> None:
    client, _, reports = home
    folder = safe_folder(reports, HOSTILE)
    folder.mkdir(parents=True)
    (folder / "report.html").write_text("<p>the report</p>", encoding="utf-8")
    page = client.get("/").text
    href = f"/reports/{folder.name}/report.html"
    assert f'href="{href}"' in page
    assert client.get(href).text == "<p>the report</p>"
    assert client.get("/reports/../corix.db").status_code == 404


def test_two_runs_compared_with_the_numbers_of_runs_compare(
    home: tuple[TestClient, Database, Path],
) -> None:
    client, db, _ = home
    page = client.get("/compare", params={"a": HOSTILE, "b": HOSTILE})
    assert page.status_code == 200
    assert "<img" not in page.text
    measured = measure(db, [HOSTILE])
    rows = compare_measurements(db, measured, measured, "aria_pilot")
    for row in rows:
        change = value_with_interval(row.change, row.change_interval, share=row.share, signed=True)
        assert f'<td class="n">{change}</td>' in page.text
    missing = client.get("/compare", params={"a": "run-<b>nope", "b": HOSTILE})
    assert missing.status_code == 404
    assert "run-&lt;b&gt;nope" in missing.text and "<b>" not in missing.text


@pytest.mark.parametrize(("judge", "warned"), [("ynnyyn", True), ("yyynnn", False)])
async def test_the_judges_agreement_with_people_is_beside_its_rates(
    sqlite_db: Database, tmp_path: Path, judge: str, warned: bool
) -> None:
    from support.testers_run import write_judge_against_people_run

    await write_judge_against_people_run(sqlite_db, "yyynnn", judge)
    page = TestClient(results_home_app(sqlite_db, tmp_path)).get("/").text
    assert "Cohen&#x27;s κ (unweighted)" in page or "Cohen&#39;s κ (unweighted)" in page
    assert ("its rates are not people" in page) is warned
