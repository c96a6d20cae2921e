"""corix: a testbed that measures the risks and impacts of AI applications in context."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("corix")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0"

__all__ = ["__version__"]
