"""``SeededRuntime``: seeded picks of offered options with schema-valid arguments."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pydantic
import pytest

from fake_runtimes import SeededRuntime
from pytest_opdecide import Agent, agent, agent_async, decision
from pytest_opdecide.options import CannotGenerate

from ._fresh_process import json_from_fresh_process
from ._typed_options import TYPED_OPTIONS, Color, Customer, LineItem, Priority, update_ticket

SEEDS = range(40)
CONTEXT = {"ticket_id": "T-42"}


def picks(seed: int, decisions: int = 5) -> list[str]:
    """The reply texts of ``decisions`` decisions made with ``SeededRuntime(seed)``."""
    runtime = SeededRuntime(seed)
    for i in range(decisions):
        decision.make(f"Decision {i}.", TYPED_OPTIONS, runtime=runtime, context=CONTEXT)
    return [c.reply.text for c in runtime.calls if c.reply is not None]


def args_of(runtime: SeededRuntime) -> dict[str, Any]:
    """The arguments of the runtime's last pick."""
    reply = runtime.last_call.reply
    assert reply is not None
    parsed: dict[str, Any] = json.loads(reply.text)
    return parsed.get("args", {})


class TestDeterminism:
    def test_the_same_seed_gives_the_same_picks(self) -> None:
        assert picks(7) == picks(7)

    def test_different_seeds_give_different_picks(self) -> None:
        assert len({tuple(picks(seed)) for seed in range(5)}) == 5

    def test_the_same_picks_in_a_fresh_process(self) -> None:
        code = """
            import json
            from fakes.test_seeded_runtime import picks
            print(json.dumps([picks(seed) for seed in (0, 1, 2)]))
        """
        expected = [picks(seed) for seed in (0, 1, 2)]
        assert json_from_fresh_process(code, hash_seed="12345") == expected

    async def test_the_async_path_gives_the_same_picks(self) -> None:
        runtime = SeededRuntime(7)
        for i in range(5):
            await decision.make_async(
                f"Decision {i}.", TYPED_OPTIONS, runtime=runtime, context=CONTEXT
            )
        assert [c.reply.text for c in runtime.calls if c.reply is not None] == picks(7)


class TestPicks:
    def test_only_offered_options_are_picked_and_each_gets_picked(self) -> None:
        chosen = {json.loads(text)["call"] for seed in SEEDS for text in picks(seed, 2)}
        assert chosen == set(TYPED_OPTIONS)

    @pytest.mark.parametrize("seed", SEEDS)
    def test_every_pick_resolves_on_the_first_attempt(self, seed: int) -> None:
        runtime = SeededRuntime(seed)
        decision.make("Decide.", TYPED_OPTIONS, runtime=runtime, context=CONTEXT, max_retries=0)
        assert [c.kind for c in runtime.calls] == ["turn"]

    def test_the_seed_is_kept(self) -> None:
        assert SeededRuntime(3).seed == 3
        assert SeededRuntime().seed == 0

    def test_a_call_without_options_gets_seeded_text(self) -> None:
        first = SeededRuntime(1).exec("Say something.")
        assert first == SeededRuntime(1).exec("Say something.")
        assert isinstance(first, str)
        assert first.endswith(".")
        assert len(first.split()) == 8

    def test_a_working_turn_with_tools_and_choices_ends_in_a_pick(self) -> None:
        def lookup_order(order_id: str) -> str:
            """Look up an order."""
            return "shipped"

        runtime = SeededRuntime(2, tools=[lookup_order])
        result = runtime.exec("Handle it.", choices={"refund": "R", "escalate": "E"})
        assert result in {"R", "E"}
        assert runtime.last_call.tools == ["lookup_order"]

    def test_it_is_always_strict(self) -> None:
        assert SeededRuntime().strict is True

    def test_agent_and_agent_async(self) -> None:
        class Router(Agent):
            def route(self) -> Any:
                return agent("Route.", choices=["a", "b", "c"])

            async def route_async(self) -> Any:
                return await agent_async("Route.", choices=["a", "b", "c"])

        router = Router(SeededRuntime(4))
        assert router.route() in {"a", "b", "c"}
        assert asyncio.run(router.route_async()) in {"a", "b", "c"}


