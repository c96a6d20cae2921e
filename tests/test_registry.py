import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from corix.apps.specs import ADAPTERS
from corix.errors import CorixError, UnknownNameError, closest_name
from corix.extension_points import EXTENSION_POINTS
from corix.registry import BUILTIN_PLUGINS, Plugin, Registry, namespace_of, refresh_plugins

SRC = Path(__file__).resolve().parents[1] / "src"


def test_register_and_get() -> None:
    registry: Registry[int] = Registry("number")
    registry.add("one", 1)
    assert registry.get("one") == 1
    assert "one" in registry and registry.names() == ["one"] and list(registry) == ["one"]


def test_unknown_name_suggests_the_closest_and_lists_known() -> None:
    registry: Registry[int] = Registry("summarizer")
    registry.add("median", 1)
    registry.add("maximum", 2)
    with pytest.raises(UnknownNameError) as info:
        registry.get("medain")
    message = str(info.value)
    assert "Did you mean 'median'?" in message
    assert "Known: maximum, median." in message


def test_a_plugin_name_given_without_its_namespace_is_suggested() -> None:
    known = ["acme_judges.strict", "llm", "reference"]
    assert closest_name("strict", known) == "acme_judges.strict"
    assert closest_name("refrence", known) == "reference"
    assert closest_name("zzz", known) is None


def test_registering_another_item_under_a_taken_name_fails() -> None:
    registry: Registry[int] = Registry("number")
    registry.add("one", 1)
    with pytest.raises(ValueError, match="already registered"):
        registry.add("one", 2)


def test_names_are_namespaced_by_distribution_except_corix_own() -> None:
    assert namespace_of("corix") == ""
    assert namespace_of("Acme-Judges") == "acme_judges"
    registry: Registry[int] = Registry("number")
    Plugin("corix").add(registry, "one", 1)
    Plugin("acme.numbers").add(registry, "one", 2)
    assert registry.names() == ["acme_numbers.one", "one"]


def test_a_scope_drops_what_was_added_inside_it() -> None:
    with ADAPTERS.scope():
        ADAPTERS.add("scoped", lambda spec: None)  # type: ignore[arg-type,return-value]
        assert "scoped" in ADAPTERS
    assert "scoped" not in ADAPTERS and "demo" in ADAPTERS


def test_plugins_register_through_the_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A third-party distribution installed on sys.path adds an adapter kind under its name;
    listing, ``in`` and lookup all see it."""
    (tmp_path / "corix_plugin_example.py").write_text(
        "from corix.apps.specs import ADAPTERS\n"
        "def register(plugin):\n"
        "    plugin.add(ADAPTERS, 'example', lambda spec: None)\n",
        encoding="utf-8",
    )
    dist_info = tmp_path / "corix_plugin_example-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: corix-plugin-example\nVersion: 1.0\n", encoding="utf-8"
    )
    (dist_info / "entry_points.txt").write_text(
        "[corix.plugins]\nexample = corix_plugin_example:register\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with ADAPTERS.scope():
        assert "corix_plugin_example.example" not in ADAPTERS.names()
        refresh_plugins()  # a process picks up a distribution installed while it runs
        assert "corix_plugin_example.example" in ADAPTERS.names()
        assert "corix_plugin_example.example" in ADAPTERS
        assert "example" not in ADAPTERS  # never in corix's own namespace
        with pytest.raises(UnknownNameError) as info:
            ADAPTERS.get("example")
        assert "Did you mean 'corix_plugin_example.example'?" in str(info.value)


def test_a_broken_plugin_is_named_in_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "corix_plugin_broken.py").write_text(
        "def register(plugin):\n    raise RuntimeError('no config')\n", encoding="utf-8"
    )
    dist_info = tmp_path / "corix_plugin_broken-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: corix-plugin-broken\nVersion: 1.0\n", encoding="utf-8"
    )
    (dist_info / "entry_points.txt").write_text(
        "[corix.plugins]\nbroken = corix_plugin_broken:register\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(CorixError, match="plugin 'broken' of corix-plugin-broken") as info:
        refresh_plugins()
    assert "RuntimeError: no config" in str(info.value)


def test_loading_every_plugin_leaves_the_statistics_libraries_unimported() -> None:
    # A run loads the registries before its first model call; scipy and scikit-learn
    # cost seconds to import and a run never uses them, so they load where used.
    probe = (
        "import sys; from corix.registry import load_plugins; load_plugins(); "
        "print(sorted({'scipy', 'sklearn', 'pyarrow', 'plotly'} & set(sys.modules)))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert shown.strip() == "[]"


RUN_REGISTRIES = """
import sys
from corix.apps import ADAPTERS
from corix.execution import LEVEL_PLANNERS, WORK_HANDLERS
from corix.levels import STRATEGIES, STYLES
from corix.scenarios import PACK_FOLDERS
for registry in (ADAPTERS, LEVEL_PLANNERS, WORK_HANDLERS, STRATEGIES, STYLES, PACK_FOLDERS):
    assert registry.names(), registry.kind
