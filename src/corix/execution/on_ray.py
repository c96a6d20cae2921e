"""What other layers need to run their own work on Ray: dispatching chunks to actors, the
cluster-wide rate-limit broker, splitting a concurrency bound between workers and
connecting to the cluster.

A public surface of its own, apart from :mod:`corix.execution`: it imports Ray (an optional
extra), so it is imported only where Ray runs.
"""

from corix.execution.rate_broker import RateLimitBroker, brokered_limits
from corix.execution.ray_cluster import ClusterUnavailable, connect
from corix.execution.ray_dispatch import close_workers, dispatch_chunks, open_workers
from corix.execution.ray_executor import (
    BROKER_CPUS,
    WORKER_CONNECTION_NAME,
    split_bound,
    worker_cpus,
    worker_pool,
)

__all__ = [
    "BROKER_CPUS",
    "WORKER_CONNECTION_NAME",
    "ClusterUnavailable",
    "RateLimitBroker",
    "brokered_limits",
    "close_workers",
    "connect",
    "dispatch_chunks",
    "open_workers",
    "split_bound",
    "worker_cpus",
    "worker_pool",
]
