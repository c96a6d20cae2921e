"""Imports the modules that register the built-in testing levels."""

from corix.testing import model_testing
from corix.testing.simulation import levels as simulated_users

__all__ = ["model_testing", "simulated_users"]
