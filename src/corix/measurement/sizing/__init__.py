"""How many dialogues and labels a question needs, and what they cost: a plan's sample
sizes per cell, which dialogues people label next, and each cell's cost.
"""

from corix.measurement.sizing.cell_cost import CellCost, SourceCost, cell_costs
from corix.measurement.sizing.label_plan import BY_COLUMNS, LabelPlan, plan_labels
from corix.measurement.sizing.plan_sizing import (
    CellSize,
    SizeRequest,
    earlier_run,
    plan_with_sizes,
    size_plan,
)

__all__ = [
    "BY_COLUMNS",
    "CellCost",
    "CellSize",
    "LabelPlan",
    "SizeRequest",
    "SourceCost",
    "cell_costs",
    "earlier_run",
    "plan_labels",
    "plan_with_sizes",
    "size_plan",
]
