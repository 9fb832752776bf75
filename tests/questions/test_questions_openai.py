"""OpenAICompatibleDecisionProvider against httpx mock transports with real-shaped replies."""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import Any

import httpx
import pytest
from _questions_support import (
    BASE_URL,
    MODEL,
    Backend,
    by_question,
    logprobs_reply,
    lp,
    make_request,
    prompt_of,
    text_reply,
)
from _slow_server import TrickleServer
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_opdecide.questions import (
    AbortController,
    BooleanQuestion,
    ChoiceQuestion,
    DecisionRequest,
    InvalidRequestError,
    OpenAICompatibleDecisionProvider,
    ProviderError,
    ProviderFactoryConfig,
    ProviderUsagePricing,
    Rule,
    ScoreQuestion,
    openai_compatible,
    validate_result,
)

ROUTE = "Which team handles the ticket?"
URGENCY = "How urgent is it?"
REFUND = "Does the customer ask for a refund?"


def provider_for(
    backend: Backend | httpx.MockTransport, **options: Any
) -> OpenAICompatibleDecisionProvider:
    transport = backend.transport if isinstance(backend, Backend) else backend
    return OpenAICompatibleDecisionProvider(base_url=BASE_URL, transport=transport, **options)


def one_choice(**options: Any) -> DecisionRequest:
    return make_request(
        route=ChoiceQuestion(
            instructions=ROUTE, options=options or {"billing": None, "shipping": None, "tech": None}
        )
    )


def standard_backend() -> Backend:
    return Backend(
        by_question(
            {
                ROUTE: logprobs_reply(
                    [("A", lp(0.6)), ("B", lp(0.3)), ("C", lp(0.05)), ("The", lp(0.05))]
                ),
                URGENCY: logprobs_reply([("1", lp(0.5)), ("2", lp(0.3)), ("0", lp(0.2))]),
                REFUND: logprobs_reply([("Yes", lp(0.6)), ("No", lp(0.2)), ("I", lp(0.2))]),
            }
        )
    )


# ---------------------------------------------------------------- construction and requests


def test_construction_does_no_io_and_accepts_an_empty_key() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request may be sent while constructing")

    provider = OpenAICompatibleDecisionProvider(api_key="", transport=httpx.MockTransport(refuse))
    assert provider.api_key is None
    assert provider.name == "openai-compatible"
    assert provider.kind == "decision"
    assert provider.get_icon() is None
    built = openai_compatible(ProviderFactoryConfig())
    assert built.base_url == "https://api.openai.com/v1"


async def test_one_request_per_question_with_the_token_probability_parameters() -> None:
    backend = standard_backend()
    await provider_for(backend).decide(make_request())
    assert len(backend.requests) == 3
    for request, body in zip(backend.requests, backend.bodies, strict=True):
        assert request.method == "POST"
        assert request.url == httpx.URL(f"{BASE_URL}/chat/completions")
        assert body["model"] == MODEL
        assert body["max_tokens"] == 1
        assert body["temperature"] == 0
        assert body["logprobs"] is True
        assert body["top_logprobs"] == 20
        assert "logit_bias" not in body
        assert "authorization" not in request.headers


async def test_key_and_default_headers_are_sent() -> None:
    backend = standard_backend()
    provider = provider_for(backend, api_key="sk-test", default_headers={"X-Team": "qa"})
    await provider.decide(make_request())
    for request in backend.requests:
        assert request.headers["authorization"] == "Bearer sk-test"
        assert request.headers["x-team"] == "qa"


async def test_the_prompt_keeps_json_structure_and_labels_outcomes() -> None:
    backend = standard_backend()
    request = DecisionRequest.model_validate(
        {
            "model": MODEL,
            "context": {"ticket": "Charged twice", "ids": ["1", 1, True, None]},
            "questions": {
                "route": {
                    "type": "choice",
                    "instructions": ROUTE,
                    "options": {
                        "billing": {"handles": ["refunds"], "vip": False},
                        "shipping": None,
                    },
                },
                "urgency": {
                    "type": "score",
                    "instructions": URGENCY,
                    "levels": ["low", {"sla": 4}],
                },
                "refund": {
                    "type": "boolean",
                    "instructions": {"ask": REFUND},
                    "criteria": {"true": "money back", "false": {"not": "refund"}},
                },
            },
        }
    )
    await provider_for(backend).decide(request)
    prompts = {prompt_of(body) for body in backend.bodies}
    context_json = json.dumps(request.context, ensure_ascii=False, indent=2)
    for prompt in prompts:
        assert context_json in prompt  # the context as JSON text: "1" quoted, true, null
    route = next(p for p in prompts if ROUTE in p)
    assert "A. billing\n" in route
    assert "B. shipping" in route
    assert '"vip": false' in route
    assert "'vip'" not in route  # never Python's repr
    assert "(A or B)" in route
    urgency = next(p for p in prompts if URGENCY in p)
    assert "0. low" in urgency
    assert '"sla": 4' in urgency
    refund = next(p for p in prompts if REFUND in p)
    assert '"ask": "Does the customer ask for a refund?"' in refund
    assert '"yes" means: money back' in refund
    assert '"not": "refund"' in refund
    assert "yes or no" in refund


