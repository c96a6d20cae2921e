"""Dataset releases: anonymized, reviewed, documented and checksummed (``corix release``)."""

from corix.release.build import ReleaseSettings, draft_release, finalize_release, review_folder

__all__ = ["ReleaseSettings", "draft_release", "finalize_release", "review_folder"]
