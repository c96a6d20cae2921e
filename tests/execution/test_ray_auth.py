"""Joining a real `ray start --head` cluster, with and without token authentication.

Each test starts a head of its own (its own port, temporary folder and home, so that no
token file of this machine counts) and runs `corix run --executor ray` against it in a
fresh process, as an operator would: corix must set Ray's token mode before Ray is
imported. About a minute each: slow.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from corix.storage import Database, list_runs

pytest.importorskip("ray", reason="the Ray executor needs the ray extra")

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]

BIN = Path(sys.executable).parent
TOKEN = "0123456789abcdef0123456789abcdef"
PLAN = """\
name: demo
applications:
  - name: g
    spec: "demo:guarded"
scenarios: [tv_spoilers]
levels:
  model_testing: {}
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _head(tmp_path: Path, token: str | None) -> Iterator[str]:
    port = _free_port()
    home = tmp_path / "head-home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    env.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token} if token else {})
    env.setdefault("RAY_AUTH_MODE", "disabled")
    args = [str(BIN / "ray"), "start", "--head", "--block", f"--port={port}", "--num-cpus=1"]
    temp = tempfile.mkdtemp(prefix="crx")  # short: Ray's socket paths must fit 107 bytes
    args += [f"--temp-dir={temp}", "--include-dashboard=false"]
    args += ["--disable-usage-stats", f"--ray-client-server-port={_free_port()}"]
    head = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and head.poll() is None:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.5)
        if head.poll() is not None:
            pytest.skip(f"a Ray head cannot start here: {head.stderr.read()[-300:]!r}")
        time.sleep(5)  # the raylet registers after the GCS listens
        yield f"127.0.0.1:{port}"
    finally:
        head.send_signal(signal.SIGTERM)  # `ray start --block` stops what it started
        head.wait(timeout=60)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture
def token_head(tmp_path: Path) -> Iterator[str]:
    yield from _head(tmp_path, TOKEN)


@pytest.fixture
def open_head(tmp_path: Path) -> Iterator[str]:
    yield from _head(tmp_path, None)


def _corix_run(
    tmp_path: Path, address: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "plan.yaml").write_text(PLAN)
    database = f"sqlite:///{tmp_path / 'corix.db'}"
    args = ["run", "plan.yaml", "--db", database, "--executor", "ray"]
    args += ["--ray-address", address, "--ray-workers", "1"]
    return subprocess.run(
        [str(BIN / "corix"), *args],
        cwd=tmp_path,
        env={k: v for k, v in {**os.environ, **env}.items() if k != "RAY_AUTH_MODE"},
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.mark.timeout(400)
def test_a_cluster_with_token_auth_is_joined_with_the_token_in_the_environment(
    tmp_path: Path, token_head: str
) -> None:
    home = tmp_path / "driver-home"  # no ~/.ray/auth_token: the token comes from the env
    home.mkdir()
    result = _corix_run(tmp_path, token_head, {"HOME": str(home), "RAY_AUTH_TOKEN": TOKEN})
    assert result.returncode == 0, result.stderr[-2000:]
    assert _finished_sessions(tmp_path) == [("complete", 22)]
    refused = _corix_run(tmp_path, token_head, {"HOME": str(home), "RAY_AUTH_TOKEN": "wrong"})
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("refuses the token in RAY_AUTH_TOKEN")


@pytest.mark.timeout(400)
def test_a_token_file_left_by_a_local_ray_does_not_break_a_cluster_without_auth(
    tmp_path: Path, open_head: str
) -> None:
    home = tmp_path / "driver-home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text("left-by-a-local-ray")
    result = _corix_run(tmp_path, open_head, {"HOME": str(home)})
    assert result.returncode == 0, result.stderr[-2000:]
    assert _finished_sessions(tmp_path) == [("complete", 22)]


def _finished_sessions(tmp_path: Path) -> list[tuple[str, int]]:
    db = Database(f"sqlite:///{tmp_path / 'corix.db'}")
    try:
        return [(run.status, run.summary.sessions) for run in list_runs(db)]
    finally:
        db.dispose()