async def test_multi_line_text_reaches_the_model_verbatim() -> None:
    backend = standard_backend()
    description = "Payments:\n  - refunds\n  - invoices"
    level = "High:\n\tanswer within the hour"
    criterion = "Money back,\nor a chargeback"
    request = make_request(
        route=ChoiceQuestion(
            instructions=ROUTE, options={"billing": description, "odd\nname": None}
        ),
        urgency=ScoreQuestion(instructions=URGENCY, levels=["low", level]),
        refund=BooleanQuestion(instructions=REFUND, criteria={"true": criterion}),  # type: ignore[arg-type]
    )
    await provider_for(backend).decide(request)
    text = "\n".join(prompt_of(body) for body in backend.bodies)
    for verbatim in (description, "odd\nname", level, criterion):
        assert verbatim in text


# ---------------------------------------------------------------- answers from logprobs


async def test_answers_from_token_probabilities() -> None:
    result = await provider_for(standard_backend()).decide(make_request())
    route = result.choice("route")
    assert route.choice == "billing"
    assert route.probabilities == pytest.approx(
        {"billing": 0.6 / 0.95, "shipping": 0.3 / 0.95, "tech": 0.05 / 0.95}
    )
    urgency = result.score("urgency")
    assert urgency.probabilities == pytest.approx({"0": 0.2, "1": 0.5, "2": 0.3})
    assert urgency.score == pytest.approx(0 * 0.2 + 1 * 0.5 + 2 * 0.3)
    assert urgency.legend == {"0": "low", "1": "medium", "2": {"label": "high", "sla_hours": 4}}
    assert result.boolean("refund").probability == pytest.approx(0.6 / (0.6 + 0.2))
    meta = result.metadata
    assert meta is not None
    route_meta = meta["questions"]["route"]  # type: ignore[index, call-overload]
    assert route_meta["method"] == "logprobs"
    assert route_meta["label_mass"] == pytest.approx(0.95)
    assert route_meta["labels"] == {"A": "billing", "B": "shipping", "C": "tech"}
    assert route_meta["absent_labels"] == []
    assert meta["questions"]["refund"]["label_mass"] == pytest.approx(0.8)  # type: ignore[index, call-overload]
    validate_result(make_request(), result)


async def test_spelling_variants_of_a_label_are_folded_together() -> None:
    backend = Backend(
        lambda body: logprobs_reply(
            [
                ("A", lp(0.3)),
                (" A", lp(0.2)),
                ("a", lp(0.1)),
                ('"A', lp(0.1)),
                ("B", lp(0.2)),
                (" b", lp(0.1)),
            ]
        )
    )
    result = await provider_for(backend).decide(one_choice(yes=None, no=None))
    assert result.choice("route").probabilities == pytest.approx({"yes": 0.7, "no": 0.3})


async def test_boolean_spelling_variants() -> None:
    backend = Backend(
        lambda body: logprobs_reply(
            [("Yes", lp(0.3)), (" yes", lp(0.3)), ("NO", lp(0.2)), ("▁no", lp(0.1))]
        )
    )
    request = make_request(refund=BooleanQuestion(instructions=REFUND))
    result = await provider_for(backend).decide(request)
    assert result.boolean("refund").probability == pytest.approx(0.6 / 0.9)


async def test_a_sampled_token_missing_from_the_top_list_is_added() -> None:
    backend = Backend(
        lambda body: logprobs_reply([("A", lp(0.5)), ("The", lp(0.2))], sampled=("B", lp(0.1)))
    )
    result = await provider_for(backend).decide(one_choice(yes=None, no=None))
    assert result.choice("route").probabilities == pytest.approx(
        {"yes": 0.5 / 0.6, "no": 0.1 / 0.6}
    )
    meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["sampled_token"] == "B"
    assert meta["absent_labels"] == []


async def test_minus_9999_means_zero_probability() -> None:
    backend = Backend(lambda body: logprobs_reply([("A", lp(0.9)), ("B", -9999.0), ("C", -9999)]))
    result = await provider_for(backend).decide(one_choice())
    assert result.choice("route").probabilities == {"billing": 1.0, "shipping": 0.0, "tech": 0.0}
    assert result.metadata["questions"]["route"]["absent_labels"] == []  # type: ignore[index, call-overload]


async def test_minus_infinity_literal_means_zero_probability() -> None:
    text = json.dumps(logprobs_reply([("A", lp(0.5)), ("B", -1e308)])).replace(
        "-1e+308", "-Infinity"
    )
    backend = Backend(
        lambda body: httpx.Response(200, text=text, headers={"content-type": "application/json"})
    )
    result = await provider_for(backend).decide(one_choice(yes=None, no=None))
    assert result.choice("route").probabilities == {"yes": 1.0, "no": 0.0}


