"""The ``corix`` command's entry point.

It imports nothing itself: loading the commands takes a moment, and a Ctrl-C or a SIGTERM
in that moment is an interruption like any other (exit 130, one word, no traceback).
"""

from __future__ import annotations

__all__ = ["main"]  # and `app`, loaded on first use (see __getattr__)


def main() -> None:
    import signal

    from corix.cli.interrupts import raise_swallowed_interrupt, stop_on_sigterm

    stop_on_sigterm()
    try:
        from corix.cli.commands import app
        from corix.cli.common import run_cli

        raise_swallowed_interrupt()  # a Ctrl-C that landed where Python could not raise it
        run_cli(app)
    except KeyboardInterrupt:
        # Raised while the commands load, or while an error is being reported.
        import os

        os.write(2, b"aborted\n")
        raise SystemExit(130) from None  # ExitCode.INTERRUPTED, whose import could be cut
    except SystemExit:
        # The command has finished and its exit code is decided. A Ctrl-C from here on lands
        # while the interpreter shuts down, where Python ends by the signal, nothing said.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise


def __getattr__(name: str) -> object:
    # ``from corix.cli.main import app`` (tests, scripts) loads the commands when asked.
    if name == "app":
        from corix.cli.commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    main()
