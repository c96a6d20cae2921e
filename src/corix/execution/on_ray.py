"""What other layers need to run their own work on Ray: dispatching chunks to actors, the
cluster-wide rate-limit broker and splitting a concurrency bound between workers.

A public surface of its own, apart from :mod:`corix.execution`: it imports Ray (an optional
extra), so it is imported only where Ray runs.
"""

from corix.execution.rate_broker import RateLimitBroker, brokered_limits
from corix.execution.ray_dispatch import dispatch_chunks
from corix.execution.ray_executor import split_bound

__all__ = [
    "RateLimitBroker",
    "brokered_limits",
    "dispatch_chunks",
    "split_bound",
]
