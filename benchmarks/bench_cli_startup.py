"""Start-up time of the ``corix`` command: ``corix --help`` and ``corix runs list``.

Each command runs ``--repeats`` times in a fresh process. With ``--compare SRC`` (the
``src`` folder of another checkout, e.g. one at an earlier commit) the two sources take
turns, so a busy machine slows both alike and the ratio is fair.

    python benchmarks/bench_cli_startup.py --repeats 10 --compare /tmp/old/src
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import corix

SOURCES = Path(corix.__file__).resolve().parents[1]
PLAN = """\
name: startup
applications:
  - {name: unguarded, spec: "demo:unguarded"}
scenarios: [tv_spoilers]
levels:
  red_teaming: {sessions: 1, max_turns: 1}
"""


def corix_once(sources: Path, *args: str) -> float:
    """Seconds one ``corix ARGS`` takes, from start to exit, with ``sources`` first."""
    env = {**os.environ, "PYTHONPATH": str(sources)}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "corix.cli.main", *args],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--compare", type=Path, help="another checkout's src folder")
    args = parser.parse_args()
    sources = {"this": SOURCES, **({"compared": args.compare} if args.compare else {})}
    with tempfile.TemporaryDirectory() as folder:
        db = f"sqlite:///{Path(folder) / 'corix.db'}"
        (Path(folder) / "plan.yaml").write_text(PLAN, encoding="utf-8")
        corix_once(SOURCES, "run", str(Path(folder) / "plan.yaml"), "--db", db)
        commands = {"--help": ("--help",), "runs list": ("runs", "list", "--db", db)}
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.repeats):
            for command, argv in commands.items():
                for name, src in sources.items():
                    times.setdefault((command, name), []).append(corix_once(src, *argv))
    for command in commands:
        medians = {name: statistics.median(times[command, name]) for name in sources}
        line = ", ".join(f"{name} {median:.2f} s" for name, median in medians.items())
        if args.compare:
            line += f" ({medians['compared'] / medians['this']:.1f}× faster)"
        print(f"corix {command}: median of {args.repeats}: {line}")


if __name__ == "__main__":
    main()
