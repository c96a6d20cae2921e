"""Imports the modules that register the built-in testing levels."""

from corix.testing import model_testing

__all__ = ["model_testing"]
