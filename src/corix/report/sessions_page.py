"""A self-contained HTML page listing a run's sessions and their transcripts."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from corix.storage import Repository

_env = Environment(
    loader=PackageLoader("corix.report", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
)


def write_sessions_page(repo: Repository, run_id: str, path: Path) -> Path:
    """Render every session of ``run_id``; all text is escaped (replies are untrusted)."""
    run = repo.get_run(run_id)
    sessions = list(repo.iter_sessions(run_id))
    sessions.sort(key=lambda s: (s.application, s.scenario, s.level.value, s.id))
    path.parent.mkdir(parents=True, exist_ok=True)
    html = _env.get_template("sessions.html.j2").render(run=run, sessions=sessions)
    path.write_text(html, encoding="utf-8")
    return path
