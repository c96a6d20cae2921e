"""Which Ray cluster corix uses, and connecting to it quickly or failing in one line.

* Without an address (or with ``local``) corix starts a local cluster of its own,
  never the one ``RAY_ADDRESS`` or Ray's current-cluster file names: joining a cluster
  must be asked for, with ``--ray-address`` (``auto`` joins the one Ray finds).
* With an address, its host and port are tried first (``PROBE_TIMEOUT_S``), then whether
  they speak gRPC, as a Ray head (and Ray Client's server) does (``PROBE_TIMEOUT_S``
  again): a malformed, closed, unreachable address, or one that answers but is no Ray,
  raises :class:`ClusterUnavailable` (a :class:`~corix.errors.CorixError`: one line,
  exit 2) within seconds, before a run row exists; so does Ray's own failure to join.
  With TLS (``RAY_USE_TLS``) the gRPC check is left to Ray.
* Token authentication (on by default since Ray 2.60): when ``RAY_AUTH_MODE`` is unset
  and a token is at hand (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or
  ``~/.ray/auth_token``, where ``ray start --head`` writes it), corix connects in token
  mode, as the cluster expects; ``RAY_AUTH_MODE`` set by the user always wins.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
from pathlib import Path

import grpc
import ray

from corix.errors import CorixError

__all__ = [
    "PROBE_TIMEOUT_S",
    "ClusterUnavailable",
    "connect",
    "use_token_auth_if_available",
]

PROBE_TIMEOUT_S = 5.0


class ClusterUnavailable(CorixError):
    """The Ray cluster asked for cannot be reached or joined."""


def use_token_auth_if_available(environ: dict[str, str] | None = None) -> bool:
    """Set ``RAY_AUTH_MODE=token`` when it is unset and a token is available; return
    whether token mode is on."""
    env = os.environ if environ is None else environ
    mode = env.get("RAY_AUTH_MODE")
    if mode is not None:
        return mode.lower() == "token"
    token_file = Path(env.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token")
    if env.get("RAY_AUTH_TOKEN") or token_file.is_file():
        env["RAY_AUTH_MODE"] = "token"
        return True
    return False


def _host_and_port(address: str) -> tuple[str, int]:
    bare = address.removeprefix("ray://")
    host, sep, port = bare.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ClusterUnavailable(
            f"--ray-address '{address}' is not HOST:PORT, ray://HOST:PORT, auto or local"
        )
    return host.strip("[]"), int(port)


def _probe(address: str) -> None:
    host, port = _host_and_port(address)
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise ClusterUnavailable(f"cannot reach the Ray cluster at {address}: {reason}") from None
    if os.environ.get("RAY_USE_TLS", "0").lower() not in ("1", "true") and not _speaks_grpc(
        host, port
    ):
        raise ClusterUnavailable(
            f"cannot join the Ray cluster at {address}: it answers, but not as Ray does (gRPC)"
        )


def _speaks_grpc(host: str, port: int) -> bool:
    """Whether ``host:port`` completes a gRPC (HTTP/2) handshake within ``PROBE_TIMEOUT_S``:
    a plain TCP or HTTP/1 server never does; one that refuses says so at once."""
    outcome: queue.Queue[bool] = queue.Queue()

    def watch(state: grpc.ChannelConnectivity) -> None:
        if state is grpc.ChannelConnectivity.READY:
            outcome.put(True)
        elif state is grpc.ChannelConnectivity.TRANSIENT_FAILURE:
            outcome.put(False)

    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    channel = grpc.insecure_channel(target)
    try:
        channel.subscribe(watch, try_to_connect=True)
        return outcome.get(timeout=PROBE_TIMEOUT_S)
    except queue.Empty:
        return False
    finally:
        channel.close()


def _init(**options: object) -> None:
    """``ray.init(**options)`` in this thread (actors made in another thread's session are
    cancelled), its failure in one line."""
    try:
        ray.init(**options)  # type: ignore[arg-type]
    except Exception as exc:
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        address = options.get("address")
        raise ClusterUnavailable(
            f"cannot join the Ray cluster at {address}: {first_line}"
        ) from None


def connect(address: str | None, *, num_cpus: int | None = None) -> bool:
    """Make sure Ray is initialized for corix; return whether this call initialized it
    (and so must shut it down). An already initialized Ray is used as it is."""
    if ray.is_initialized():
        return False
    quiet = {"include_dashboard": False, "logging_level": logging.WARNING}
    if address in (None, "local"):
        ray.init(address="local", num_cpus=num_cpus, **quiet)  # type: ignore[arg-type]
        return True
    if address != "auto":
        _probe(address)
    use_token_auth_if_available()
    _init(address=address, **quiet)
    return True
