"""The results home (``corix view``): a small read-only local page over the database and
the written reports.

It lists runs and evaluation series with their status, counts and headline rates, links
each to its report under ``.corix/reports``, serves those reports, and compares two runs
side by side with the numbers ``corix runs compare`` prints. Every number comes from the
measurement core; this module only formats it. Run names, series names and every other
stored text are user input: all of it is escaped.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from fastapi import FastAPI, Query
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from corix.errors import CorixError
from corix.measurement import Compared, compare_measurements, measure
from corix.report import safe_folder, value_with_interval
from corix.storage import Database, get_run, list_runs, shown_status
from corix.storage.web.series import all_series, run_ids

__all__ = ["results_home_app"]

REPORT_HTML = "report.html"
_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5rem;max-width:75rem;color:#1a1a1a}
table{border-collapse:collapse;margin:0.5rem 0 1.5rem}
th,td{border:1px solid #bbb;padding:0.3rem 0.6rem;text-align:left;vertical-align:top}
th{background:#eee} td.n{text-align:right;font-variant-numeric:tabular-nums}
.dim{color:#555}
"""


def results_home_app(db: Database, reports: Path, *, tree: str = "aria_pilot") -> FastAPI:
    """The read-only results home over ``db``, serving the reports under ``reports``."""
    app = FastAPI(title="corix results", docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/", response_class=HTMLResponse)
    def home() -> str:
        return _page("corix results", _runs_section(db, reports) + _series_section(db, reports))

    @app.get("/compare", response_class=HTMLResponse)
    def compare(a: str = Query(...), b: str = Query(...)) -> HTMLResponse:
        try:
            get_run(db, a)
            get_run(db, b)
            first, second = measure(db, [a]), measure(db, [b])
            rows = compare_measurements(db, first, second, tree)
        except CorixError as exc:
            return HTMLResponse(_page("cannot compare", f"<p>{escape(str(exc))}</p>"), 404)
        level = f"{first.spec.spec.confidence:.0%}"
        body = (
            f'<p class="dim">{escape(first.spec.headline())}</p>'
            f"<p>Rates in %, changes in percentage points (B − A), each with its {level} "
            "interval; tree values on their own scale.</p>" + _compare_table(rows, a, b)
        )
        return HTMLResponse(_page(f"{a} against {b}", body))

    reports.mkdir(parents=True, exist_ok=True)
    app.mount("/reports", StaticFiles(directory=reports, html=True), name="reports")
    return app


def _runs_section(db: Database, reports: Path) -> str:
    runs = list_runs(db)
    if not runs:
        return "<h2>Runs</h2><p>No runs yet: <code>corix demo</code> makes one.</p>"
    rows = []
    for run in reversed(runs):  # newest first
        rows.append(
            "<tr>"
            f"<td>{escape(run.id)}</td><td>{escape(run.name)}</td>"
            f"<td>{escape(shown_status(run))}</td>"
            f'<td class="n">{run.summary.sessions}</td>'
            f'<td class="n">{run.summary.error_turns}</td>'
            f"<td>{_headline_rates(db, [run.id])}</td>"
            f"<td>{_report_link(reports, run.id)}</td>"
            "</tr>"
        )
    options = "".join(f'<option value="{escape(r.id)}">{escape(r.id)}</option>' for r in runs)
    form = (
        '<form action="/compare" method="get"><label>A <select name="a">'
        f'{options}</select></label> <label>B <select name="b">{options}</select></label> '
        '<button type="submit">Compare</button></form>'
    )
    rates = "defect rates in % [95% interval]"
    head = _head("run", "name", "status", "sessions", "error turns", rates, "report")
    return f"<h2>Runs</h2><table>{head}{''.join(rows)}</table><h2>Compare two runs</h2>{form}"


def _series_section(db: Database, reports: Path) -> str:
    series = all_series(db)
    if not series:
        return ""
    rows = []
    for one in series:
        runs = run_ids(db, one.id)
        rows.append(
            "<tr>"
            f"<td>{escape(one.name)}</td><td>{escape(one.description)}</td>"
            f'<td class="n">{len(runs)}</td>'
            f"<td>{_headline_rates(db, runs)}</td>"
            f"<td>{_report_link(reports, f'series-{one.name}')}</td>"
            "</tr>"
        )
    head = _head("series", "description", "runs", "defect rates in % [95% interval]", "report")
    return f"<h2>Evaluation series</h2><table>{head}{''.join(rows)}</table>"


def _headline_rates(db: Database, runs: list[str]) -> str:
    """Each harm's defect rate per annotator source, pooled over applications."""
    if not runs:
        return '<span class="dim">no runs</span>'
    try:
        measurement = measure(db, runs)
    except CorixError as exc:
        return f'<span class="dim">not measured: {escape(str(exc))}</span>'
    rates = measurement.rates(by=("harm",))
    if not rates:
        return '<span class="dim">not annotated yet</span>'
    lines = [
        f"{escape(' · '.join(rate.group.values()))}: "
        f"{value_with_interval(rate.rate, (rate.ci_low, rate.ci_high), share=True)} "
        f'<span class="dim">(n={rate.n})</span>'
        for rate in rates
    ]
    # The LLM judge's rates read as people's only as far as it agrees with them.
    lines += [
        f'<span class="dim">{"⚠ " if a.low else ""}{escape(a.sentence())}</span>'
        for a in measurement.judge_agreement()
    ]
    return "<br>".join(lines)


def _report_link(reports: Path, name: str) -> str:
    folder = safe_folder(reports, name)
    if not (folder / REPORT_HTML).is_file():
        return f'<span class="dim">none yet: <code>corix report {escape(name)}</code></span>'
    href = f"/reports/{folder.name}/{REPORT_HTML}"
    return f'<a href="{escape(href)}">report</a>'


def _compare_table(rows: list[Compared], a: str, b: str) -> str:
    body = "".join(
        "<tr>"
        f"<td>{escape(row.what)}</td>"
        f'<td class="n">{value_with_interval(row.a, row.a_interval, share=row.share)}</td>'
        f'<td class="n">{value_with_interval(row.b, row.b_interval, share=row.share)}</td>'
        f'<td class="n">'
        f"{value_with_interval(row.change, row.change_interval, share=row.share, signed=True)}</td>"
        f"<td>{ {None: '—', True: 'yes', False: 'no'}[row.overlap] }</td>"
        "</tr>"
        for row in rows
    )
    return f"<table>{_head('what', a, b, 'change', 'intervals overlap')}{body}</table>"


def _head(*names: str) -> str:
    return "<tr>" + "".join(f'<th scope="col">{escape(name)}</th>' for name in names) + "</tr>"


def _page(title: str, body: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        f'<p><a href="/">corix results</a></p><h1>{escape(title)}</h1>{body}</body></html>'
    )
