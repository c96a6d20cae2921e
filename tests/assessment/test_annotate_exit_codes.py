"""`corix annotate` exits 3 when passes failed, unless --allow-failures; retry limits hold."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from annotator_support import CLEAN, SPOILER, store_run
from typer.testing import CliRunner

from corix.cli.exit_codes import ExitCode
from corix.cli.main import app
from corix.llm.mock_server import MockServerConfig
from corix.storage import Database
from corix.storage.annotations import load_passes
from support.mock_serving import serving


@pytest.fixture
def garbage_endpoint() -> Iterator[str]:
    """A mock server answering every request with broken JSON."""
    with serving(MockServerConfig(fail_malformed=1.0)) as url:
        yield url


@pytest.mark.parametrize(("allow", "code"), [(False, ExitCode.FAILURES), (True, ExitCode.OK)])
def test_failed_passes_set_the_exit_code(
    sqlite_db: Database, garbage_endpoint: str, allow: bool, code: int
) -> None:
    run_id = store_run(sqlite_db, [CLEAN, SPOILER])
    args = [
        "annotate",
        run_id,
        "--db",
        sqlite_db.url,
        "--annotator",
        "llm",
        "--endpoint-url",
        garbage_endpoint,
        "--model",
        "corix-mock",
        "--max-reasks",
        "0",
        "--categories",
        "dialogue_utility",
        "--json",
    ]
    result = CliRunner().invoke(app, [*args, "--allow-failures"] if allow else args)
    assert result.exit_code == code, result.output
    assert '"passes_failed": 2' in result.output


def test_annotate_takes_the_retry_limits(sqlite_db: Database) -> None:
    run_id = store_run(sqlite_db, [CLEAN])
    with serving(MockServerConfig(fail_429=1.0, retry_after_s=30)) as url:
        started = time.perf_counter()
        result = CliRunner().invoke(
            app,
            [
                "annotate",
                run_id,
                "--db",
                sqlite_db.url,
                "--annotator",
                "llm",
                "--endpoint-url",
                url,
                "--model",
                "corix-mock",
                "--categories",
                "dialogue_utility",
                "--retry-after-max",
                "0.5",
                "--call-deadline",
                "10",
            ],
        )
    assert time.perf_counter() - started < 10  # not 30 s per call
    assert result.exit_code == ExitCode.FAILURES, result.output
    (failed,) = load_passes(sqlite_db, run_id=run_id)
    assert failed.error is not None and "more than the 0.5 s corix waits" in failed.error


def test_a_failed_pass_records_the_attempts_its_error_names(sqlite_db: Database) -> None:
    """Every request is refused with a short Retry-After: the call gives up after its
    retries, and the pass stores as many attempts as its error says (it stored 0)."""
    run_id = store_run(sqlite_db, [CLEAN])
    with serving(MockServerConfig(fail_429=1.0, retry_after_s=0.01)) as url:
        result = CliRunner().invoke(
            app,
            [
                "annotate", run_id, "--db", sqlite_db.url, "--annotator", "llm",
                "--endpoint-url", url, "--model", "corix-mock",
                "--categories", "dialogue_utility",
            ],
        )  # fmt: skip
    assert result.exit_code == ExitCode.FAILURES, result.output
    (failed,) = load_passes(sqlite_db, run_id=run_id)
    assert failed.error is not None
    named = re.search(r"failed after (\d+) attempt", failed.error)
    assert named is not None, failed.error
    assert int(named.group(1)) == 5  # the first request and the default 4 retries
    assert failed.provenance["details"]["attempts"] == 5
