"""``every_option``: one schema-valid scripted pick per option, for ``pytest.mark.parametrize``."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

from fake_runtimes import Pick, ScriptedRuntime, every_option
from pytest_opdecide import decision

from ._fresh_process import json_from_fresh_process
from ._typed_options import TYPED_OPTIONS, Color

CONTEXT = {"ticket_id": "T-42"}


def test_one_pick_per_option_in_menu_order() -> None:
    steps = every_option(TYPED_OPTIONS)
    assert all(isinstance(step, Pick) for step in steps)
    assert [step.option for step in steps] == list(TYPED_OPTIONS)


@pytest.mark.parametrize("step", every_option(TYPED_OPTIONS), ids=lambda step: step.option)
def test_each_pick_resolves(step: Pick) -> None:
    runtime = ScriptedRuntime(step)
    result = decision.make(
        "Decide.", TYPED_OPTIONS, runtime=runtime, context=CONTEXT, max_retries=0
    )
    runtime.assert_complete()
    if step.option == "update_ticket":
        assert isinstance(result["color"], Color)
        assert result["ticket_id"] == "T-42"
    elif step.option == "done":
        assert result == "DONE"
    else:
        assert result["decision"] == step.option


@pytest.mark.parametrize("step", every_option(TYPED_OPTIONS), ids=lambda step: step.option)
async def test_each_pick_resolves_on_the_async_path(step: Pick) -> None:
    runtime = ScriptedRuntime(step)
    await decision.make_async("Decide.", TYPED_OPTIONS, runtime=runtime, context=CONTEXT)
    assert len(runtime.calls) == 1


@pytest.mark.parametrize("step", every_option(TYPED_OPTIONS), ids=lambda step: step.option)
def test_each_pick_closes_a_working_turn(step: Pick) -> None:
    runtime = ScriptedRuntime(step)
    runtime.exec("Work, then decide.", choices=TYPED_OPTIONS, context=CONTEXT)
    assert len(runtime.calls) == 1


def test_str_of_a_pick_is_a_readable_test_id() -> None:
    steps = every_option(["close", ("wait", "Wait for the customer.")])
    assert [str(step) for step in steps] == ["pick('close')", "pick('wait')"]


def test_the_same_seed_gives_the_same_picks() -> None:
    assert every_option(TYPED_OPTIONS, seed=3) == every_option(TYPED_OPTIONS, seed=3)
    assert every_option(TYPED_OPTIONS) == every_option(TYPED_OPTIONS, seed=0)


def test_another_seed_gives_other_arguments() -> None:
    args = {json.dumps(every_option(TYPED_OPTIONS, seed=s)[0].args) for s in range(5)}
    assert len(args) == 5


def test_the_same_picks_in_a_fresh_process() -> None:
    code = """
        import json
        from fake_runtimes import every_option
        from fakes._typed_options import TYPED_OPTIONS
        print(json.dumps([step.text for step in every_option(TYPED_OPTIONS, seed=11)]))
    """
    expected = [step.text for step in every_option(TYPED_OPTIONS, seed=11)]
    assert json_from_fresh_process(code, hash_seed="99") == expected


def test_malformed_options_fail_as_in_decision_make() -> None:
    with pytest.raises(TypeError, match=r"^options must be a dict or list, got int$"):
        every_option(3)
    with pytest.raises(ValueError, match=r"^Duplicate option name 'a' in options list$"):
        every_option(["a", "a"])


def test_an_option_that_cannot_be_filled_fails_with_advice() -> None:
    class Code(pydantic.BaseModel):
        value: int = pydantic.Field(gt=1000, lt=1001)

    options: dict[str, Any] = {"book": ("Book it.", {"code": Code})}
    with pytest.raises(ValueError, match=r"script its pick by hand$") as caught:
        every_option(options)
    assert str(caught.value) == (
        "Cannot generate valid arguments for option 'book': field 'code.value' must be an "
        "integer in (1000, 1001), and none is; script its pick by hand"
    )