class TestEveryFieldType:
    """A pick of ``update_ticket`` fills each annotation with a value of its type."""

    @pytest.fixture(params=SEEDS)
    def resolved(self, request: pytest.FixtureRequest) -> tuple[dict[str, Any], SeededRuntime]:
        runtime = SeededRuntime(request.param)
        result = decision.make(
            "Update.", {"update_ticket": update_ticket}, runtime=runtime, context=CONTEXT
        )
        assert len(runtime.calls) == 1
        return result, runtime

    def test_scalars(self, resolved: tuple[dict[str, Any], SeededRuntime]) -> None:
        result, _ = resolved
        assert type(result["title"]) is str
        assert type(result["count"]) is int
        assert type(result["ratio"]) is float
        assert type(result["urgent"]) is bool
        assert type(result["tags"]) is list
        assert type(result["extra"]) is dict

    def test_allowed_values(self, resolved: tuple[dict[str, Any], SeededRuntime]) -> None:
        result, _ = resolved
        assert result["kind"] in ("bug", "question")
        assert isinstance(result["color"], Color)
        assert isinstance(result["priority"], Priority)
        assert result["team"] in ("ops", "billing")

    def test_optional_and_union(self, resolved: tuple[dict[str, Any], SeededRuntime]) -> None:
        result, _ = resolved
        assert result["assignee"] is None or type(result["assignee"]) is str
        assert type(result["ref"]) in (int, str)
        assert result["limit"] is None or type(result["limit"]) is int

    def test_objects(self, resolved: tuple[dict[str, Any], SeededRuntime]) -> None:
        result, _ = resolved
        assert set(result["address"]) == {"street", "zip_code"}
        assert type(result["address"]["zip_code"]) is int
        assert isinstance(result["item"], LineItem)
        assert isinstance(result["customer"], Customer)
        assert result["items"]
        assert all(isinstance(item, LineItem) for item in result["items"])
        assert all(type(v) is int for v in result["counts"].values())

    def test_hidden_parameters_come_from_the_caller(
        self, resolved: tuple[dict[str, Any], SeededRuntime]
    ) -> None:
        result, runtime = resolved
        assert result["ticket_id"] == "T-42"
        assert result["runtime"] is runtime
        assert "ticket_id" not in args_of(runtime)
        assert "runtime" not in args_of(runtime)


def test_optional_fields_are_sometimes_filled_and_sometimes_left_out() -> None:
    # pydantic-ai's TestModel never fills optional fields, so code using them goes untested.
    present = []
    for seed in SEEDS:
        runtime = SeededRuntime(seed)
        decision.make("Update.", {"update_ticket": update_ticket}, runtime=runtime, context=CONTEXT)
        present.append("note" in args_of(runtime))
    assert any(present)
    assert not all(present)


def test_nested_lists_of_objects_and_meta_specs() -> None:
    options = {"plan": TYPED_OPTIONS["plan"], "classify": TYPED_OPTIONS["classify"]}
    for seed in SEEDS:
        result = decision.make("Decide.", options, runtime=SeededRuntime(seed), max_retries=0)
        if result["decision"] == "plan":
            assert result["steps"]
            for step in result["steps"]:
                assert set(step) == {"action", "target"}
        else:
            assert result["label"] in ("spam", "ham")
            assert result["score"] in (1, 2, 3)
            assert all(type(e["line"]) is int for e in result["evidence"])
            assert result["meta"]["lang"] in ("en", "fr")


def test_list_form_options() -> None:
    def escalate(team: str, urgent: bool = False) -> str:
        return f"paged {team}"

    options = ["close", ("wait", "Wait for the customer."), escalate]
    results = {decision.make("D.", options, runtime=SeededRuntime(s)) for s in SEEDS}
    assert {"close", "wait"} < results
    assert any(r.startswith("paged ") for r in results)


class Sku(pydantic.BaseModel):
    code: str = pydantic.Field(pattern=r"^[A-Z]{3}-\d{4}$")


def order(sku: Sku) -> str:
    return sku.code


def test_an_option_it_cannot_fill_fails_clearly() -> None:
    # Patterns are beyond the generator; it says so at once, instead of trying 20 times.
    with pytest.raises(ValueError, match=r"^Cannot generate") as caught:
        decision.make("Order.", {"order": order}, runtime=SeededRuntime(0))
    message = str(caught.value)
    assert message == (
        "Cannot generate valid arguments for option 'order': field 'sku.code' must match the "
        "pattern '^[A-Z]{3}-\\\\d{4}$', and the value generator writes no text for regular "
        "expressions; script its pick by hand"
    )
    assert isinstance(caught.value, CannotGenerate)
