"""`corix report RUN` and `corix tree …`: the measurement layer from the command line."""

from __future__ import annotations

import csv
import errno
import os
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypedDict

import typer
from rich.markup import escape
from rich.text import Text
from rich.tree import Tree

from corix.cli.common import (
    DbOption,
    JsonOption,
    console,
    database,
    err_console,
    fail,
    print_json,
)
from corix.cli.measure_options import (
    AnnotatorsOption,
    DeltaOption,
    GroupByOption,
    KindsOption,
    SeriesOption,
    SettlingOption,
    SpecOption,
    measurement_spec,
)
from corix.cli.outputs import telling_what_was_left
from corix.cli.progress import progress_for

if TYPE_CHECKING:
    from corix.measurement import LeafFilter, NodeDocument, TreeSpec
    from corix.report import ReportPaths, ReportSettings
    from corix.storage import Database


tree_app = typer.Typer(
    rich_markup_mode=None, help="CoRIx trees: show them, score leaves, export a run's leaves."
)

TreeOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tree",
        help="A shipped tree (aria_pilot, ai_rmf) or a tree YAML file; repeat for several "
        "(default: aria_pilot, ai_rmf).",
    ),
]
BootstrapOption = Annotated[
    int, typer.Option("--bootstrap", min=0, help="Bootstrap replicates (0: no intervals).")
]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")]


# The options that make a report's settings, which ``--settings-of`` takes from a stored one.
REPORTS_ROOT = Path(".corix/reports")
"""Where reports go by default, one folder per run or series, always under it."""
_SETTING_PARAMETERS = (
    "delta",
    "tree",
    "bootstrap",
    "seed",
    "transcripts",
    "compare_runs",
    "spec",
    "settling",
    "group_annotators_by",
    "annotator",
    "kind",
    "hit_k",
)


ReportOutOption = Annotated[
    Path | None,
    typer.Option("--out", help="Folder for the report (default: .corix/reports/RUN)."),
]
TranscriptsOption = Annotated[
    int,
    typer.Option(
        "--transcripts",
        min=0,
        help="Transcripts embedded per application × level × scenario.",
    ),
]
CompareRunsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--compare-runs",
        help="Runs to compare over time (repeat; default: earlier runs in this database "
        "that share an application).",
    ),
]
HitKOption = Annotated[
    int | None,
    typer.Option(
        "--hit-k",
        min=1,
        help="Also report hit@k: the chance that one of k attempts of a persona template "
        "succeeds, beside the pooled rate.",
    ),
]
SettingsOfOption = Annotated[
    str | None,
    typer.Option(
        "--settings-of",
        help="Write again with the settings of a report written before: its settings "
        "digest as `corix runs show` lists it (a prefix will do), or 'latest'. It takes "
        "every setting, so give no other.",
    ),
]


