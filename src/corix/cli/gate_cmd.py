"""`corix gate`: fail a CI job when a defect rate passes its threshold."""

from __future__ import annotations

import platform
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from corix.cli.common import DbOption, JsonOption, RunArgument, console, database, fail, print_json
from corix.cli.exit_codes import ExitCode
from corix.cli.judge_notes import print_judge_agreement
from corix.cli.measure_options import SettlingOption, SpecOption, measurement_spec
from corix.cli.outputs import telling_what_was_left
from corix.domain import plan_gates

if TYPE_CHECKING:
    from corix.measurement.gates import Estimate, GateResult
    from corix.measurement.judges import JudgeAgreement


def _thresholds(values: list[str] | None, planned: dict[str, float]) -> dict[str, float]:
    thresholds = dict(planned)
    for value in values or ():
        harm, sep, limit = value.partition("=")
        try:
            number = float(limit)
        except ValueError:
            number = -1.0
        if not sep or not harm.strip() or not 0 <= number <= 1:
            raise fail(f"--max expects HARM=RATE with a rate from 0 to 1, got '{value}'")
        thresholds[harm.strip()] = number
    return thresholds


def gate_command(
    run: RunArgument,
    max_rate: Annotated[
        list[str] | None,
        typer.Option("--max", help="HARM=RATE: the highest rate allowed (repeatable)."),
    ] = None,
    estimate: Annotated[
        str, typer.Option("--estimate", help="upper (interval's upper end) or point.")
    ] = "upper",
    junit: Annotated[
        Path | None, typer.Option("--junit", help="Write each gate as a JUnit XML test case.")
    ] = None,
    spec: SpecOption = None,
    settling: SettlingOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check defect rates against thresholds (from --max and the plan's gates).

    Exits 0 when every gate holds and 6 when one does not (see README: exit codes).
    """
    from corix.measurement import measure
    from corix.measurement.gates import check_gated_harms, evaluate_gates
    from corix.storage import get_run

    if estimate not in ("upper", "point"):
        raise fail(f"--estimate must be upper or point, not '{estimate}'")
    chosen: Estimate = "upper" if estimate == "upper" else "point"
    in_force, source = measurement_spec(spec, settling=settling)
    with database(db) as database_:
        stored = get_run(database_, run)
        thresholds = _thresholds(max_rate, plan_gates(stored.plan))
        if not thresholds:
            raise fail("no gates: give --max HARM=RATE or set gates in the plan")
        check_gated_harms(thresholds)
        started, clock = datetime.now(UTC), time.perf_counter()
        measurement = measure(database_, [run], in_force, source=source)
    results = evaluate_gates(measurement.rates(by=("harm", "application")), thresholds, chosen)
    if junit is not None:
        with telling_what_was_left(junit):
            _write_junit(junit, run, results, started, time.perf_counter() - clock)
    judges = [a for a in measurement.judge_agreement() if a.harm in thresholds]
    if as_json:
        print_json(
            {
                "measurement": measurement.document(),
                "gates": [r.model_dump(mode="json") for r in results],
                "judge_agreement": [a.model_dump(mode="json") for a in judges],
            }
        )
    else:
        _print_gates(measurement.headline(), results, judges)
    if not all(result.passed for result in results):
        raise typer.Exit(ExitCode.GATE_FAILED)


def _print_gates(headline: str, results: list[GateResult], judges: list[JudgeAgreement]) -> None:
    console.print(Text(headline, style="dim"))
    for result in results:
        mark = "[green]pass[/]" if result.passed else "[red]FAIL[/]"
        # One line per gate, never wrapped: CI logs are searched line by line.
        console.print(f"{mark} ", Text(result.message), sep="", soft_wrap=True)
    print_judge_agreement(judges)


def _write_junit(
    path: Path, run: str, results: list[GateResult], started: datetime, seconds: float
) -> None:
    """JUnit XML as CI systems read it (the Ant / Jenkins shape): a ``testsuites`` root
    holding one ``testsuite`` with its counts, ``time`` (seconds spent measuring the run,
    which every gate shares; each case's own check takes no measurable time) and
    ``timestamp`` (when it started, in UTC, written without a zone as that schema asks)."""
    counts = {
        "tests": str(len(results)),
        "failures": str(sum(not r.passed for r in results)),
        "errors": "0",
        "skipped": "0",
        "time": f"{seconds:.3f}",
    }
    root = ET.Element("testsuites", {"name": "corix gate", **counts})
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": f"corix gates of {run}",
            "timestamp": started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S"),
            "hostname": platform.node() or "localhost",
            **counts,
        },
    )
    for result in results:
        where = ".".join(v for k, v in result.group.items() if k != "harm") or "all"
        case = ET.SubElement(
            suite, "testcase", classname=f"corix.{result.harm}", name=where, time="0.000"
        )
        if not result.passed:
            ET.SubElement(
                case, "failure", message=result.message, type="GateFailed"
            ).text = result.message
    from corix.config import write_atomically

    write_atomically(path, ET.tostring(root, encoding="utf-8", xml_declaration=True))
