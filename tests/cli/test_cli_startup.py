"""The ``corix`` command starts without loading what only some commands use: the web app,
the database, the measurement. Each command imports those when it runs."""

from __future__ import annotations

import inspect
import subprocess
import sys

from cli_support import invoke

from corix.apps.check import DEFAULT_PROMPT
from corix.cli.apps_cmds import check
from corix.cli.defects_cmds import defects_command
from corix.measurement import REQUIRED_COLUMNS
from corix.measurement.core import DEFAULT_RATE_GROUPING
from corix.report import DEFAULT_TREES

HEAVY = ("fastapi", "sqlalchemy", "alembic", "aiohttp", "numpy", "corix.web.app",
         "corix.storage", "corix.measurement", "corix.assessment", "corix.report",
         "corix.execution", "corix.llm")  # fmt: skip


def test_starting_the_command_loads_none_of_the_heavy_packages() -> None:
    script = (
        "import sys, corix.cli.main\n"
        f"print(' '.join(sorted({{m.split('.')[0] if not m.startswith('corix') else m "
        f"for m in sys.modules if m.startswith({HEAVY!r})}})))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.split()
    assert loaded == []


def test_defaults_written_out_in_the_command_are_the_cores() -> None:
    """Kept as literals so that ``--help`` need not load the packages that define them."""
    prompt = inspect.signature(check).parameters["prompt"].default
    assert prompt == DEFAULT_PROMPT
    grouping = inspect.signature(defects_command).parameters["by"].default
    assert grouping == ",".join(DEFAULT_RATE_GROUPING)
    code, out, _ = invoke("report", "--help")
    assert code == 0 and f"(default: {', '.join(DEFAULT_TREES)})" in " ".join(out.split())
    code, out, _ = invoke("tree", "score", "--help")
    assert code == 0 and f"columns {', '.join(REQUIRED_COLUMNS)}[" in " ".join(out.split())