async def test_an_absent_label_gets_zero_and_is_reported_with_its_bound() -> None:
    backend = Backend(
        lambda body: logprobs_reply([("A", lp(0.7)), ("B", lp(0.2)), ("The", lp(0.01))])
    )
    result = await provider_for(backend).decide(one_choice())
    route = result.choice("route")
    assert route.probabilities["tech"] == 0.0
    meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["absent_labels"] == ["C"]
    assert meta["absent_label_bound"] == pytest.approx(0.01)


async def test_low_label_mass_is_reported_and_can_be_refused() -> None:
    reply = logprobs_reply([("The", lp(0.9)), ("A", lp(0.03)), ("B", lp(0.01))])
    result = await provider_for(Backend(lambda body: reply)).decide(one_choice(yes=None, no=None))
    assert result.choice("route").probabilities == pytest.approx({"yes": 0.75, "no": 0.25})
    assert result.metadata["questions"]["route"]["label_mass"] == pytest.approx(0.04)  # type: ignore[index, call-overload]
    strict = provider_for(Backend(lambda body: reply), min_label_mass=0.5)
    with pytest.raises(ProviderError) as caught:
        await strict.decide(one_choice(yes=None, no=None))
    assert caught.value.code == "unknown"
    assert "4.00%" in str(caught.value)


async def test_no_label_at_all_is_an_error_not_a_guess() -> None:
    backend = Backend(lambda body: logprobs_reply([("The", lp(0.6)), ("I", lp(0.3))]))
    with pytest.raises(ProviderError) as caught:
        await provider_for(backend).decide(one_choice())
    assert caught.value.code == "unknown"
    assert "no probability on any label" in str(caught.value)


async def test_logit_bias_on_label_tokens() -> None:
    backend = standard_backend()
    provider = provider_for(
        backend, label_token_ids={"A": [32], "B": [33, 330], "yes": [9]}, label_bias=7
    )
    await provider.decide(make_request())
    bodies = {
        next(n for n in (ROUTE, URGENCY, REFUND) if n in prompt_of(b)): b for b in backend.bodies
    }
    assert bodies[ROUTE]["logit_bias"] == {"32": 7, "33": 7, "330": 7}
    assert bodies[REFUND]["logit_bias"] == {"9": 7}
    assert "logit_bias" not in bodies[URGENCY]


# ---------------------------------------------------------------- usage and model


