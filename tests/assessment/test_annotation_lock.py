"""One process annotates a run as one annotator at a time; a killed holder never wedges it.

The lock is taken by another real process (this test's, or a child killed with SIGKILL)
and ``corix annotate`` runs as its own process, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from annotator_support import CLEAN, SPOILER, store_run

from corix.cli.exit_codes import ExitCode
from corix.storage import Database
from corix.storage.annotations import load_passes
from corix.storage.locks import LockHeld, exclusive

HOLD = """
import sys, time
from corix.storage import Database
from corix.storage.locks import exclusive
with exclusive(Database(sys.argv[1], run_migrations=False), sys.argv[2]):
    print("held", flush=True)
    time.sleep(120)
"""


def _annotate(db: Database, run_id: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "corix.cli.main", "annotate", run_id, "--db", db.url],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )


def test_annotate_stops_at_once_while_another_process_annotates(any_db: Database) -> None:
    run_id = store_run(any_db, [CLEAN, SPOILER])
    with exclusive(any_db, f"annotate {run_id} as reference"):
        refused = _annotate(any_db, run_id)
        other = exclusive(any_db, f"annotate {run_id} as llm:judge")
        with other:  # another annotator of the same run is not held up
            pass
    assert refused.returncode == ExitCode.USAGE, refused.stderr
    assert refused.stderr.splitlines() == [
        f"error: run '{run_id}' is already being annotated as 'reference' by another process; "
        "wait for it to finish (a rerun then adds only what is missing)"
    ]
    assert load_passes(any_db, run_id=run_id) == []  # the second process stored nothing
    done = _annotate(any_db, run_id)
    assert done.returncode == ExitCode.OK, done.stderr
    assert load_passes(any_db, run_id=run_id)


def test_a_killed_holder_releases_the_lock(any_db: Database) -> None:
    name = "annotate run-x as reference"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, any_db.url, name], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        try:
            with exclusive(any_db, name):
                raise AssertionError("the lock was free while another process held it")
        except LockHeld:
            pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # Released with the killed process: at once on SQLite; on PostgreSQL once the server's
    # backend notices its client is gone, which takes a moment on a loaded machine.
    deadline = time.monotonic() + 10
    while True:
        try:
            with exclusive(any_db, name):
                return
        except LockHeld:
            assert time.monotonic() < deadline, "the lock outlived its killed holder"
            time.sleep(0.05)
