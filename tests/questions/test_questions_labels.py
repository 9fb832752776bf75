"""How the token-probability provider makes the model's first token a label.

Worked examples before the question, the answer instruction at its end, and ``logit_bias`` on
the label tokens, whose ids come from ``label_token_ids``, a tokenizer function or the server's
tokenize endpoint.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from _questions_support import (
    BASE_URL,
    Backend,
    logprobs_reply,
    lp,
    make_request,
    prompt_of,
)

from pytest_opdecide.questions import (
    BooleanQuestion,
    ChoiceQuestion,
    OpenAICompatibleDecisionProvider,
    ProviderError,
    ScoreQuestion,
)
from pytest_opdecide.questions._prompt import (
    EXAMPLES,
    MAX_EXAMPLE_OPTIONS,
    MAX_EXAMPLES,
    Shape,
    build_question_prompt,
    label_spellings,
    worked_examples,
)

SMOLLM2_IDS = {"A": 49, " A": 330, "B": 50, " B": 389, "C": 51, " C": 340, "yes": 10407}


def reply_for(body: dict[str, Any]) -> dict[str, Any]:
    """A chat completion whose first token spreads over the prompt's likely labels."""
    prompt = prompt_of(body)
    if "yes or no" in prompt:
        return logprobs_reply([("yes", lp(0.7)), ("no", lp(0.2)), ("The", lp(0.1))])
    if "single digit" in prompt:
        return logprobs_reply([("1", lp(0.5)), ("0", lp(0.3)), ("Level", lp(0.2))])
    return logprobs_reply([("A", lp(0.6)), ("B", lp(0.3)), ("The", lp(0.1))])


class TokenizingServer(Backend):
    """Chat completions, plus a tokenize endpoint at ``tokenize_path`` (or none)."""

    def __init__(self, tokenize_path: str | None = "/extras/tokenize") -> None:
        super().__init__(self.answer)
        self.tokenize_path = tokenize_path
        self.tokenized: list[str] = []

    def answer(self, body: dict[str, Any]) -> Any:
        path = self.requests[-1].url.path
        if path.endswith("/chat/completions"):
            return reply_for(body)
        if path == self.tokenize_path:
            self.tokenized.append(body["input"])
            known = SMOLLM2_IDS.get(body["input"])
            return {"tokens": [known] if known is not None else [216, 9999]}
        return httpx.Response(404, json={"detail": "Not Found"})

    def chats(self) -> list[dict[str, Any]]:
        return [
            body
            for request, body in zip(self.requests, self.bodies, strict=True)
            if request.url.path.endswith("/chat/completions")
        ]


def route_request() -> Any:
    return make_request(
        route=ChoiceQuestion(
            instructions="Which team?", options={"billing": None, "shipping": None}
        )
    )


# ---------------------------------------------------------------- the prompt


def test_the_instructions_name_the_labels_and_end_the_prompt() -> None:
    choice = build_question_prompt(
        "", ChoiceQuestion(instructions="Which?", options={"a": None, "b": None, "c": None})
    )
    score = build_question_prompt(
        "", ScoreQuestion(instructions="How much?", levels=["low", "mid", "high"])
    )
    boolean = build_question_prompt("", BooleanQuestion(instructions="Is it?"))
    assert choice.label_prompt().endswith(
        "\n\nAnswer with a single letter (A, B or C): A for a, B for b, C for c. "
        "Write nothing else."
    )
    assert score.label_prompt().endswith(
        "\n\nAnswer with a single digit (0 to 2): the number of the level that fits best. "
        "Write nothing else."
    )
    assert boolean.label_prompt().endswith("\n\nAnswer with yes or no. Write nothing else.")


@pytest.mark.parametrize("kind", ["choice", "score", "boolean"])
def test_worked_examples_are_answered_with_their_own_labels_spread_over_the_scale(
    kind: str,
) -> None:
    examples = EXAMPLES[kind]
    assert len(examples) == MAX_EXAMPLES
    for example in examples:
        prompt = build_question_prompt(example.context, example.question)
        assert prompt.kind == kind
        assert example.answer in prompt.labels
    assert len({example.answer for example in examples}) >= 2