async def test_usage_is_the_sum_of_what_the_server_reported() -> None:
    usages = iter(
        [
            {
                "prompt_tokens": 100,
                "completion_tokens": 1,
                "total_tokens": 101,
                "prompt_tokens_details": {"cached_tokens": 40},
            },
            {"prompt_tokens": 90, "completion_tokens": 1, "total_tokens": 91},
            {
                "prompt_tokens": 80,
                "completion_tokens": 1,
                "total_tokens": 81,
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
        ]
    )
    backend = Backend(
        lambda body: logprobs_reply(
            [("A", lp(0.5)), ("yes", lp(0.4)), ("0", lp(0.1))], usage=next(usages)
        )
    )
    pricing = ProviderUsagePricing(input_per_million=1.0, output_per_million=2.0)
    result = await provider_for(backend, pricing=pricing).decide(make_request())
    usage = result.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (270, 3, 273)
    assert usage.cached_tokens == 40
    assert usage.reasoning_tokens == 0
    assert usage.provider == "openai-compatible"
    assert usage.cost == pytest.approx(270 / 1e6 * 1.0 + 3 / 1e6 * 2.0)


async def test_missing_usage_is_never_invented() -> None:
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        data = logprobs_reply([("A", lp(0.5)), ("B", lp(0.5))])
        del data["usage"]
        return data

    result = await provider_for(Backend(reply)).decide(one_choice(yes=None, no=None))
    assert (
        result.usage.prompt_tokens,
        result.usage.completion_tokens,
        result.usage.total_tokens,
    ) == (0, 0, 0)
    assert result.metadata["responses_without_usage"] == 1  # type: ignore[index]


async def test_the_result_names_the_resolved_model() -> None:
    backend = Backend(
        lambda body: logprobs_reply(
            [("A", lp(0.5)), ("B", lp(0.5))], model="smollm2-135m-instruct-q4"
        )
    )
    request = one_choice(yes=None, no=None)
    request.model = "smollm2"
    result = await provider_for(backend).decide(request)
    assert result.model == "smollm2-135m-instruct-q4"
    assert backend.bodies[0]["model"] == "smollm2"


async def test_an_empty_model_uses_the_providers_default_or_is_refused() -> None:
    backend = standard_backend()
    request = make_request()
    request.model = ""
    with pytest.raises(InvalidRequestError) as caught:
        await provider_for(backend).decide(request)
    assert caught.value.rule == Rule.REQUEST_MODEL
    assert backend.requests == []
    await provider_for(backend, model="default-model").decide(request)
    assert {body["model"] for body in backend.bodies} == {"default-model"}


# ---------------------------------------------------------------- concurrency


async def test_questions_are_sent_concurrently() -> None:
    arrived = 0
    all_here = asyncio.Event()

    async def respond(body: dict[str, Any]) -> dict[str, Any]:
        nonlocal arrived
        arrived += 1
        if arrived == 3:
            all_here.set()
        # Only answers once all three requests are in flight at the same time.
        await asyncio.wait_for(all_here.wait(), timeout=5)
        return logprobs_reply([("A", lp(0.5)), ("yes", lp(0.3)), ("0", lp(0.2))])

    backend = Backend(respond)
    await provider_for(backend).decide(make_request())
    assert backend.max_in_flight == 3


async def test_max_concurrency_limits_requests_in_flight() -> None:
    backend = Backend(
        lambda body: logprobs_reply([("A", lp(0.5)), ("yes", lp(0.3)), ("0", lp(0.2))]), delay=0.01
    )
    await provider_for(backend, max_concurrency=1).decide(make_request())
    assert backend.max_in_flight == 1
    assert len(backend.requests) == 3


async def test_one_failing_question_cancels_the_others() -> None:
    cancelled = []

    async def respond(body: dict[str, Any]) -> Any:
        if ROUTE in prompt_of(body):
            return httpx.Response(500, json={"error": {"message": "boom"}})
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(body)
            raise
        raise AssertionError("not reached")

    with pytest.raises(ProviderError) as caught:
        await asyncio.wait_for(provider_for(Backend(respond)).decide(make_request()), timeout=5)
    assert caught.value.code == "server_error"
    assert len(cancelled) == 2


async def test_every_failure_is_retrieved_when_several_questions_fail(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import gc

    backend = Backend(lambda body: httpx.Response(503, json={"error": {"message": "overloaded"}}))

    async def code() -> str:
        try:
            await provider_for(backend).decide(make_request())
        except ProviderError as error:
            return error.code
        return "no error"

    assert await code() == "server_error"  # the traceback (and the tasks) are gone now
    gc.collect()
    assert len(backend.requests) == 3
    assert "never retrieved" not in caplog.text


# ---------------------------------------------------------------- unrepresentable requests


@pytest.mark.parametrize(
    ("request_data", "rule"),
    [
        (
            {
                "q": {
                    "type": "choice",
                    "instructions": "x",
                    "options": {f"o{i}": None for i in range(27)},
                }
            },
            Rule.CHOICE_TOO_MANY_OPTIONS,
        ),
        (
            {"q": {"type": "score", "instructions": "x", "levels": [str(i) for i in range(11)]}},
            Rule.SCORE_TOO_MANY_LEVELS,
        ),
        (
            {"q": {"type": "choice", "instructions": "x", "options": {"Yes": None, "yes": None}}},
            Rule.CHOICE_DUPLICATE_OPTION_NAMES,
        ),
        (
            {"q": {"type": "choice", "instructions": "x", "options": {"only": None}}},
            Rule.CHOICE_TOO_FEW_OPTIONS,
        ),
        (
            {"q": {"type": "choice", "instructions": "x", "options": {"": None, "b": None}}},
            Rule.CHOICE_EMPTY_OPTION_NAME,
        ),
        ({"q": {"type": "score", "instructions": "x", "levels": []}}, Rule.SCORE_TOO_FEW_LEVELS),
        ({}, Rule.QUESTIONS_EMPTY),
    ],
)
async def test_unrepresentable_requests_are_refused_before_any_request(
    request_data: dict[str, Any], rule: Rule
) -> None:
    backend = standard_backend()
    with pytest.raises(ProviderError) as caught:
        await provider_for(backend).decide(
            {"model": MODEL, "context": "", "questions": request_data}
        )
    assert caught.value.code == "invalid_request"
    assert isinstance(caught.value, InvalidRequestError)
    assert caught.value.rule == rule
    assert backend.requests == []


async def test_26_options_and_10_levels_are_fine() -> None:
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    backend = Backend(lambda body: logprobs_reply([("Z", lp(0.5)), ("9", lp(0.5))]))
    request = make_request(
        many=ChoiceQuestion(instructions="x", options={f"o{i}": None for i in range(26)}),
        deep=ScoreQuestion(instructions="y", levels=[str(i) for i in range(10)]),
    )
    result = await provider_for(backend).decide(request)
    assert result.choice("many").choice == "o25"
    assert result.score("deep").score == pytest.approx(9.0)
    many_prompt = next(prompt_of(b) for b in backend.bodies if "o25" in prompt_of(b))
    assert f"{letters[25]}. o25" in many_prompt


async def test_a_non_json_context_is_refused_before_any_request() -> None:
    backend = standard_backend()
    with pytest.raises(ProviderError) as caught:
        await provider_for(backend).decide(
            {
                "model": MODEL,
                "context": {"when": object()},
                "questions": {"q": {"type": "boolean", "instructions": "x"}},
            }
        )
    assert caught.value.code == "invalid_request"
    assert backend.requests == []


# ---------------------------------------------------------------- HTTP errors


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, "invalid_request"),
        (401, "auth_error"),
        (403, "auth_error"),
        (404, "invalid_request"),
        (408, "timeout"),
        (422, "invalid_request"),
        (429, "rate_limit"),
        (500, "server_error"),
        (503, "server_error"),
        (418, "unknown"),
    ],
)
async def test_http_errors_map_to_provider_error_codes(status: int, code: str) -> None:
    backend = Backend(
        lambda body: httpx.Response(status, json={"error": {"message": f"server says {status}"}})
    )
    with pytest.raises(ProviderError) as caught:
        await provider_for(backend).decide(one_choice())
    assert type(caught.value) is ProviderError
    assert (caught.value.code, caught.value.status_code) == (code, status)
    assert f"server says {status}" in str(caught.value)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({}, None),
        ({"retry-after": "soon"}, None),
    ],
)
async def test_rate_limits_carry_retry_after(
    headers: dict[str, str], seconds: float | None
) -> None:
    backend = Backend(lambda body: httpx.Response(429, text="slow down", headers=headers))
    with pytest.raises(ProviderError) as caught:
        await provider_for(backend).decide(one_choice())
    assert caught.value.code == "rate_limit"
    assert caught.value.retry_after == seconds


