"""Running ``corix`` in this process exactly as its console script does."""

from __future__ import annotations

import io
import signal
import sys

from corix.cli.main import main


def invoke(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    """Run ``corix ARGV`` as the console script does; its exit code, stdout and stderr.

    Standard input is ``stdin``, and never a terminal."""
    saved_argv, saved_stdin = sys.argv, sys.stdin
    saved_sigterm = signal.getsignal(signal.SIGTERM)  # main() makes SIGTERM interrupt
    saved_sigint = signal.getsignal(signal.SIGINT)  # and ignores Ctrl-C once it is done
    out, err = io.StringIO(), io.StringIO()
    saved_out, saved_err = sys.stdout, sys.stderr
    sys.argv, sys.stdin, sys.stdout, sys.stderr = ["corix", *argv], io.StringIO(stdin), out, err
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0) if not isinstance(exc.code, str) else 1
    else:
        code = 0
    finally:
        sys.argv, sys.stdin, sys.stdout, sys.stderr = saved_argv, saved_stdin, saved_out, saved_err
        signal.signal(signal.SIGTERM, saved_sigterm)
        signal.signal(signal.SIGINT, saved_sigint)
    return code, out.getvalue(), err.getvalue()
