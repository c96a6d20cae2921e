"""Each annotation job stores its settings with the run; `runs show` and the report list them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from alembic import command
from annotator_support import CLEAN, SPOILER, store_run
from sqlalchemy import inspect
from typer.testing import CliRunner

from corix.assessment.annotation_run import AnnotateOptions, annotate_run, annotate_run_async
from corix.cli.runs_cmds import runs_app
from corix.domain import AnnotationJobSettings, public_url
from corix.llm import EndpointConfig, LLMClient, ResponseCache
from corix.report import ReportSettings, build_report
from corix.report.html import render_html
from corix.report.json_doc import report_document
from corix.report.markdown import render_markdown
from corix.storage import Database, NotFoundError, annotation_jobs, record_annotation_job
from corix.storage.database import alembic_config

SECRET = "s3cr3t-token"
ENDPOINT = EndpointConfig(
    name="judge",
    transport="mock",
    base_url=f"https://judge:{SECRET}@models.example:8443/v1?api-key={SECRET}#{SECRET}",
    model="corix-mock",
    key_env="JUDGE_KEY",
    headers={"X-Api-Key": SECRET},
    structured_output="json_object",
    context_window=8192,
    max_tokens=400,
    timeout_s=30,
)


async def test_a_job_stores_its_settings_and_its_endpoint_without_secrets(
    any_db: Database,
) -> None:
    run_id = store_run(any_db, [CLEAN, SPOILER])
    options = AnnotateOptions(repeats=3, adaptive=True, min_repeats=2, max_flip_rate=0.2, seed=7)
    async with LLMClient(ENDPOINT) as client:
        await annotate_run_async(any_db, run_id, "llm-harms", options=options, client=client)
    await annotate_run_async(any_db, run_id, "reference")
    first, second = annotation_jobs(any_db, [run_id])
    settings = first.settings
    assert (settings.annotator, settings.stored_as, settings.kind) == (
        "llm-harms",
        "llm:corix-mock",
        "llm",
    )
    assert (settings.repeats, settings.adaptive, settings.min_repeats) == (3, True, 2)
    assert (settings.max_flip_rate, settings.seed) == (0.2, 7)
    assert settings.categories == () and "groundedness" in settings.harms
    assert set(settings.harm_pack_versions) == set(settings.harms)
    assert settings.endpoint is not None
    assert settings.endpoint.base_url == "https://models.example:8443/v1"
    assert (settings.endpoint.structured_output, settings.endpoint.context_window) == (
        "json_object",
        8192,
    )
    assert (settings.endpoint.max_tokens, settings.endpoint.timeout_s) == (400, 30)
    assert (
        SECRET not in settings.model_dump_json() and "JUDGE_KEY" not in settings.model_dump_json()
    )
    assert second.settings.stored_as == "reference" and second.settings.endpoint is None
    assert second.settings.min_repeats is None  # not adaptive: no stopping rule to record
    assert "risk_assessment" in second.settings.categories


def test_an_unknown_run_stores_no_job(sqlite_db: Database) -> None:
    with pytest.raises(NotFoundError, match="run-nope"):
        annotate_run(sqlite_db, "run-nope", "reference")
    assert annotation_jobs(sqlite_db, ["run-nope"]) == []


def test_public_url_drops_credentials_query_and_fragment() -> None:
    assert public_url("http://u:p@host:8080/v1?key=k#f") == "http://host:8080/v1"
    assert public_url("") == ""


def test_the_migration_adds_the_table_and_steps_back(any_db: Database) -> None:
    config = alembic_config(any_db.engine)
    command.downgrade(config, "run_packs")
    assert "annotation_jobs" not in inspect(any_db.engine).get_table_names()
    command.upgrade(config, "head")
    assert "annotation_jobs" in inspect(any_db.engine).get_table_names()
    run_id = store_run(any_db, [CLEAN])
    settings = AnnotationJobSettings(
        annotator="reference",
        stored_as="reference",
        kind="reference",
        passes=1,
        repeats=1,
        adaptive=False,
        categories=("risk_assessment",),
        harms=(),
        schema_version="aria-1.0",
        harm_pack_versions={},
        seed=0,
        max_reasks=2,
    )
    record_annotation_job(any_db, run_id, settings)
    assert [job.settings for job in annotation_jobs(any_db, [run_id])] == [settings]


def test_runs_show_and_the_report_list_the_jobs(sqlite_db: Database) -> None:
    run_id = store_run(sqlite_db, [CLEAN, SPOILER])
    annotate_run(sqlite_db, run_id, "reference")
    annotate_run(sqlite_db, run_id, "llm", options=AnnotateOptions(repeats=2), endpoint=ENDPOINT)
    app = typer.Typer()
    app.add_typer(runs_app, name="runs")
    runner = CliRunner()
    shown = runner.invoke(app, ["runs", "show", run_id, "--db", sqlite_db.url])
    assert shown.exit_code == 0, shown.output
    assert "annotation jobs:" in shown.output
    assert "LLM judge (corix-mock) (llm)" in shown.output
    assert "1 pass, 2 runs each" in shown.output
    assert "corix-mock via mock https://models.example:8443/v1" in shown.output
    assert "context window 8192" in shown.output and SECRET not in shown.output
    as_json = json.loads(
        runner.invoke(app, ["runs", "show", run_id, "--db", sqlite_db.url, "--json"]).output
    )
    assert [job["settings"]["stored_as"] for job in as_json["annotation_jobs"]] == [
        "reference",
        "llm:corix-mock",
    ]

    content = build_report(sqlite_db, run_id, ReportSettings(bootstrap=0))
    document = report_document(content)
    jobs = document.annotation_jobs
    assert [(job.run, job.stored_as, job.repeats) for job in jobs] == [
        (run_id, "reference", 1),
        (run_id, "llm:corix-mock", 2),
    ]
    assert jobs[1].endpoint is not None and jobs[1].endpoint.max_tokens == 400
    markdown = render_markdown(content)
    assert "| Annotation job |" in markdown and "max tokens 400" in markdown
    page = render_html(content)
    assert "<h3>Annotation jobs</h3>" in page and "structured output json_object" in page
    assert SECRET not in page


def test_the_judges_replies_go_to_the_cache_file_the_runner_opens_and_closes(
    sqlite_db: Database, tmp_path: Path
) -> None:
    run_id = store_run(sqlite_db, [CLEAN, SPOILER])
    path = tmp_path / "replies.sqlite"
    annotate_run(sqlite_db, run_id, "llm", endpoint=ENDPOINT, cache=path)
    with ResponseCache(path) as cache:  # closed by the runner, so it opens again here
        assert len(cache) >= 2  # a reply per session at least