async def test_a_timeout_is_a_timeout_and_a_dead_server_a_server_error() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("read timed out", request=request)

    with pytest.raises(ProviderError) as caught:
        await provider_for(httpx.MockTransport(slow)).decide(one_choice())
    assert caught.value.code == "timeout"

    def dead(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(ProviderError) as caught:
        await provider_for(httpx.MockTransport(dead)).decide(one_choice())
    assert caught.value.code == "server_error"
    assert "connection refused" in str(caught.value)


@pytest.mark.parametrize("trickled", ["body", "headers"])
async def test_timeout_bounds_each_request_as_a_whole(trickled: str) -> None:
    """A server on 127.0.0.1 that sends a byte every 0.3 s never trips a per-read timeout; the
    provider's ``timeout`` (ms) bounds the whole request, and ``get_models`` gives up too."""
    with TrickleServer(trickled) as server:
        url = server.url
        provider = OpenAICompatibleDecisionProvider(
            base_url=url, model=MODEL, timeout=1000, api_key=KEY
        )
        start = time.monotonic()
        with pytest.raises(ProviderError) as caught:
            await provider.decide(one_choice())
        took = time.monotonic() - start
        start = time.monotonic()
        assert await provider.get_models() == []
        listing_took = time.monotonic() - start
    assert caught.value.code == "timeout"
    assert str(caught.value) == (
        f"openai-compatible: request to {url}/chat/completions timed out: it took "
        "longer than 1000 ms in all. The provider's timeout bounds each request as a whole "
        "(connecting, sending and all of the answer): raise it (timeout=..., in milliseconds) "
        "or check that the server is not overloaded."
    )
    assert took < 4, f"decide took {took:.2f} s"
    assert listing_took < 4, f"get_models took {listing_took:.2f} s"


KEY = "sk-provider-test-5f2c9a7e41b34d0c8a1e"
"""A real-looking API key: no message or repr may show it."""
USERINFO_URL = "http://tenant-ada:pa55w0rd-Zq7@127.0.0.1:9/v1"


async def test_quoted_server_text_has_the_key_redacted() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        key = request.headers["authorization"].removeprefix("Bearer ")
        return httpx.Response(401, json={"error": {"message": f"Incorrect API key: {key}."}})

    with pytest.raises(ProviderError) as caught:
        await provider_for(httpx.MockTransport(refuse), api_key=KEY).decide(one_choice())
    assert str(caught.value).endswith("Incorrect API key: ***.")


async def test_a_reply_quoting_the_key_is_redacted_and_chained_to_nothing() -> None:
    """The distribution's own error quotes the server's tokens: it is not kept as a cause."""
    backend = Backend(lambda body: httpx.Response(200, text=first_token(entry(0.7, token=KEY))))
    provider = provider_for(backend, api_key=KEY, fallback="none")
    with pytest.raises(ProviderError) as caught:
        await provider.decide(one_choice(a=None, b=None))
    assert "the log-probability of '***' is 0.7" in str(caught.value)
    assert KEY not in str(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None


async def test_a_failed_request_names_its_url_without_the_user_info() -> None:
    def dead(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    provider = OpenAICompatibleDecisionProvider(
        base_url=USERINFO_URL, model=MODEL, transport=httpx.MockTransport(dead)
    )
    with pytest.raises(ProviderError) as caught:
        await provider.decide(one_choice())
    assert "request to http://127.0.0.1:9/v1/chat/completions failed" in str(caught.value)
    assert "pa55w0rd-Zq7" not in str(caught.value)
    assert "pa55w0rd-Zq7" not in repr(provider)
    assert "127.0.0.1:9/v1" in repr(provider)


async def test_the_configured_timeout_is_applied() -> None:
    seen: list[dict[str, Any]] = []

    def capture(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"])
        return httpx.Response(200, json=logprobs_reply([("A", lp(0.5)), ("B", lp(0.5))]))

    await provider_for(httpx.MockTransport(capture), timeout=2500).decide(
        one_choice(a=None, b=None)
    )
    assert seen[0]["read"] == 2.5


# ---------------------------------------------------------------- malformed payloads


def first_token(entry: dict[str, Any]) -> str:
    """A reply whose first token's logprobs entry is ``entry`` (json.dumps writes NaN as is)."""
    return json.dumps({"choices": [{"logprobs": {"content": [entry]}}]})


def entry(logprob: Any = -0.1, token: Any = "A", top: Any = ()) -> dict[str, Any]:
    return {
        "token": token,
        "logprob": logprob,
        "top_logprobs": list(top) if isinstance(top, tuple) else top,
    }


@pytest.mark.parametrize(
    "text",
    [
        "<html>Bad gateway</html>",
        "[1, 2]",
        '{"choices": []}',
        '{"choices": [{"message": {"content": "A"}, "logprobs": {"content": "A"}}]}',
        first_token(entry(math.nan)),
        first_token(entry("high")),
        first_token(entry(token=5)),
        first_token(entry(True)),
        first_token(entry(top={"A": -0.1})),
        first_token(entry(0.7)),
        first_token(entry(top=({"token": "A", "logprob": -0.1}, {"token": "B", "logprob": -0.2}))),
        first_token(entry(math.inf)),
    ],
    ids=[
        "html",
        "array",
        "no-choices",
        "content-not-list",
        "nan",
        "string",
        "token-not-text",
        "bool",
        "top-not-list",
        "positive",
        "sums-above-1",
        "infinity",
    ],
)
async def test_malformed_payloads_are_provider_errors(text: str) -> None:
    backend = Backend(lambda body: httpx.Response(200, text=text))
    with pytest.raises(ProviderError) as caught:
        await provider_for(backend, fallback="none").decide(one_choice(a=None, b=None))
    assert caught.value.code == "unknown"
    assert "route" in str(caught.value)


# ---------------------------------------------------------------- fallbacks


def refuse_logprobs(then: Any) -> Any:
    def respond(body: dict[str, Any]) -> Any:
        if body.get("logprobs"):
            return httpx.Response(
                403, json={"error": {"message": "logprobs are not available for this model"}}
            )
        return then(body) if callable(then) else then

    return respond


async def test_a_403_for_logprobs_falls_back_to_a_verbalized_distribution() -> None:
    backend = Backend(
        refuse_logprobs(text_reply('Sure! ```json\n{"A": 0.2, "B": 0.7, "C": 0.1}\n```'))
    )
    result = await provider_for(backend).decide(one_choice())
    route = result.choice("route")
    assert route.choice == "shipping"
    assert route.probabilities == pytest.approx({"billing": 0.2, "shipping": 0.7, "tech": 0.1})
    meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["method"] == "verbalized"
    assert "403" in meta["fallback_reason"]
    assert meta["attempts"] == 1
    assert meta["renormalized"] is False
    verbalized = backend.bodies[1]
    assert "logprobs" not in verbalized
    assert '"A", "B", "C"' in prompt_of(verbalized)
    assert result.usage.prompt_tokens == 120  # the refused request reported none


async def test_an_unusable_verbalized_reply_is_asked_again_once() -> None:
    replies = iter([text_reply("I think billing."), text_reply('{"A": 0.5, "B": 0.25, "C": 0.25}')])
    backend = Backend(refuse_logprobs(lambda body: next(replies)))
    result = await provider_for(backend).decide(one_choice())
    assert result.choice("route").choice == "billing"
    assert result.metadata["questions"]["route"]["attempts"] == 2  # type: ignore[index, call-overload]
    reask = backend.bodies[2]["messages"]
    assert reask[-2] == {"role": "assistant", "content": "I think billing."}
    assert "no JSON object" in reask[-1]["content"]
    assert result.usage.prompt_tokens == 240


async def test_unusable_twice_is_an_error() -> None:
    backend = Backend(refuse_logprobs(text_reply('{"A": 0.9, "B": 0.9, "C": 0.9}')))
    with pytest.raises(ProviderError) as caught:
        await provider_for(backend).decide(one_choice())
    assert caught.value.code == "unknown"
    assert "sum to 1" in str(caught.value)
    assert len(backend.requests) == 3


async def test_a_nearly_normalised_verbalized_distribution_is_renormalised_on_the_record() -> None:
    backend = Backend(refuse_logprobs(text_reply('{"A": 0.33, "B": 0.33, "C": 0.33}')))
    result = await provider_for(backend).decide(one_choice())
    assert sum(result.choice("route").probabilities.values()) == pytest.approx(1.0)
    meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["renormalized"] is True
    assert meta["stated_sum"] == pytest.approx(0.99)
    assert meta["stated_probabilities"] == {"A": 0.33, "B": 0.33, "C": 0.33}


async def test_a_reply_without_logprobs_falls_back_and_the_refusal_is_remembered() -> None:
    def respond(body: dict[str, Any]) -> Any:
        if body.get("logprobs"):
            return text_reply("A")  # logprobs silently ignored by the server
        return text_reply('{"yes": 0.8, "no": 0.2}')

    backend = Backend(respond)
    provider = provider_for(backend)
    request = make_request(refund=BooleanQuestion(instructions=REFUND))
    first = await provider.decide(request)
    assert first.boolean("refund").probability == pytest.approx(0.8)
    assert "no logprobs" in first.metadata["questions"]["refund"]["fallback_reason"]  # type: ignore[index, call-overload]
    assert len(backend.requests) == 2
    await provider.decide(request)
    assert len(backend.requests) == 3  # straight to the fallback


async def test_the_sampling_fallback() -> None:
    answers = iter(["A", " B", "a", "The", "A."])
    backend = Backend(refuse_logprobs(lambda body: text_reply(next(answers))))
    result = await provider_for(backend, fallback="sampled", samples=5).decide(
        one_choice(yes=None, no=None)
    )
    assert result.choice("route").probabilities == pytest.approx({"yes": 0.75, "no": 0.25})
    meta = result.metadata["questions"]["route"]  # type: ignore[index, call-overload]
    assert meta["method"] == "sampled"
    assert (meta["samples"], meta["unrecognised"], meta["counts"]) == (5, 1, {"A": 3, "B": 1})
    assert all(body["temperature"] == 1.0 for body in backend.bodies[1:])


async def test_logprobs_can_be_skipped_for_servers_known_to_refuse_them() -> None:
    backend = Backend(lambda body: text_reply('{"A": 0.5, "B": 0.5}'))
    result = await provider_for(backend, logprobs=False).decide(one_choice(a=None, b=None))
    assert len(backend.requests) == 1
    assert "logprobs" not in backend.bodies[0]
    assert result.metadata["questions"]["route"]["fallback_reason"] == "logprobs=False"  # type: ignore[index, call-overload]


async def test_no_fallback_means_an_error() -> None:
    backend = Backend(refuse_logprobs(text_reply("{}")))
    with pytest.raises(ProviderError) as caught:
        await provider_for(backend, fallback="none").decide(one_choice())
    assert caught.value.status_code == 403
    assert "fallback is 'none'" in str(caught.value)


async def test_a_400_that_is_not_about_logprobs_is_not_a_fallback() -> None:
    backend = Backend(
        lambda body: httpx.Response(400, json={"error": {"message": "context length exceeded"}})
    )
    with pytest.raises(ProviderError) as caught:
        await provider_for(backend).decide(one_choice())
    assert caught.value.code == "invalid_request"
    assert len(backend.requests) == 1


# ---------------------------------------------------------------- transport overrides


class SyncOnly(httpx.BaseTransport):
    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.backend.sync_handle(request)


def reply_for_anything(body: dict[str, Any]) -> dict[str, Any]:
    return logprobs_reply([("A", lp(0.5)), ("yes", lp(0.3)), ("1", lp(0.2))])


@pytest.mark.parametrize(
    "kind", ["async transport", "sync transport", "async client", "sync client"]
)
async def test_every_request_goes_through_the_override(kind: str) -> None:
    backend = Backend(reply_for_anything)
    override: Any
    if kind == "async transport":
        override = backend.transport
    elif kind == "sync transport":
        override = SyncOnly(backend)
    elif kind == "async client":
        override = httpx.AsyncClient(transport=backend.transport, headers={"X-Client": "mine"})
    else:
        override = httpx.Client(transport=SyncOnly(backend), headers={"X-Client": "mine"})
    provider = OpenAICompatibleDecisionProvider(base_url=BASE_URL, transport=override)
    result = await provider.decide(make_request())
    await provider.decide(make_request())  # the override is not closed after one decision
    assert len(backend.requests) == 6
    assert result.choice("route").choice == "billing"
    if "client" in kind:
        assert backend.requests[0].headers["x-client"] == "mine"
        if isinstance(override, httpx.AsyncClient):
            await override.aclose()
        else:
            override.close()


@pytest.mark.parametrize("body", ["read", "streamed"])
async def test_gzip_bodies_through_a_sync_transport_are_decoded_once(body: str) -> None:
    import gzip

    payload = gzip.compress(json.dumps(logprobs_reply([("A", lp(0.5)), ("B", lp(0.5))])).encode())
    headers = {"content-encoding": "gzip", "content-type": "application/json"}

    def handler(request: httpx.Request) -> httpx.Response:
        if body == "read":
            return httpx.Response(200, content=payload, headers=headers)
        return httpx.Response(200, stream=httpx.ByteStream(payload), headers=headers)

    class Sync(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            return handler(request)

    result = await OpenAICompatibleDecisionProvider(base_url=BASE_URL, transport=Sync()).decide(
        one_choice(a=None, b=None)
    )
    assert result.choice("route").probabilities == pytest.approx({"a": 0.5, "b": 0.5})


# ---------------------------------------------------------------- models, factory, abort


async def test_get_models_through_the_transport() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url == httpx.URL(f"{BASE_URL}/models")
        return httpx.Response(
            200,
            json={
                "object": "list",
                "data": [{"id": "smollm2-135m-instruct", "owned_by": "me"}, {"id": "other"}],
            },
        )

    provider = provider_for(httpx.MockTransport(handler))
    models = await provider.get_models()
    assert [(m.id, m.owned_by) for m in models] == [
        ("smollm2-135m-instruct", "me"),
        ("other", None),
    ]
    assert [m.id for m in await provider.get_models("SMOL")] == ["smollm2-135m-instruct"]


@pytest.mark.parametrize("failure", ["status", "body", "network"])
async def test_get_models_returns_nothing_on_failure(failure: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if failure == "network":
            raise httpx.ConnectError("down", request=request)
        if failure == "status":
            return httpx.Response(401, json={"error": "no"})
        return httpx.Response(200, text="not json")

    assert await provider_for(httpx.MockTransport(handler)).get_models() == []


async def test_the_factory_resolves_slots_and_builds_a_working_provider() -> None:
    assert set(openai_compatible.config_slots) == {"api_key", "base_url", "model", "timeout"}
    assert openai_compatible.config_slots["api_key"].default_env == "OPENAI_API_KEY"
    backend = standard_backend()
    config = openai_compatible.resolve(
        ProviderFactoryConfig(transport=backend.transport, options={"model": "dflt"}),
        environ={"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": BASE_URL},
    )
    provider = openai_compatible(config)
    assert (provider.api_key, provider.base_url, provider.model, provider.timeout) == (
        "sk-env",
        BASE_URL,
        "dflt",
        60000.0,
    )
    request = make_request()
    request.model = ""
    await provider.decide(request)
    assert backend.requests[0].headers["authorization"] == "Bearer sk-env"
    assert backend.bodies[0]["model"] == "dflt"


async def test_a_pre_aborted_signal_sends_nothing() -> None:
    backend = standard_backend()
    controller = AbortController()
    controller.abort("cancelled by the user")
    request = make_request()
    request.signal = controller.signal
    with pytest.raises(ProviderError) as caught:
        await provider_for(backend).decide(request)
    assert caught.value.code == "timeout"
    assert backend.requests == []


async def test_an_abort_during_the_requests_cancels_them() -> None:
    controller = AbortController()
    started = asyncio.Event()
    cancelled = []

    async def hang(body: dict[str, Any]) -> Any:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(body)
            raise
        raise AssertionError("not reached")

    request = make_request()
    request.signal = controller.signal
    task = asyncio.create_task(provider_for(Backend(hang)).decide(request))
    await asyncio.wait_for(started.wait(), 5)
    controller.abort("deadline")
    with pytest.raises(ProviderError) as caught:
        await asyncio.wait_for(task, 5)
    assert caught.value.code == "timeout"
    assert "deadline" in str(caught.value)
    assert len(cancelled) == 3


def test_the_sync_wrapper() -> None:
    result = provider_for(standard_backend()).decide_sync(make_request())
    assert result.choice("route").choice == "billing"
    assert math.isclose(sum(result.choice("route").probabilities.values()), 1.0)


def test_bad_construction_arguments_are_refused() -> None:
    for kwargs, message in (
        ({"top_logprobs": 0}, "top_logprobs"),
        ({"top_logprobs": 21}, "top_logprobs"),
        ({"fallback": "guess"}, "fallback"),
        ({"samples": 0}, "samples"),
        ({"min_label_mass": 2}, "min_label_mass"),
        ({"timeout": 0}, "timeout"),
        ({"max_concurrency": 0}, "max_concurrency"),
    ):
        with pytest.raises(ValueError, match=message):
            OpenAICompatibleDecisionProvider(**kwargs)  # type: ignore[arg-type]


# ---------------------------------------------------------------- property


@settings(max_examples=60, deadline=None)
@given(
    top=st.lists(
        st.tuples(
            st.sampled_from(["A", " A", "b", '"B', "C", "The", "yes", "\u2581a", "0"]),
            st.floats(allow_nan=True, allow_infinity=True)
            | st.sampled_from([-9999.0, -0.5, -2.0, 0.0]),
        ),
        max_size=20,
    )
)
def test_any_logprob_reply_gives_a_valid_result_or_a_provider_error(
    top: list[tuple[str, float]],
) -> None:
    def reply(body: dict[str, Any]) -> httpx.Response:
        data = logprobs_reply(top) if top else logprobs_reply([("A", -0.1)], sampled=("x", -0.2))
        return httpx.Response(200, text=json.dumps(data))  # NaN and Infinity as JSON literals

    request = one_choice()
    outcome: Any
    try:
        outcome = provider_for(Backend(reply), fallback="none").decide_sync(request)
    except ProviderError as error:
        outcome = error
    if isinstance(outcome, ProviderError):
        assert outcome.code == "unknown"
    else:
        validate_result(request, outcome, tolerance=1e-9)