def report_command(
    ctx: typer.Context,
    run: Annotated[str | None, typer.Argument(help="Run id (or --series NAME).")] = None,
    series: SeriesOption = None,
    out: ReportOutOption = None,
    tree: TreeOption = None,
    bootstrap: BootstrapOption = 1000,
    seed: SeedOption = 0,
    transcripts: TranscriptsOption = 20,
    compare_runs: CompareRunsOption = None,
    spec: SpecOption = None,
    settling: SettlingOption = None,
    group_annotators_by: GroupByOption = None,
    annotator: AnnotatorsOption = None,
    kind: KindsOption = None,
    hit_k: HitKOption = None,
    delta: DeltaOption = 0.10,
    settings_of: SettingsOfOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write a run's (or a series') CoRIx report: self-contained HTML, Markdown and JSON."""
    from corix.report import reused_settings, safe_folder, stored_report

    if (run is None) == (series is None):
        raise fail("give a run id or --series NAME (one of them)")
    target = run if run is not None else f"series-{series}"
    folder = out if out is not None else safe_folder(REPORTS_ROOT, target)
    if settings_of is not None:
        given = [
            f"--{name.replace('_', '-')}"
            for name in _SETTING_PARAMETERS
            if _given_on_command_line(ctx, name)
        ]
        if given:
            raise fail(
                f"--settings-of takes every setting from a stored report: drop {', '.join(given)}"
            )
        with database(db) as database_:
            reused = reused_settings(stored_report(database_, run, series, settings_of))
            paths = _write(database_, run, series, folder, reused)
    else:
        settings = _settings_from_flags(ctx.params)  # every flag above, by parameter name
        with database(db) as database_:
            paths = _write(database_, run, series, folder, settings)
    if as_json:
        written = {"html": paths.html, "markdown": paths.markdown, "json": paths.json}
        print_json({"id": target, **{k: str(v.resolve()) for k, v in written.items()}})
        return
    # Soft wrap: a path must stay on one line to be copied or clicked.
    console.print(f"report: [bold]{paths.html.resolve()}[/]", soft_wrap=True)
    console.print(f"markdown: {paths.markdown.resolve()}", soft_wrap=True)
    console.print(f"json: {paths.json.resolve()}", soft_wrap=True)


def _settings_from_flags(flags: Mapping[str, Any]) -> ReportSettings:
    from corix.report import DEFAULT_TREES, ReportSettings

    in_force, source = measurement_spec(
        flags["spec"],
        settling=flags["settling"],
        group_by=flags["group_annotators_by"],
        annotators=flags["annotator"],
        kinds=flags["kind"],
    )
    compare_runs = flags["compare_runs"]
    return ReportSettings(
        trees=tuple(flags["tree"]) if flags["tree"] else DEFAULT_TREES,
        bootstrap=flags["bootstrap"],
        seed=flags["seed"],
        transcripts_per_group=flags["transcripts"],
        compare_runs=tuple(compare_runs) if compare_runs is not None else None,
        measurement=in_force,
        measurement_source=source,
        hit_k=flags["hit_k"],
        simulation_delta=flags["delta"],
    )


def _given_on_command_line(ctx: typer.Context, name: str) -> bool:
    # By name: typer may bring its own copy of click, whose enum is not ``click``'s.
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def _write(
    db: Database, run: str | None, series: str | None, out: Path, settings: ReportSettings
) -> ReportPaths:
    from corix.report import write_report_with

    if out.exists() and not out.is_dir():  # said before the work, not after it
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(out))
    with (
        telling_what_was_left(out),
        closing(progress_for("report parts")) as tracker,
    ):
        return write_report_with(db, run or "", out, settings, series=series, progress=tracker)


@tree_app.command("score")
def tree_score(
    tree: Annotated[str, typer.Option("--tree", help="Tree YAML file or shipped tree name.")],
    leaves: Annotated[
        Path,
        typer.Option(
            "--leaves",
            help="CSV file with the columns application, level, source, question, "
            "dialogue_id, value[,scenario][,annotator].",
        ),
    ],
    bootstrap: BootstrapOption = 0,
    seed: SeedOption = 0,
    confidence: Annotated[
        float, typer.Option("--confidence", min=0.0, max=1.0, help="Interval coverage.")
    ] = 0.95,
    per_annotator_kind: Annotated[
        bool,
        typer.Option(
            "--per-annotator-kind",
            help="One tree per annotator kind (the 'kind' of an annotator column 'kind:name'), "
            "each with every questionnaire answer; kinds are never pooled.",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Score a tree on leaves: one tree of values per application."""
    from corix.measurement import score_tree_cli_json

    result = score_tree_cli_json(
        tree,
        leaves,
        bootstrap,
        seed=seed,
        confidence=confidence,
        per_annotator_kind=per_annotator_kind,
    )
    if as_json:
        print_json(result.model_dump(mode="json"))
        return
    for warning in result.warnings:
        err_console.print(Text(f"warning: {warning}", style="yellow"), soft_wrap=True)
    for kind, applications in (result.annotator_kinds or {}).items():
        for application, root in applications.items():
            console.print(_scored_tree(f"{application} · {kind} annotators", root))
    pooled = result.pooled_annotator_kinds or []
    if len(pooled) > 1:
        console.print(
            f"[yellow]labels of {', '.join(map(escape, pooled))} annotators share each node; "
            "--per-annotator-kind scores one tree per kind[/]"
        )
    for application, root in (result.applications or {}).items():
        console.print(_scored_tree(application, root))


@tree_app.command("show")
def tree_show(
    tree: Annotated[str, typer.Argument(help="Shipped tree name or tree YAML file.")],
    as_json: JsonOption = False,
) -> None:
    """A tree's nodes as scored: summarizers, filters, questions and weights."""
    from corix.measurement import load_tree

    spec = load_tree(tree)
    if as_json:
        print_json(_spec_json(spec))
        return
    console.print(_spec_tree(spec))


