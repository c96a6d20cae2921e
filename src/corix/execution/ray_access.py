"""Reaching a Ray cluster, decided before Ray is imported: is the address a Ray cluster,
which port it is, and whether it asks for a token.

Ray reads ``RAY_AUTH_MODE`` once, when it is imported, so the mode must be set before:
:func:`prepare_cluster` is called before corix imports Ray (and again by ``connect``).
It asks the cluster itself instead of guessing from a token file — a local ``ray.init``
leaves ``~/.ray/auth_token`` behind, which says nothing about another cluster:

* ``HOST:PORT`` (a head's GCS port): ``GetClusterId`` without a token; a cluster with
  token authentication refuses it (``UNAUTHENTICATED``). ``ray://HOST:PORT`` (Ray
  Client's server): ``ClusterInfo`` likewise. A port that answers gRPC but not that
  service is the other kind of port, or no Ray: one line says which.
* A cluster without authentication: ``RAY_AUTH_MODE=disabled`` (so that a token file
  left on this machine does not turn token mode on). One with it: ``RAY_AUTH_MODE=token``
  once a token is at hand (``RAY_AUTH_TOKEN``, the file ``RAY_AUTH_TOKEN_PATH`` names, or
  ``~/.ray/auth_token``, where Ray looks) and the cluster accepts it; else one line.
* ``RAY_AUTH_MODE`` set by the user always wins. ``auto`` is probed at the address Ray
  would find (``RAY_ADDRESS``, or the current-cluster file of a head on this machine).
  A local cluster of corix's own (no address, ``local``) is left to Ray, which turns
  token authentication on and writes ``~/.ray/auth_token`` when none is there.
"""

from __future__ import annotations

import os
import queue
import socket
import tempfile
from collections.abc import MutableMapping
from pathlib import Path

import grpc

from corix.errors import CorixError

__all__ = ["PROBE_TIMEOUT_S", "ClusterUnavailable", "prepare_cluster"]

PROBE_TIMEOUT_S = 5.0

_GCS_CALL = "/ray.rpc.NodeInfoGcsService/GetClusterId"
_CLIENT_CALL = "/ray.rpc.RayletDriver/ClusterInfo"
CLIENT_PORT = 10001
"""Ray Client's default port (``ray start --ray-client-server-port``)."""


class ClusterUnavailable(CorixError):
    """The Ray cluster asked for cannot be reached or joined."""


def prepare_cluster(address: str | None, environ: MutableMapping[str, str] | None = None) -> None:
    """Check that ``address`` is a Ray cluster and set ``RAY_AUTH_MODE`` as it expects;
    :class:`ClusterUnavailable` (one line) when it is not, or refuses this machine."""
    env = os.environ if environ is None else environ
    if address in (None, "local"):
        return
    if address == "auto":
        found = _auto_address(env)
        if found is None:
            return  # no head on this machine that corix can see: Ray says what is wrong
        address = found
    host, port = _host_and_port(address)
    _reachable(address, host, port)
    if "RAY_AUTH_MODE" in env or _tls():
        return  # the user's choice; with TLS the probes below cannot talk to it
    client = address.startswith("ray://")
    answer = _call(host, port, _CLIENT_CALL if client else _GCS_CALL, None)
    if answer is grpc.StatusCode.UNIMPLEMENTED:
        raise ClusterUnavailable(_wrong_port(address, host, port, client))
    if answer in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        raise ClusterUnavailable(
            f"cannot join the Ray cluster at {address}: it did not answer ({answer.name})"
        )
    if answer is not grpc.StatusCode.UNAUTHENTICATED:
        env["RAY_AUTH_MODE"] = "disabled"
        return
    token, source = _token(env)
    if token is None:
        raise ClusterUnavailable(
            f"the Ray cluster at {address} asks for a token: set RAY_AUTH_TOKEN, or "
            "RAY_AUTH_TOKEN_PATH to a file holding it (`ray get-auth-token` on the head)"
        )
    if _call(host, port, _CLIENT_CALL if client else _GCS_CALL, token) is (
        grpc.StatusCode.UNAUTHENTICATED
    ):
        raise ClusterUnavailable(f"the Ray cluster at {address} refuses the token in {source}")
    env["RAY_AUTH_MODE"] = "token"


def _auto_address(env: MutableMapping[str, str]) -> str | None:
    if env.get("RAY_ADDRESS"):
        return env["RAY_ADDRESS"]
    # Where `ray start --head` notes its address: Ray's temporary folder (RAY_TMPDIR, TMPDIR).
    system_temp = env.get("RAY_TMPDIR") or env.get("TMPDIR") or tempfile.gettempdir()
    temp = Path(system_temp) / "ray" / "ray_current_cluster"
    try:
        return temp.read_text().strip() or None
    except OSError:
        return None


def _token(env: MutableMapping[str, str]) -> tuple[str | None, str]:
    """The token Ray would send, and where it comes from (Ray's own order)."""
    if env.get("RAY_AUTH_TOKEN"):
        return env["RAY_AUTH_TOKEN"].strip(), "RAY_AUTH_TOKEN"
    path = env.get("RAY_AUTH_TOKEN_PATH")
    source = Path(path) if path else Path.home() / ".ray" / "auth_token"
    try:
        return source.read_text().strip() or None, str(source)
    except OSError:
        return None, str(source)


def _wrong_port(address: str, host: str, port: int, client: bool) -> str:
    if client:
        if _call(host, port, _GCS_CALL, None) is not grpc.StatusCode.UNIMPLEMENTED:
            return (
                f"{address} is a Ray head's GCS port, not Ray Client's: join it as "
                f"{host}:{port} (on a node of the cluster), or use ray://{host}:{CLIENT_PORT}"
            )
    elif _call(host, port, _CLIENT_CALL, None) is not grpc.StatusCode.UNIMPLEMENTED:
        return f"{address} is Ray Client's port: use ray://{host}:{port}"
    return f"cannot join the Ray cluster at {address}: it answers gRPC, but not as Ray does"


def _call(host: str, port: int, method: str, token: str | None) -> grpc.StatusCode:
    """The status of one empty call (an empty message is valid for any request type)."""
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    metadata = [("authorization", f"Bearer {token}")] if token else None
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary(
            method, request_serializer=lambda b: b, response_deserializer=lambda b: b
        )
        try:
            call(b"", timeout=PROBE_TIMEOUT_S, metadata=metadata)
        except grpc.RpcError as exc:
            return exc.code()
    return grpc.StatusCode.OK


def _host_and_port(address: str) -> tuple[str, int]:
    bare = address.removeprefix("ray://")
    host, sep, port = bare.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ClusterUnavailable(
            f"--ray-address '{address}' is not HOST:PORT, ray://HOST:PORT, auto or local"
        )
    return host.strip("[]"), int(port)


def _reachable(address: str, host: str, port: int) -> None:
    """The host and port answer, and speak gRPC as a Ray head and Ray Client's server do
    (left to Ray with TLS): each within :data:`PROBE_TIMEOUT_S`."""
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise ClusterUnavailable(f"cannot reach the Ray cluster at {address}: {reason}") from None
    if not _tls() and not _speaks_grpc(host, port):
        raise ClusterUnavailable(
            f"cannot join the Ray cluster at {address}: it answers, but not as Ray does (gRPC)"
        )


def _tls() -> bool:
    return os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true")


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
