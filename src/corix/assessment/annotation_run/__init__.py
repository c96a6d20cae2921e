"""Annotating a stored run: the assessment layer's one part that reads and writes storage.

``annotate_run`` (``annotate_run_async`` inside an event loop) builds the registered
annotator, asks it about every complete session of a run, stores every pass as it completes
and skips what an earlier invocation stored; ``AnnotateOptions`` says what to ask and
``AnnotationSummary`` reports what happened. ``annotate`` carries out a whole
``AnnotationRequest`` (run, annotator, options, endpoint, executor, cache) here or over
Ray. The modules behind it are private.
"""

from corix.assessment.annotation_run._factory import build_annotator
from corix.assessment.annotation_run._options import AnnotateOptions, ProgressHooks
from corix.assessment.annotation_run._request import AnnotationRequest, annotate
from corix.assessment.annotation_run._runner import annotate_run, annotate_run_async
from corix.assessment.annotation_run._summary import AnnotationSummary, TargetCounts

__all__ = [
    "AnnotateOptions",
    "AnnotationRequest",
    "AnnotationSummary",
    "ProgressHooks",
    "TargetCounts",
    "annotate",
    "annotate_run",
    "annotate_run_async",
    "build_annotator",
]