async def test_examples_come_first_as_earlier_turns_and_the_question_last() -> None:
    backend = TokenizingServer()
    provider = OpenAICompatibleDecisionProvider(base_url=BASE_URL, transport=backend.transport)
    result = await provider.decide(route_request())
    (body,) = backend.chats()
    roles = [message["role"] for message in body["messages"]]
    assert roles == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    shown = [m["content"] for m in body["messages"] if m["role"] == "assistant"]
    assert shown == ["B", "A", "B"]  # two options: examples of two options
    assert "What is the customer complaining about?" in body["messages"][1]["content"]
    assert body["messages"][-1]["content"].startswith('Context:\n{\n  "ticket": "Charged twice.",')
    assert result.metadata["questions"]["route"]["examples"] == 3  # type: ignore[index, call-overload]


async def test_a_two_option_question_is_shown_examples_of_two_options() -> None:
    """After examples of three options, a small model put about 28% on ``C`` for a question
    of two: the examples now offer the labels the question offers, and no other."""
    backend = TokenizingServer()
    provider = OpenAICompatibleDecisionProvider(base_url=BASE_URL, transport=backend.transport)
    await provider.decide(route_request())
    (body,) = backend.chats()
    for message in body["messages"][1:]:
        assert "\nC. " not in message["content"]
        if message["role"] == "user":
            assert "Answer with a single letter (A or B)" in message["content"]


@pytest.mark.parametrize("size", [2, 3, 4, 5, 6, 9, 26])
def test_choice_examples_have_the_questions_number_of_options(size: int) -> None:
    examples = worked_examples(Shape("choice", size))
    assert len(examples) == MAX_EXAMPLES
    shown = min(size, MAX_EXAMPLE_OPTIONS)
    for example in examples:
        assert isinstance(example.question, ChoiceQuestion)
        assert len(example.question.options) == shown
        prompt = build_question_prompt(example.context, example.question)
        assert example.answer in prompt.labels
    assert [example.answer for example in examples][-1] == "ABCDEF"[shown - 1]
    assert len({example.answer for example in examples}) == min(shown, 3)


@pytest.mark.parametrize("size", range(2, 11))
def test_score_examples_have_the_questions_number_of_levels(size: int) -> None:
    examples = worked_examples(Shape("score", size))
    for example in examples:
        assert isinstance(example.question, ScoreQuestion)
        assert len(example.question.levels) == size
        assert int(example.answer) in range(size)
    assert {example.answer for example in examples} >= {"0", str(size - 1)}


def test_examples_copy_structured_instructions_context_and_descriptions() -> None:
    question = ChoiceQuestion(
        instructions={"task": "Route it", "rules": ["billing: invoices"]},
        options={"billing": "Invoices", "tech": None},
    )
    turns = build_question_prompt({"ticket": "VAT wrong"}, question).example_turns(3)
    for text, _ in turns:
        assert text.startswith('Context:\n{\n  "text": ')
        assert 'Question:\n{\n  "task": ' in text
        assert "\nA. " in text
        assert "\nB. " in text
        assert "\nC. " not in text
    assert "Invoices, fees and refunds" in turns[1][0]  # options with descriptions

    levels = ScoreQuestion(instructions="How late?", levels=[{"label": "on time"}, "late", "very"])
    for text, _ in build_question_prompt("", levels).example_turns(3):
        assert '0. {\n  "label": ' not in text  # a level in JSON is on its own lines
        assert '0.\n{\n  "label": ' in text
    criteria = BooleanQuestion.model_validate({"instructions": "Angry?", "criteria": {"true": "x"}})
    for text, _ in build_question_prompt("", criteria).example_turns(3):
        assert '"yes" means: ' in text
        assert '"no" means: ' in text
    for text, _ in build_question_prompt("", BooleanQuestion(instructions="Is it?")).example_turns(
        3
    ):
        assert "means" not in text


async def test_examples_zero_sends_the_question_alone() -> None:
    backend = TokenizingServer()
    provider = OpenAICompatibleDecisionProvider(
        base_url=BASE_URL, transport=backend.transport, examples=0
    )
    result = await provider.decide(route_request())
    (body,) = backend.chats()
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert result.metadata["questions"]["route"]["examples"] == 0  # type: ignore[index, call-overload]


