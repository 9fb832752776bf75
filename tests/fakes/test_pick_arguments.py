"""A strict scripted pick is checked to the field against the option that was offered.

Each failure is a ``ScriptMismatch`` naming the step, the field, what the option takes and the
fix; the messages are pinned in full.
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from typing import Annotated, Any, Literal

import pytest

from fake_runtimes import FunctionRuntime, ScriptedRuntime, ScriptMismatch, pick
from pytest_opdecide import DecisionError, FromContext, decision


def book_flight(
    destination: str,
    passengers: int,
    cabin: Literal["economy", "business"] = "economy",
    order_id: Annotated[str, FromContext()] = "",
) -> str:
    """Book a flight."""
    return f"{destination} x{passengers} {cabin}"


def reserve(day: datetime.date, fare: decimal.Decimal, ref: uuid.UUID, seats: set[str]) -> Any:
    """Reserve seats."""
    return (day, fare, ref, seats)


OPTIONS: dict[str, Any] = {
    "book_flight": book_flight,
    "wait": ("WAIT", "Nothing to do yet."),
    "plan": ("Plan the trip.", {"steps": [{"action": str}], "budget": int}),
}
TAKES = (
    "'book_flight' takes: destination: str, passengers: int, cabin: str (one of ['economy', "
    "'business']) = 'economy'."
)


def mismatch(step: Any, options: Any = OPTIONS, **kwargs: Any) -> str:
    with pytest.raises(ScriptMismatch) as caught:
        decision.make("Book it.", options, runtime=ScriptedRuntime(step), **kwargs)
    return str(caught.value)


class TestArgumentNames:
    def test_a_misspelt_argument_gets_did_you_mean(self) -> None:
        step = pick("book_flight", destination="Oslo", passengers=2, cabn="business")
        assert mismatch(step) == (
            "ScriptedRuntime: step 0 picks 'book_flight' with the argument 'cabn', which "
            "'book_flight' does not take (did you mean 'cabin'?).\n"
            f"{TAKES}\n"
            "Rename or remove the argument in the step."
        )

    def test_an_unknown_argument_without_a_close_name(self) -> None:
        step = pick("book_flight", destination="Oslo", passengers=2, pets=True)
        assert mismatch(step).splitlines()[0] == (
            "ScriptedRuntime: step 0 picks 'book_flight' with the argument 'pets', which "
            "'book_flight' does not take."
        )

    def test_an_argument_to_a_value_option(self) -> None:
        assert mismatch(pick("wait", reason="slow")) == (
            "ScriptedRuntime: step 0 picks 'wait' with the argument 'reason', which 'wait' does "
            "not take.\n"
            "'wait' takes: no arguments.\n"
            "Remove the arguments from the step: pick('wait')."
        )

    def test_a_misspelt_schema_field(self) -> None:
        step = pick("plan", steps=[], budgt=100)
        assert mismatch(step) == (
            "ScriptedRuntime: step 0 picks 'plan' with the argument 'budgt', which 'plan' does "
            "not take (did you mean 'budget'?).\n"
            "'plan' takes: steps: list, budget: int.\n"
            "Rename or remove the argument in the step."
        )

    def test_a_value_for_a_context_parameter_is_a_forgery_the_test_may_send(self) -> None:
        runtime = ScriptedRuntime(
            pick("book_flight", destination="Oslo", passengers=1, order_id="FORGED")
        )
        assert decision.make("Book.", OPTIONS, runtime=runtime, context={"order_id": "A"}) == (
            "Oslo x1 economy"
        )


class TestMissingArguments:
    def test_one(self) -> None:
        assert mismatch(pick("book_flight", passengers=2)) == (
            "ScriptedRuntime: step 0 picks 'book_flight' without the required argument "
            "'destination'.\n"
            f"{TAKES}\n"
            "Add destination=... to the step."
        )

    def test_several(self) -> None:
        assert mismatch(pick("plan")) == (
            "ScriptedRuntime: step 0 picks 'plan' without the required arguments 'steps', "
            "'budget'.\n"
            "'plan' takes: steps: list, budget: int.\n"
            "Add steps=..., budget=... to the step."
        )

    def test_a_missing_nested_field(self) -> None:
        assert mismatch(pick("plan", steps=[{"acton": "go"}], budget=1)) == (
            "ScriptedRuntime: step 0 picks 'plan', but call #0 (turn) would refuse it: Field "
            "'steps[0]' is missing nested field 'action'.\n"
            "'plan' takes: steps: list, budget: int.\n"
            "Give steps a value the option accepts in the step."
        )


class TestValues:
    def test_a_wrong_type_is_caught_at_its_call_not_as_an_exhausted_script(self) -> None:
        step = pick("book_flight", destination="Oslo", passengers="two")
        assert mismatch(step) == (
            "ScriptedRuntime: step 0 picks 'book_flight', but call #0 (turn) would refuse it: "
            "Field 'passengers' must be int, got str ('two').\n"
            f"{TAKES}\n"
            "Give passengers a value the option accepts in the step."
        )

    def test_a_value_not_allowed(self) -> None:
        step = pick("book_flight", destination="Oslo", passengers=2, cabin="first")
        assert mismatch(step).splitlines()[0] == (
            "ScriptedRuntime: step 0 picks 'book_flight', but call #0 (turn) would refuse it: "
            "Field 'cabin' must be one of ['economy', 'business'], got 'first'."
        )

    def test_a_copied_placeholder(self) -> None:
        step = pick("book_flight", destination="<str>", passengers=2)
        assert mismatch(step).splitlines()[0] == (
            "ScriptedRuntime: step 0 picks 'book_flight', but call #0 (turn) would refuse it: "
            "Field 'destination' is \"<str>\", the placeholder copied from the Call: example; "
            "send a real value instead."
        )

    def test_typed_values_are_written_as_json_and_checked(self) -> None:
        ref = uuid.UUID(int=7)
        step = pick(
            "reserve",
            day=datetime.date(2024, 5, 1),
            fare=decimal.Decimal("9.90"),
            ref=ref,
            seats={"1A"},
        )
        assert step.text == (
            '{"call": "reserve", "args": {"day": "2024-05-01", "fare": "9.90", "ref": '
            '"00000000-0000-0000-0000-000000000007", "seats": ["1A"]}}'
        )
        result = decision.make("Reserve.", {"reserve": reserve}, runtime=ScriptedRuntime(step))
        assert result == (datetime.date(2024, 5, 1), decimal.Decimal("9.90"), ref, {"1A"})
        bad = pick("reserve", day="May 1st", fare=1, ref=ref, seats=[])
        assert mismatch(bad, {"reserve": reserve}).splitlines()[0] == (
            "ScriptedRuntime: step 0 picks 'reserve', but call #0 (turn) would refuse it: "
            "Field 'day' must be date, got str ('May 1st'): Input should be a valid date in the "
            "format YYYY-MM-DD, input is too short."
        )

    def test_a_value_json_cannot_carry_is_refused_when_the_step_is_written(self) -> None:
        with pytest.raises(TypeError) as caught:
            pick("reserve", day=object)
        assert str(caught.value) == (
            "pick('reserve'): the argument day=<class 'object'> cannot be sent as JSON (Unable "
            "to serialize unknown type: <class 'type'>); give a value a model could write"
        )


class TestOptionNames:
    def test_a_misspelt_option_gets_did_you_mean_and_no_raw_text_hint(self) -> None:
        assert mismatch(pick("book_flght", destination="Oslo", passengers=2)) == (
            "ScriptedRuntime: step 0 picks 'book_flght', but call #0 (turn) offered options "
            "['book_flight', 'wait', 'plan']. Did you mean 'book_flight'?"
        )

    def test_an_option_left_out_gets_the_raw_text_hint(self) -> None:
        assert mismatch(pick("cancel_order")) == (
            "ScriptedRuntime: step 0 picks 'cancel_order', but call #0 (turn) offered options "
            "['book_flight', 'wait', 'plan'].\n"
            "To send a pick of an option that was not offered, script the raw reply text "
            """instead: '{"call": "cancel_order"}'"""
        )


class TestWhereTheCheckApplies:
    def test_in_a_repick(self) -> None:
        runtime = ScriptedRuntime("no pick", pick("plan", steps=[], budget="lots"))
        with pytest.raises(ScriptMismatch, match=r"^ScriptedRuntime: step 1 picks 'plan', but "):
            decision.make("Plan.", OPTIONS, runtime=runtime)

    def test_in_a_working_turn(self) -> None:
        runtime = ScriptedRuntime(pick("book_flight", destination="Oslo"))
        with pytest.raises(ScriptMismatch, match="without the required argument 'passengers'"):
            runtime.exec("Book.", choices=OPTIONS)

    def test_a_function_runtime_names_its_function(self) -> None:
        runtime = FunctionRuntime(lambda call: pick("plan", steps="none", budget=1))
        with pytest.raises(ScriptMismatch) as caught:
            decision.make("Plan.", OPTIONS, runtime=runtime)
        assert str(caught.value).startswith(
            "FunctionRuntime: the function's step picks 'plan', but call #0 (turn) would "
            "refuse it: Field 'steps' must be a list, got str."
        )

    async def test_on_the_async_path(self) -> None:
        runtime = ScriptedRuntime(pick("book_flight", destination="Oslo", passengers=1, cabn="x"))
        with pytest.raises(ScriptMismatch, match="did you mean 'cabin'"):
            await decision.make_async("Book.", OPTIONS, runtime=runtime)

    def test_a_loose_fake_sends_the_pick_as_is_and_the_parser_answers(self) -> None:
        runtime = ScriptedRuntime(
            pick("book_flight", destination="Oslo", passengers="two"), strict=False
        )
        with pytest.raises(DecisionError) as caught:
            decision.make("Book.", OPTIONS, runtime=runtime, max_retries=0)
        assert caught.value.message == "Field 'passengers' must be int, got str ('two')"

    def test_a_valid_pick_passes(self) -> None:
        step = pick("book_flight", destination="Oslo", passengers=2, cabin="business")
        assert decision.make("Book.", OPTIONS, runtime=ScriptedRuntime(step)) == (
            "Oslo x2 business"
        )

    def test_a_pick_accepted_once_is_checked_again_when_its_option_changed(self) -> None:
        # Valid picks are remembered by their text and the option's checks; the same text
        # against an option that now takes another type is refused, closures included.
        runtime = FunctionRuntime(lambda call: pick("plan", budget="ten"))

        def menu(budget_type: type) -> dict[str, Any]:
            def plan(budget: str) -> str:
                """Plan."""
                return budget

            if budget_type is int:

                def plan(budget: int) -> str:  # type: ignore[misc]  # the same name, another type
                    """Plan."""
                    return str(budget)

            return {"plan": plan, "schema": ("Plan.", {"budget": budget_type})}

        for _ in range(2):
            assert decision.make("Plan.", menu(str), runtime=runtime) == "ten"
        with pytest.raises(ScriptMismatch, match="Field 'budget' must be int, got str"):
            decision.make("Plan.", menu(int), runtime=runtime)
        schema_pick = FunctionRuntime(lambda call: pick("schema", budget="ten"))
        assert decision.make("Plan.", menu(str), runtime=schema_pick) == {
            "decision": "schema",
            "budget": "ten",
        }
        with pytest.raises(ScriptMismatch, match="Field 'budget' must be int, got str"):
            decision.make("Plan.", menu(int), runtime=schema_pick)
