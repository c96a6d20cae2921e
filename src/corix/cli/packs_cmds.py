"""`corix packs list | show | validate`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from corix.cli.common import JsonOption, console, print_json, wrapping_table

_SHOWN_TESTS = 10

packs_app = typer.Typer(rich_markup_mode=None, help="Scenario packs.", no_args_is_help=True)


@packs_app.command("list")
def packs_list(as_json: JsonOption = False) -> None:
    """The registered scenario packs: corix's own and any plugin's."""
    from corix.scenarios import PACK_FOLDERS, expand_model_tests, resolve_pack

    packs = [resolve_pack(name) for name in PACK_FOLDERS.names()]
    if as_json:
        print_json([{"name": p.name, "version": p.version, "title": p.title} for p in packs])
        return
    table = wrapping_table("pack", "version", "title", "risk", "model tests")
    for pack in packs:
        table.add_row(
            pack.name, pack.version, pack.title, pack.risk, str(len(expand_model_tests(pack, 0)))
        )
    console.print(table)


@packs_app.command("show")
def packs_show(
    pack: Annotated[str, typer.Argument(help="A built-in pack name or a pack folder.")],
    show_all: Annotated[bool, typer.Option("--all", help="List every model test.")] = False,
    as_json: JsonOption = False,
) -> None:
    """A pack's guardrails, instructions, questionnaires, personas and scripted tests."""
    from corix.scenarios import expand_model_tests, resolve_pack

    loaded = resolve_pack(pack)
    if as_json:
        print_json(loaded.model_dump(mode="json"))
        return
    console.print(f"[bold]{loaded.title}[/] ({loaded.name} {loaded.version}) — {loaded.risk}")
    console.print(loaded.description, markup=False)
    console.print("\n[bold]prohibited[/]")
    for rule in loaded.guardrails.prohibited:
        console.print(f"  - {rule}", markup=False)
    console.print("[bold]permitted[/]")
    for rule in loaded.guardrails.permitted:
        console.print(f"  - {rule}", markup=False)
    console.print("\n[bold]instructions[/]")
    for level, text in loaded.instructions.model_dump().items():
        console.print(f"  {level}: {text}", markup=False)
    console.print("\n[bold]questionnaires[/]")
    for level in ("red_teaming", "field_testing"):
        items = getattr(loaded.questionnaires, level)
        console.print(f"  {level}: {len(items)} items", markup=False)
        for item in items:
            console.print(f"    {item.id} ({item.kind}): {item.text}", markup=False)
    personas = loaded.personas
    console.print(
        f"\n[bold]personas[/]: {len(personas.templates)} templates, "
        f"{len(personas.targets)} red-team targets, {len(personas.tasks)} field tasks"
    )
    for template in personas.templates:
        console.print(f"  {template.id}", markup=False)
    if loaded.tools:
        console.print(f"\n[bold]tools[/]: {len(loaded.tools)} (run by corix from the pack)")
        for tool in loaded.tools:
            results = f"{len(tool.results)} scripted result(s)"
            forbidden = f"; forbidden: {tool.forbidden}" if tool.forbidden else ""
            console.print(f"  {tool.name}: {tool.description} ({results}{forbidden})", markup=False)
    tests = expand_model_tests(loaded, 0)
    shown = tests if show_all else tests[:_SHOWN_TESTS]
    console.print(f"\n[bold]model tests[/]: {len(tests)}")
    for test in shown:
        console.print(f"  {test.key} [{test.probe}]: {test.turns[0]}", markup=False)
    if len(shown) < len(tests):
        console.print(f"  … and {len(tests) - len(shown)} more (--all lists them)")


@packs_app.command("validate")
def packs_validate(
    pack: Annotated[str, typer.Argument(help="A built-in pack name or a pack folder.")],
) -> None:
    """Check a pack; errors name the file, the field and the line."""
    from corix.scenarios import PACK_FOLDERS, load_pack, validate_pack

    path = Path(PACK_FOLDERS.get(pack)) if pack in PACK_FOLDERS else Path(pack)
    warnings = validate_pack(path)
    for warning in warnings:
        console.print(f"[yellow]warning:[/] {warning}")
    console.print(f"[green]{load_pack(path).name} is valid[/]")