def test_bad_arguments_are_refused_at_construction() -> None:
    with pytest.raises(ValueError, match=r"^examples must be between 0 and 3, got 4$"):
        OpenAICompatibleDecisionProvider(examples=4)
    with pytest.raises(TypeError, match=r"^examples must be a whole number, got True$"):
        OpenAICompatibleDecisionProvider(examples=True)
    with pytest.raises(
        ValueError,
        match=r"^tokenizer must be 'auto', None or a function from text to token ids, "
        r"not 'tiktoken'$",
    ):
        OpenAICompatibleDecisionProvider(tokenizer="tiktoken")  # type: ignore[arg-type]


def test_label_spellings() -> None:
    assert label_spellings("A") == ("A", " A")
    assert label_spellings("7") == ("7", " 7")
    assert label_spellings("no") == ("no", " no", "No", " No")


# ---------------------------------------------------------------- label tokens and logit_bias


async def test_no_tokenizer_by_default_no_bias_and_no_tokenize_request() -> None:
    backend = TokenizingServer()
    provider = OpenAICompatibleDecisionProvider(base_url=BASE_URL, transport=backend.transport)
    result = await provider.decide(route_request())
    assert backend.tokenized == []
    assert "logit_bias" not in backend.chats()[0]
    meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["logit_bias"] is None
    assert meta["label_tokens"] == {"source": "off"}


async def test_the_servers_tokenizer_gives_the_ids_once_per_spelling() -> None:
    backend = TokenizingServer()
    provider = OpenAICompatibleDecisionProvider(
        base_url=BASE_URL, transport=backend.transport, tokenizer="auto"
    )
    first = await provider.decide(route_request())
    assert sorted(backend.tokenized) == sorted(["A", " A", "B", " B"])
    assert backend.chats()[0]["logit_bias"] == {"49": 5.0, "330": 5.0, "50": 5.0, "389": 5.0}
    meta = first.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["label_tokens"] == {
        "source": "server /extras/tokenize",
        "ids": {"A": 49, " A": 330, "B": 50, " B": 389},
    }
    assert meta["logit_bias"] == 5.0
    # The bias changes what is sampled, not what is measured: the label mass is as reported.
    assert meta["label_mass"] == pytest.approx(0.9)
    assert meta["renormalized"] is True

    await provider.decide(route_request())
    assert len(backend.tokenized) == 4  # cached on the provider


async def test_a_spelling_of_several_tokens_is_not_biased() -> None:
    backend = TokenizingServer()
    provider = OpenAICompatibleDecisionProvider(
        base_url=BASE_URL, transport=backend.transport, tokenizer="auto"
    )
    result = await provider.decide(
        make_request(refund=BooleanQuestion(instructions="Refund wanted?"))
    )
    (body,) = backend.chats()
    assert body["logit_bias"] == {"10407": 5.0}  # only "yes" is one token on this server
    meta = result.metadata["questions"]["refund"]  # type: ignore[index, call-overload]
    assert meta["label_tokens"] == {
        "source": "server /extras/tokenize",
        "ids": {"yes": 10407},
        "multi_token_labels": ["no"],
    }


async def test_llama_cpp_and_vllm_tokenize_at_the_root() -> None:
    backend = TokenizingServer(tokenize_path="/tokenize")
    provider = OpenAICompatibleDecisionProvider(
        base_url=BASE_URL, transport=backend.transport, tokenizer="auto"
    )
    result = await provider.decide(route_request())
    tokenize = [r for r in backend.requests if not r.url.path.endswith("/chat/completions")]
    assert [r.url.path for r in tokenize[:2]] == ["/extras/tokenize", "/tokenize"]
    body = backend.bodies[backend.requests.index(tokenize[1])]
    assert body == {
        "model": "smollm2-135m-instruct",
        "input": "A",
        "content": "A",
        "prompt": "A",
        "add_special": False,
        "add_special_tokens": False,
    }
    meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["label_tokens"]["source"] == "server /tokenize"


async def test_a_server_without_a_tokenizer_is_asked_once_then_no_bias() -> None:
    backend = TokenizingServer(tokenize_path=None)
    provider = OpenAICompatibleDecisionProvider(
        base_url=BASE_URL, transport=backend.transport, tokenizer="auto"
    )
    for _ in range(2):
        result = await provider.decide(route_request())
        meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
        assert meta["label_tokens"] == {
            "source": "unavailable: /extras/tokenize: HTTP 404; /tokenize: HTTP 404"
        }
        assert meta["logit_bias"] is None
    paths = [r.url.path for r in backend.requests]
    assert paths.count("/extras/tokenize") == 1
    assert paths.count("/tokenize") == 1
    assert all("logit_bias" not in body for body in backend.chats())


