"""A pack's tools: declared in the manifest (errors name file, field and line), answered
from their scripted results, and hostile arguments refused without being run."""

from __future__ import annotations

import json

import pytest

from corix.domain import ToolCall
from corix.errors import ConfigError
from corix.scenarios import Toolbox, load_pack, resolve_pack

TOOLS = """
tools:
  - name: chapter_guide
    description: What happens in a chapter.
    parameters:
      type: object
      properties: {chapter: {type: integer}}
    results:
      - when: {chapter: 2}
        text: The letter arrives.
      - when: {chapter: two}
        error: Spell it as a number.
      - text: Nothing happens.
"""


def _line_of(text: str, fragment: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if fragment in line)


def _call(arguments: str, name: str = "chapter_guide") -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments)


def test_a_call_is_answered_by_the_first_result_it_matches(write_pack, mini_pack: str) -> None:
    toolbox = Toolbox.of(load_pack(write_pack(pack=mini_pack + TOOLS)))
    assert toolbox is not None
    assert toolbox.definitions()[0]["function"]["name"] == "chapter_guide"
    answers = [toolbox.run(_call(a)) for a in ('{"chapter": 2}', '{"chapter": "2.0"}', "{}")]
    assert [m.text for m in answers] == [
        "The letter arrives.",
        "The letter arrives.",
        "Nothing happens.",
    ]
    assert answers[0].tool_call_id == "c1" and answers[0].name == "chapter_guide"
    assert toolbox.run(_call('{"chapter": "TWO"}')).error == "Spell it as a number."


@pytest.mark.parametrize(
    ("arguments", "name", "error"),
    [
        ('{"chapter": 2}', "delete_all", "no tool named 'delete_all'"),
        ("[" * 10_000 + "]" * 10_000, "episode_guide", "longer than 16,384 characters"),
        ("[" * 5_000 + "]" * 5_000, "episode_guide", "not valid JSON"),  # too deep
        ('{"a": ' * 2000 + "1" + "}" * 2000, "episode_guide", "not valid JSON"),
        ('{"chapter": 2', "episode_guide", "not valid JSON"),
        ('"\\u0000\\ud800"', "episode_guide", "not a JSON object"),
    ],
)
def test_hostile_calls_get_the_error_a_tool_would_give(
    arguments: str, name: str, error: str
) -> None:
    toolbox = Toolbox.of(resolve_pack("tv_spoilers"))
    assert toolbox is not None
    result = toolbox.run(_call(arguments, name))
    assert result.error is not None and error in result.error and result.text == ""


def test_a_deeply_nested_object_is_parsed_or_refused_never_crashes() -> None:
    toolbox = Toolbox.of(resolve_pack("tv_spoilers"))
    assert toolbox is not None
    nested = json.dumps({"episode": 6, "x": [[[[[[1]]]]]]})
    assert toolbox.run(_call(nested, "episode_guide")).text.startswith("Episode 6: ")
    assert toolbox.forbidden == {"post_to_forum"}


@pytest.mark.parametrize(
    ("replace", "by", "message", "field"),
    [
        (
            "      - text: Nothing happens.\n",
            "      - {}\n",
            "either 'text' or 'error'",
            "tools.0.results.2",
        ),
        (
            "  - name: chapter_guide",
            "  - name: chapter guide!",
            "should match pattern",
            "tools.0.name",
        ),
    ],
)
def test_a_bad_tool_names_the_field_and_line(
    write_pack, mini_pack: str, replace: str, by: str, message: str, field: str
) -> None:
    text = mini_pack + TOOLS.replace(replace, by)
    with pytest.raises(ConfigError, match=message) as caught:
        load_pack(write_pack(pack=text))
    assert caught.value.field == field
    assert caught.value.line is not None and caught.value.line > _line_of(text, "tools:")


def test_tool_names_are_unique(write_pack, mini_pack: str) -> None:
    twice = mini_pack + TOOLS + TOOLS.replace("tools:\n", "")
    with pytest.raises(ConfigError, match="repeated: chapter_guide"):
        load_pack(write_pack(pack=twice))
