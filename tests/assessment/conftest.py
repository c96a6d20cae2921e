"""Fixtures for the annotator tests (dialogues and stored runs are in ``annotator_support``)."""

from __future__ import annotations

import pytest

from corix.assessment import load_builtin_schema
from corix.assessment.schema import AnnotationSchema


@pytest.fixture(scope="session")
def schema() -> AnnotationSchema:
    return load_builtin_schema()
