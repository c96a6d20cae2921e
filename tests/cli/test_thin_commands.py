"""Commands stay thin: no function in ``corix.cli`` is longer than 60 lines, its signature
and decorators included (the work belongs to the layer below, called with a typed object)."""

from __future__ import annotations

from pathlib import Path

import corix.cli
from support.function_length import long_functions

CLI = Path(corix.cli.__file__).parent


def test_no_function_in_the_cli_is_over_60_lines() -> None:
    files = sorted(CLI.rglob("*.py"))
    assert len(files) > 10  # the package was found
    long = [f for path in files for f in long_functions(path.read_text(), path.name)]
    assert long == []


def test_the_scan_counts_signature_and_decorators() -> None:
    params = "".join(f"    p{i}: int = {i},\n" for i in range(58))
    source = f"@app.command()\ndef command(\n{params}) -> None:\n    pass\n"
    assert long_functions(source, "x.py") == ["x.py:2 command (62 lines)"]
    shorter = source.replace("    p57: int = 57,\n", "").replace("    p56: int = 56,\n", "")
    assert long_functions(shorter, "x.py") == []
