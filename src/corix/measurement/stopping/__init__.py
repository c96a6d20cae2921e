"""When a cell of a sequential run may stop (its rule, confidence sequence or width) and
what a stopped run recorded. The run in waves itself is :mod:`corix.measurement.waves`.
"""

from corix.measurement.stopping.record import SequentialRecord, sequential_records
from corix.measurement.stopping.rules import (
    StoppingRule,
    cell_progress,
    parse_until,
    stopping_horizon,
)

__all__ = [
    "SequentialRecord",
    "StoppingRule",
    "cell_progress",
    "parse_until",
    "sequential_records",
    "stopping_horizon",
]
