"""Which Ray cluster corix uses, and connecting to it quickly or failing in one line.

* Without an address (or with ``local``) corix starts a local cluster of its own,
  never the one ``RAY_ADDRESS`` or Ray's current-cluster file names: joining a cluster
  must be asked for, with ``--ray-address`` (``auto`` joins the one Ray finds).
* With an address, :func:`~corix.execution.ray_access.prepare_cluster` checks it and sets
  the token authentication it expects before Ray is asked (corix calls it before it
  imports Ray, as Ray reads ``RAY_AUTH_MODE`` then): a malformed, closed, unreachable
  address, one that answers but is no Ray or the wrong kind of Ray port, or a cluster that
  asks for a token this machine lacks, raises :class:`ClusterUnavailable` (a
  :class:`~corix.errors.CorixError`: one line, exit 2) within seconds, before a run row
  exists; so does Ray's own failure to join.
"""

from __future__ import annotations

import logging

import ray

from corix.execution.ray_access import PROBE_TIMEOUT_S, ClusterUnavailable, prepare_cluster

__all__ = ["PROBE_TIMEOUT_S", "ClusterUnavailable", "connect"]


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
    prepare_cluster(address)
    _init(address=address, **quiet)
    return True
