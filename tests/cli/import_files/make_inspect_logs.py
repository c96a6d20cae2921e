"""Write the Inspect AI logs the import tests read, with the real inspect-ai, offline.

Run with inspect-ai installed (``pip install 'corix[inspect]'``)::

    python tests/cli/import_files/make_inspect_logs.py tests/cli/import_files

One task, three samples, the scripted ``mockllm/model`` answering:

* ``q1`` — a tool-using dialogue: a system message, a user question, a tool call
  (``lookup_episode``) with its result, an answer; then a second user turn (its content
  a list of parts) with another tool call and answer;
  scored by ``includes()``; sample metadata beyond scenario and level;
* ``q2`` — the solver raises: the sample is stored with Inspect's error;
* ``q3`` — the model calls its tool again and again until the task's message limit stops it.

It writes ``agent.eval`` and the same log as ``agent.json``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import (
    ChatMessage,
    ChatMessageTool,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, Solver, TaskState, solver, system_message, use_tools
from inspect_ai.tool import Tool, ToolChoice, ToolInfo, tool


@tool
def lookup_episode() -> Tool:
    async def execute(number: int) -> str:
        """Look up an episode's summary.

        Args:
            number: The episode's number.
        """
        return f"Episode {number}: Vera leaves the lighthouse."

    return execute


def _reply(
    messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, config: GenerateConfig
) -> ModelOutput:
    """The scripted model: looks an episode up once, then answers; ``loop`` never stops."""
    last = messages[-1]
    looping = any("keep looking" in m.text for m in messages if isinstance(m, ChatMessageUser))
    if isinstance(last, ChatMessageUser) or (looping and isinstance(last, ChatMessageTool)):
        output = ModelOutput.for_tool_call("mockllm/model", "lookup_episode", {"number": 5})
    else:
        output = ModelOutput.from_content("mockllm/model", "No spoilers: Vera's story goes on.")
    output.usage = ModelUsage(input_tokens=40, output_tokens=12, total_tokens=52)
    return output


@solver
def second_turn() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.metadata.get("explode"):
            raise RuntimeError("the lighthouse index is unavailable")
        state = await generate(state)
        if state.completed:
            return state
        state.messages.append(ChatMessageUser(content=[ContentText(text="And episode 6?")]))
        return await generate(state)

    return solve


@task
def agent() -> Task:
    context: dict[str, Any] = {"scenario": "tv_spoilers", "level": "model_testing"}
    return Task(
        dataset=[
            Sample(
                id="q1",
                input="Who leaves in episode 5?",
                target="Vera",
                metadata={**context, "difficulty": "hard", "tags": ["spoiler", "tool"]},
            ),
            Sample(id="q2", input="Who dies?", target="", metadata={**context, "explode": True}),
            Sample(
                id="q3", input="Summarize episode 5, keep looking.", target="", metadata=context
            ),
        ],
        solver=[
            system_message("Never spoil an episode."),
            use_tools(lookup_episode()),
            second_turn(),
        ],
        scorer=includes(),
        message_limit=12,
    )


def main(folder: Path) -> None:
    model = get_model("mockllm/model", custom_outputs=_reply)
    (log,) = eval(agent(), model=model, log_dir=str(folder / "raw"), fail_on_error=False)
    full = read_eval_log(log.location)
    write_eval_log(full, str(folder / "agent.eval"))
    write_eval_log(full, str(folder / "agent.json"))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