@tree_app.command("leaves")
def tree_leaves(
    run: Annotated[str, typer.Argument(help="Run id.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="CSV file to write.")],
    spec: SpecOption = None,
    settling: SettlingOption = None,
    annotator: AnnotatorsOption = None,
    kind: KindsOption = None,
    db: DbOption = None,
) -> None:
    """Export a run's settled labels and questionnaire answers as a leaves CSV, ready for
    `corix tree score`; the measurement specification in force is printed first."""
    from corix.config import atomic_open
    from corix.measurement import REQUIRED_COLUMNS, measure, stored_answers
    from corix.storage import get_run

    in_force, source = measurement_spec(spec, settling=settling, annotators=annotator, kinds=kind)
    count = 0
    with (
        telling_what_was_left(output),
        database(db) as database_,
        atomic_open(output, newline="", encoding="utf-8") as handle,
    ):
        get_run(database_, run)
        measurement = measure(database_, [run], in_force, source=source)
        console.print(Text(measurement.headline(), style="dim"))
        writer = csv.writer(handle)
        writer.writerow([*REQUIRED_COLUMNS, "scenario", "annotator", "dialogue_key", "tester"])
        for answer in stored_answers(measurement, database_):
            writer.writerow(
                [
                    answer.application,
                    answer.level,
                    answer.source.value,
                    answer.question,
                    answer.session_id,
                    answer.value,
                    answer.scenario,
                    answer.respondent,
                    answer.work_key or "",
                    answer.tester,
                ]
            )
            count += 1
    console.print(f"wrote {count} leaves to {output}", soft_wrap=True)


def _scored_tree(application: str, root: NodeDocument) -> Tree:
    tree = Tree(f"[bold]{escape(application)}[/]")
    _add_scored(tree, root)
    return tree


def _add_scored(parent: Tree, node: NodeDocument) -> None:
    from corix.report import interval, node_notes, number

    value = node.value
    if isinstance(value, list):
        shown = "[dim]aggregation[/]"
    elif value is None:
        shown = "[dim]— empty[/]"
    else:
        bounds = interval(node.ci_low, node.ci_high)
        shown = f"[bold]{number(value, 2)}[/] {bounds}".rstrip()
    notes = node_notes(
        testers=node.testers,
        warning=node.warning,
        bias=node.bias,
        bias_corrected=node.bias_corrected,
    )
    label = f"{escape(node.id)} [dim]{escape(node.summarizer)}[/]: {shown}  n={node.n}"
    if notes:
        label += f"  [dim]{escape(notes)}[/]"
    branch = parent.add(label)
    for child in node.children:
        _add_scored(branch, child)


class _SpecNode(TypedDict):
    id: str
    label: str
    summarizer: str
    question: str | None
    filter: dict[str, str]
    children: list[str]
    weights: list[float]


class _SpecJson(TypedDict):
    id: str
    title: str
    description: str
    scale: list[float]
    root: str
    nodes: list[_SpecNode]


def _spec_json(spec: TreeSpec) -> _SpecJson:
    """The tree as data: its nodes children first, root last, each naming its children."""
    from corix.measurement import FILTER_COLUMNS, LeafFilter

    everything = LeafFilter()
    nodes: list[_SpecNode] = []
    for node in spec.nodes:
        restricted = [c for c in FILTER_COLUMNS if node.filter.allowed(c) != everything.allowed(c)]
        nodes.append(
            {
                "id": node.id,
                "label": node.label,
                "summarizer": node.summarizer_name,
                "question": node.question,
                "filter": {c: node.filter.describe(c) for c in restricted},
                "children": [spec.nodes[child].id for child in node.children],
                "weights": list(node.weights),
            }
        )
    return {
        "id": spec.name,
        "title": spec.title,
        "description": spec.description,
        "scale": [spec.scale.low, spec.scale.high],
        "root": spec.root.id,
        "nodes": nodes,
    }


def _spec_tree(spec: TreeSpec) -> Tree:
    from corix.measurement import LeafFilter

    title = f"[bold]{escape(spec.title)}[/] ({escape(spec.name)})"
    tree = Tree(f"{title}, scale {spec.scale.low:g}–{spec.scale.high:g}")
    _add_spec(tree, spec, len(spec.nodes) - 1, set(), 1.0, LeafFilter())
    return tree


def _add_spec(
    parent: Tree,
    spec: TreeSpec,
    position: int,
    shown: set[int],
    weight: float,
    inherited: LeafFilter,
) -> None:
    from corix.measurement import FILTER_COLUMNS

    node = spec.nodes[position]
    facts = [node.summarizer_name]
    if node.question:
        gated = spec.questions[node.question].gated
        facts.append(f"question {node.question}" + (" (gated)" if gated else ""))
    # Only what this node narrows: its parent's line shows the rest.
    restricted = [c for c in FILTER_COLUMNS if node.filter.allowed(c) != inherited.allowed(c)]
    if restricted:
        facts.append("where " + ", ".join(f"{c}={node.filter.describe(c)}" for c in restricted))
    if weight != 1:
        facts.append(f"weight {weight:g}")
    repeated = position in shown
    suffix = " (shown above)" if repeated else ""
    branch = parent.add(f"{escape(node.id)} [dim]{escape(' · '.join(facts))}{suffix}[/]")
    if repeated:
        return
    shown.add(position)
    for child, child_weight in zip(node.children, node.weights, strict=True):
        _add_spec(branch, spec, child, shown, child_weight, node.filter)