heavy = {'numpy', 'krippendorff', 'alembic', 'corix.measurement', 'corix.assessment'}
print(sorted(heavy & set(sys.modules)))
"""


def test_the_registries_a_run_reads_leave_numpy_and_the_measurement_unimported() -> None:
    """A registry read imports only the module that registers corix's own of its kind: a
    run reads no summarizer or annotator, so NumPy and krippendorff stay out of it."""
    shown = subprocess.run(
        [sys.executable, "-c", RUN_REGISTRIES], capture_output=True, text=True, check=True
    ).stdout
    assert shown.strip() == "[]"


COLD_START_READERS = """
import threading
from corix.scenarios import PACK_FOLDERS
barrier = threading.Barrier(50)
failures = []
def read():
    barrier.wait()
    try:
        PACK_FOLDERS.get("tv_spoilers")
    except Exception as exc:
        failures.append(repr(exc))
threads = [threading.Thread(target=read) for _ in range(50)]
for t in threads: t.start()
for t in threads: t.join()
print(len(failures), failures[:1])
"""


def test_fifty_threads_reading_a_cold_registry_all_see_it_filled() -> None:
    """The first reads of a fresh process race the loading: none may see it half-filled."""
    done = subprocess.run(
        [sys.executable, "-c", COLD_START_READERS], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("0 "), done.stdout + done.stderr


NO_METADATA = """
import importlib.metadata, json
importlib.metadata.entry_points = lambda **kwargs: ()  # as in a checkout never installed
from corix import registry
from corix.extension_points import EXTENSION_POINTS
assert registry.entry_points is importlib.metadata.entry_points
found = {}
for point in EXTENSION_POINTS:
    found[point.name] = point.registry.names()
    for name in found[point.name]:
        point.registry.get(name)
print(json.dumps(found))
"""


def test_corix_own_components_register_without_installed_metadata() -> None:
    """Built-ins are registered by code, not entry points: with no distribution metadata at
    all, every registry lists and looks up corix's own components."""
    done = subprocess.run(
        [sys.executable, "-c", NO_METADATA], capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout)
    assert {"demo", "openai", "http", "python"} <= set(found["ADAPTERS"])
    assert found["LEVEL_PLANNERS"] == ["field_testing", "model_testing", "red_teaming"]
    assert len(found["WORK_HANDLERS"]) == 2
    assert {"reference", "llm"} <= set(found["ANNOTATORS"])
    assert {"majority", "conservative"} <= set(found["SETTLING_RULES"])
    assert {"mean", "max"} <= set(found["SUMMARIZERS"])
    assert "tv_spoilers" in found["PACK_FOLDERS"]
    assert found["STRATEGIES"] and found["STYLES"]


def _registries_defined_in_src() -> set[tuple[str, str]]:
    """(name, module) of every module-level ``NAME = Registry(...)``, annotated or not."""
    found = set()
    for path in (SRC / "corix").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "Registry(" not in text:
            continue
        module = ".".join(path.relative_to(SRC).with_suffix("").parts)
        for node in ast.parse(text).body:
            targets = (
                node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            )
            value = getattr(node, "value", None)
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "Registry"
            ):
                found.update((t.id, module) for t in targets if isinstance(t, ast.Name))
    return found


def test_every_registry_is_listed_as_an_extension_point() -> None:
    defined = _registries_defined_in_src()
    listed = {(point.name, point.registry) for point in EXTENSION_POINTS}
    assert len(defined) == len(listed) == len(EXTENSION_POINTS)
    for name, module in defined:
        registry = getattr(sys.modules[module], name)
        assert (name, registry) in listed, f"{module}.{name} is missing from corix.extension_points"
    for point in EXTENSION_POINTS:  # each is exported where the list says
        assert getattr(sys.modules[point.package], point.name) is point.registry
    assert {point.builtins for point in EXTENSION_POINTS} == set(BUILTIN_PLUGINS)
