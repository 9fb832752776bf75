"""The public surface of ``fake_runtimes``, pinned: a name added or removed is a deliberate act."""

from __future__ import annotations

import subprocess
import sys

import fake_runtimes

EXPECTED = [
    "CONTEXT_KINDS",
    "AnswerMismatch",
    "ErrorStep",
    "FakeCall",
    "FakeDecisionProvider",
    "FakeError",
    "FakeRuntime",
    "FunctionRuntime",
    "InvalidReply",
    "Pick",
    "ScriptExhausted",
    "ScriptMismatch",
    "ScriptedAnswer",
    "ScriptedRuntime",
    "SeededRuntime",
    "ToolCallStep",
    "UnusedSteps",
    "choose",
    "error",
    "every_option",
    "every_tool_call",
    "fails",
    "fake_context",
    "hangs",
    "invalid_replies",
    "pick",
    "probability",
    "score",
    "times_out",
    "tool_call",
]


def test_exported_names() -> None:
    assert fake_runtimes.__all__ == EXPECTED


def test_all_is_sorted() -> None:
    # The order ruff's RUF022 keeps: constants, then classes, then functions, each alphabetical.
    def key(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert fake_runtimes.__all__ == sorted(fake_runtimes.__all__, key=key)


def test_every_exported_name_exists() -> None:
    for name in fake_runtimes.__all__:
        assert hasattr(fake_runtimes, name), name


def test_no_other_public_name_leaks() -> None:
    public = {
        name
        for name in dir(fake_runtimes)
        if not name.startswith("_")
        and not isinstance(getattr(fake_runtimes, name), type(fake_runtimes))
    }
    assert public == set(EXPECTED)


def test_the_failures_are_assertion_errors() -> None:
    for name in ["AnswerMismatch", "FakeError", "ScriptExhausted", "ScriptMismatch", "UnusedSteps"]:
        assert issubclass(getattr(fake_runtimes, name), AssertionError), name


def test_the_package_is_typed() -> None:
    from importlib.resources import files

    assert files("fake_runtimes").joinpath("py.typed").is_file()


def test_a_scripted_test_loads_nothing_of_the_question_side() -> None:
    # Every pytest process (each xdist worker) that scripts a runtime imports the fakes: the
    # question fakes, their provider and httpx load only with the first one asked for.
    probe = (
        "import sys, fake_runtimes\n"
        "from pytest_opdecide import decision\n"
        "runtime = fake_runtimes.ScriptedRuntime(fake_runtimes.pick('a'))\n"
        "assert decision.make('Go.', {'a': 1}, runtime=runtime) == 1\n"
        "assert 'pytest_opdecide.questions' not in sys.modules, 'loaded too early'\n"
        "assert 'httpx' not in sys.modules, 'loaded too early'\n"
        "assert fake_runtimes.choose('x').option == 'x'\n"
        "assert 'pytest_opdecide.questions' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=60)
