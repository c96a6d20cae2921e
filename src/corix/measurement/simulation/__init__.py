"""Simulated against human testers: the gap per cell, the features compared, and the
calibrated (reweighted) simulation.
"""

from corix.measurement.simulation.gap import SimulationGap, simulation_gap_per_cell

__all__ = [
    "SimulationGap",
    "simulation_gap_per_cell",
]
