"""Shell completion: the script to install, and the completions it asks corix for."""

from __future__ import annotations

import pytest
from cli_support import invoke


def test_the_completion_script_is_offered() -> None:
    code, out, _ = invoke("--help")
    assert code == 0 and "--install-completion" in out and "--show-completion" in out
    code, out, _ = invoke("--show-completion", "bash")
    assert code == 0 and "_corix_completion" in out and "_CORIX_COMPLETE" in out


@pytest.mark.parametrize(
    ("words", "expected"),
    [("corix ru", ["run", "runs"]), ("corix runs co", ["compare"]), ("corix ini", ["init"])],
)
def test_bash_completes_commands(
    words: str, expected: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("_CORIX_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", str(len(words.split()) - 1))
    code, out, _ = invoke()
    assert code == 0
    assert out.split() == expected
