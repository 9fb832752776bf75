"""A lone surrogate in a question id and an option name: UTF-8 cannot carry it, a JSON escape
can. A provider may refuse the request (``invalid_request``, nothing sent) or send each text
intact and answer as asked; replacing the surrogate (``?``, U+FFFD) or dropping it, in what is
sent or in the answers, reinterprets the request, and fails."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from typing import Any

import pytest

from pytest_opdecide import conformance
from pytest_opdecide.conformance import BASE_URL, OpenAIChatBackend, RecordingTransport
from pytest_opdecide.conformance._requests import (
    PREVALIDATION_CASES,
    SURROGATE_OPTION_NAME,
    SURROGATE_QUESTION_ID,
    Limits,
)
from pytest_opdecide.questions import ProviderFactoryConfig

from .broken_providers import SendsLoneSurrogatesEscaped

PRELOADED = conformance.DecisionProviderTests

PYTEST_ARGS = ["-p", "no:cacheprovider"]
if importlib.util.find_spec("pytest_asyncio") is not None:
    PYTEST_ARGS += ["-o", "asyncio_default_fixture_loop_scope=function"]

CHECK = "test_unrepresentable_requests_are_rejected_before_sending[lone_surrogate]"

PROVIDERS = '''
import json

from conformance.broken_providers import HonestProvider, SendsLoneSurrogatesEscaped, _stand_in
from pytest_opdecide.questions import ChoiceAnswer


class Refuses(HonestProvider):
    """validate_request refuses the request."""


class Escapes(SendsLoneSurrogatesEscaped):
    """Sends the body as ASCII JSON: the surrogate goes out as the escape."""


class EscapesInThePrompt(SendsLoneSurrogatesEscaped):
    """Writes option names into the prompt as ASCII JSON: the prompt holds the six characters
    of the escape, which a model reads as JSON text."""

    def prompt(self, context, instructions, question):
        text, labels = super().prompt(context, instructions, question)
        return text.encode("ascii", "backslashreplace").decode("ascii"), labels


class AsQuestionMarks(SendsLoneSurrogatesEscaped):
    """UTF-8 with errors="replace": the surrogate goes out as ?."""

    def encoded(self, body):
        return json.dumps(body, ensure_ascii=False).encode("utf-8", "replace")


class AsReplacementCharacters(SendsLoneSurrogatesEscaped):
    """The surrogate replaced by U+FFFD before sending."""

    def encoded(self, body):
        return _stand_in(json.dumps(body, ensure_ascii=False)).encode("utf-8")


class Stripped(SendsLoneSurrogatesEscaped):
    """UTF-8 with errors="ignore": the surrogate is dropped."""

    def encoded(self, body):
        return json.dumps(body, ensure_ascii=False).encode("utf-8", "ignore")


class AnswersWithReplacedNames(SendsLoneSurrogatesEscaped):
    """Sends intact, but keys the probabilities by the option names with U+FFFD."""

    def choice_answer(self, question, probabilities):
        answer = super().choice_answer(question, probabilities)
        return ChoiceAnswer(
            choice=_stand_in(answer.choice),
            probabilities={_stand_in(k): v for k, v in answer.probabilities.items()},
        )


class AnswersWithReplacedIds(SendsLoneSurrogatesEscaped):
    """Sends intact, but keys the answers by the question ids with U+FFFD."""

    def answers(self, request, found):
        return {_stand_in(question_id): answer for question_id, answer in found.items()}


class CrashesOnIt(HonestProvider):
    """Takes the request (no validate_request) and lets httpx's UTF-8 encoding fail."""

    def check(self, request):
        return request
'''

EXPECTED: dict[str, str | None] = {
    "Refuses": None,
    "Escapes": None,
    "EscapesInThePrompt": None,
    "AsQuestionMarks": "prevalidation: 'gift\\ud83dcard' was sent altered, as 'gift?card'",
    "AsReplacementCharacters": (
        "prevalidation: 'gift\\ud83dcard' was sent altered, as 'gift\ufffdcard'"
    ),
    "Stripped": "prevalidation: 'gift\\ud83dcard' was sent altered, as 'giftcard'",
    "AnswersWithReplacedNames": "choice.selection: ",
    "AnswersWithReplacedIds": "answers.missing: ",
    "CrashesOnIt": "error.type: a request the provider cannot represent",
}
"""Each provider: ``None`` when it passes the check, else what its failure says."""


def test_the_check_tells_representing_from_reinterpreting(pytester: pytest.Pytester) -> None:
    body = "".join(
        f"\n\nclass Test{name}(DecisionProviderTests):\n    provider_factory = {name}\n"
        for name in EXPECTED
    )
    pytester.makepyfile(
        test_surrogates=PROVIDERS
        + "\nfrom pytest_opdecide.conformance import DecisionProviderTests\n"
        + body
    )
    recorder = pytester.inline_run(*PYTEST_ARGS, "-k", "lone_surrogate")
    outcomes: dict[str, tuple[str, str]] = {}
    for report in recorder.getreports("pytest_runtest_logreport"):
        if report.when == "call" or report.outcome != "passed":
            *_, class_name, check = report.nodeid.split("::")
            assert check == CHECK
            outcomes[class_name.removeprefix("Test")] = (report.outcome, report.longreprtext)
    assert set(outcomes) == set(EXPECTED)
    for name, message in EXPECTED.items():
        outcome, text = outcomes[name]
        if message is None:
            assert outcome == "passed", (name, text)
        else:
            assert outcome == "failed", name
            assert message in text, (name, text)
            assert "How to fix:" in text


def test_a_provider_that_sends_it_intact_sends_the_escape_and_answers_as_asked() -> None:
    (case,) = [case for case in PREVALIDATION_CASES if case.id == "lone_surrogate"]
    assert case.texts == (SURROGATE_QUESTION_ID, SURROGATE_OPTION_NAME)
    request = case.build(Limits(("choice", "score", "boolean"), None, 26, 10), "m")
    assert request is not None
    transport = RecordingTransport(OpenAIChatBackend())
    provider = SendsLoneSurrogatesEscaped(
        ProviderFactoryConfig(base_url=BASE_URL, transport=transport)
    )
    result = provider_result(provider, request)
    (sent,) = transport.requests
    assert b"gift\\ud83dcard" in sent.content  # the escape, in ASCII JSON
    assert SURROGATE_OPTION_NAME in json.dumps(sent.json, ensure_ascii=False)
    answer = result.choice(SURROGATE_QUESTION_ID)
    assert set(answer.probabilities) == {SURROGATE_OPTION_NAME, "card"}


def provider_result(provider: Any, request: Any) -> Any:
    return asyncio.run(provider.decide(request))
