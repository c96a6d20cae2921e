"""``corix`` as its console script runs it, in a process that sends itself one SIGTERM as
its first judge pass is handed to the writer, before that pass is committed: an operator's
``kill`` at the moment a lost pass would show.

Run as ``python -m support.terminated_cli ARGS`` (``tests`` on the path).
"""

from __future__ import annotations

import os
import signal

from corix.cli.main import main
from corix.storage import NewPass, RecordWriter

_queue_pass = RecordWriter.add_pass
_sent = False


def _add_pass_then_terminate(writer: RecordWriter, new: NewPass) -> None:
    global _sent
    _queue_pass(writer, new)
    if not _sent:
        _sent = True
        os.kill(os.getpid(), signal.SIGTERM)


if __name__ == "__main__":
    RecordWriter.add_pass = _add_pass_then_terminate  # type: ignore[method-assign,assignment]
    main()
