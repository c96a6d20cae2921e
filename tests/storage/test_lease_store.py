"""The run lease's store: held once, free after, and stale once its holder is gone, whether
that holder ran here or on another host (a lease written as another machine's process
leaves it). ``tests/execution/faults/test_run_lease.py`` holds a run with a real process.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from sqlalchemy import update

from corix.storage import Database, create_run, get_run, holding_run, shown_status
from corix.storage.clock import utcnow
from corix.storage.orm import RunRow
from corix.storage.run_lease import STALE_AFTER_S, RunHeld, machine_identity
from support.plans import bare_plan


def _stored_run(db: Database) -> str:
    create_run(db, "run-lease", name="lease", plan=bare_plan(), seed=0)
    return "run-lease"


def test_a_lease_is_held_once_and_free_after(any_db: Database) -> None:
    run_id = _stored_run(any_db)
    with holding_run(any_db, run_id, "corix run") as lease:
        assert get_run(any_db, run_id).lease_holder == lease.holder
        with pytest.raises(RunHeld) as refused, holding_run(any_db, run_id, "corix annotate"):
            pass
        assert lease.holder in str(refused.value)
    assert get_run(any_db, run_id).lease_holder is None
    with holding_run(any_db, run_id, "corix annotate"):
        pass


@pytest.mark.parametrize(
    ("holder", "silent_s", "stale"),
    [
        ("corix run on elsewhere (pid 1, {machine}, ab12cd)", 10, False),  # another host
        ("corix run on elsewhere (pid 1, {machine}, ab12cd)", STALE_AFTER_S + 5, True),  # silent
        ("corix run on {host} (pid {dead}, {machine}, ab12cd)", 0, True),  # here, pid gone
        # Same host name, pid gone here, but another pid namespace (a container) or another
        # boot: that pid names nothing here, so only the heartbeat tells.
        ("corix run on {host} (pid {dead}, 0123456789abcdef:4026531836, ab12cd)", 0, False),
        ("corix run on {host} (pid 1, 0123456789abcdef:4026531836, ab12cd)", 10, False),
    ],
)
def test_a_lease_goes_stale_when_its_holder_is_gone(
    any_db: Database, holder: str, silent_s: float, stale: bool
) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    holder = holder.format(host=socket.gethostname(), dead=dead, machine=machine_identity())
    run_id = _stored_run(any_db)
    with any_db.session() as s:
        s.execute(
            update(RunRow)
            .where(RunRow.id == run_id)
            .values(lease_holder=holder, lease_heartbeat_at=utcnow() - timedelta(seconds=silent_s))
        )
    assert (shown_status(get_run(any_db, run_id)) == "stale") is stale
    if stale:
        with holding_run(any_db, run_id, "corix run --resume"):
            pass
    else:
        with pytest.raises(RunHeld, match="held by corix run on"), holding_run(any_db, run_id, "x"):
            pass
