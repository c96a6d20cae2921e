"""Dataset releases: anonymized, reviewed, documented and checksummed (``corix release``)."""

from corix.release.build import (
    REVIEW_FILE,
    ReleaseSettings,
    draft_release,
    finalize_release,
    review_folder,
)

__all__ = [
    "REVIEW_FILE",
    "ReleaseSettings",
    "draft_release",
    "finalize_release",
    "review_folder",
]