async def test_openais_api_is_never_asked_for_a_tokenizer() -> None:
    backend = TokenizingServer()
    provider = OpenAICompatibleDecisionProvider(
        base_url="https://api.openai.com/v1",
        model="gpt-4o-mini",
        transport=backend.transport,
        tokenizer="auto",
    )
    result = await provider.decide(route_request())
    assert [r.url.path for r in backend.requests] == ["/v1/chat/completions"]
    meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["label_tokens"] == {"source": "unavailable: the server has no tokenize endpoint"}


async def test_a_tokenizer_function_replaces_the_server() -> None:
    backend = TokenizingServer()
    asked: list[str] = []

    def encode(text: str) -> list[int]:
        asked.append(text)
        return [{"A": 1, " A": 2, "B": 3}.get(text, 7), 8][: 1 if text in "A AB" else 2]

    provider = OpenAICompatibleDecisionProvider(
        base_url=BASE_URL, transport=backend.transport, tokenizer=encode
    )
    result = await provider.decide(route_request())
    assert backend.tokenized == []
    assert sorted(asked) == sorted(["A", " A", "B", " B"])
    assert backend.chats()[0]["logit_bias"] == {"1": 5.0, "2": 5.0, "3": 5.0}
    meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["label_tokens"] == {"source": "tokenizer", "ids": {"A": 1, " A": 2, "B": 3}}


@pytest.mark.parametrize(
    ("encode", "message"),
    [
        (
            lambda text: "A",
            "the tokenizer returned 'A' for 'A': it must return a list of token ids "
            "(whole numbers >= 0)",
        ),
        (
            lambda text: [1.5],
            "the tokenizer returned [1.5] for 'A': it must return a list of token ids "
            "(whole numbers >= 0)",
        ),
        (lambda text: 1 / 0, "the tokenizer raised ZeroDivisionError for 'A': division by zero"),
    ],
)
async def test_a_broken_tokenizer_fails_before_any_chat_request(encode: Any, message: str) -> None:
    backend = TokenizingServer()
    provider = OpenAICompatibleDecisionProvider(
        base_url=BASE_URL, transport=backend.transport, tokenizer=encode
    )
    with pytest.raises(ProviderError) as caught:
        await provider.decide(route_request())
    assert str(caught.value) == message
    assert caught.value.code == "invalid_request"
    assert backend.requests == []


async def test_label_bias_zero_sends_no_bias() -> None:
    backend = TokenizingServer()
    provider = OpenAICompatibleDecisionProvider(
        base_url=BASE_URL, transport=backend.transport, tokenizer="auto", label_bias=0
    )
    result = await provider.decide(route_request())
    assert "logit_bias" not in backend.chats()[0]
    meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["logit_bias"] is None
    assert meta["label_tokens"]["ids"] == {"A": 49, " A": 330, "B": 50, " B": 389}


async def test_given_label_token_ids_are_used_as_they_are() -> None:
    backend = TokenizingServer()
    provider = OpenAICompatibleDecisionProvider(
        base_url=BASE_URL,
        transport=backend.transport,
        tokenizer="auto",
        label_token_ids={"A": [5, 6], "yes": [9]},
    )
    result = await provider.decide(route_request())
    assert backend.tokenized == []
    assert backend.chats()[0]["logit_bias"] == {"5": 5.0, "6": 5.0}
    meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["label_tokens"] == {"source": "label_token_ids", "ids": {"A": [5, 6]}}


@pytest.mark.parametrize("size", range(2, 11))
def test_score_examples_do_not_count_up_to_the_top(size: int) -> None:
    # Answered lowest, middle, top in that order, the examples made a small model count on
    # past the top level ("5" after "4" of five levels: up to 14% of its probability); the
    # top comes first, the last answer sits inside the scale.
    answers = [int(example.answer) for example in worked_examples(Shape("score", size))]
    assert answers[0] == size - 1
    assert answers[1] == 0
    assert answers[-1] < size - 1 or size == 2
