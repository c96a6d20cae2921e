"""corix: a testbed that measures the risks and impacts of AI applications in context."""

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # Read when asked: package metadata takes a tenth of a second to load, and every
    # ``corix`` command starts by importing this package.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("corix")
        except PackageNotFoundError:  # running from a source tree without installation
            return "0.0.0"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
