"""A pick that copies an example of the menu's ``Call:`` line is re-asked, saying so: the
placeholder exactly, without its brackets (what is left when a grammar forbids a leading ``<``),
or inside a longer text; numbers and booleans show a slot (``<int>``) that no answer can be
mistaken for; and the examples of allowed values are values the validator takes."""

from __future__ import annotations

import datetime
import json
from typing import Annotated, Any, Literal

import pytest

from fake_runtimes import ScriptedRuntime, pick
from pytest_opdecide import DecisionError, Param, decision


def ship(name: str, boxes: list[str], day: datetime.date) -> str:
    """Ship boxes."""
    return f"{name} {boxes} {day}"


GOOD = {"name": "Ada", "boxes": ["B-1"], "day": "2024-05-01"}


def reply(**changed: Any) -> str:
    return json.dumps({"call": "ship", "args": {**GOOD, **changed}})


@pytest.mark.parametrize(
    ("changed", "problem"),
    [
        (
            {"name": "str"},
            'Field \'name\' is "str", the placeholder "<str>" of the Call: example without '
            "its brackets; send a real value instead",
        ),
        (
            {"name": " Str "},
            'Field \'name\' is " Str ", the placeholder "<str>" of the Call: example without '
            "its brackets; send a real value instead",
        ),
        (
            {"boxes": ["... boxes: [<str>]"]},
            'Field \'boxes[0]\' is "... boxes: [<str>]", which holds the placeholder "<str>" '
            "copied from the Call: example; send a real value instead",
        ),
        (
            {"name": "date YYYY-MM-DD"},
            'Field \'name\' is "date YYYY-MM-DD", the placeholder "<date YYYY-MM-DD>" of the '
            "Call: example without its brackets; send a real value instead",
        ),
        (
            {"name": "<str>"},
            "Field 'name' is \"<str>\", the placeholder copied from the Call: example; send a "
            "real value instead",
        ),
    ],
)
def test_a_copied_example_is_re_asked_saying_so(changed: dict[str, Any], problem: str) -> None:
    runtime = ScriptedRuntime(reply(**changed), pick("ship", **GOOD))
    assert decision.make("Ship it.", {"ship": ship}, runtime=runtime) == ("Ada ['B-1'] 2024-05-01")
    assert [call.kind for call in runtime.calls] == ["turn", "repick"]
    assert f"Problem: {problem}\n" in runtime.calls[1].prompt


def test_a_copy_at_every_attempt_is_a_decision_error() -> None:
    runtime = ScriptedRuntime(reply(name="str"), reply(name="STR"))
    with pytest.raises(DecisionError) as caught:
        decision.make("Ship it.", {"ship": ship}, runtime=runtime)
    assert caught.value.kind == "invalid_value"


@pytest.mark.parametrize("text", ["strong", "Main street", "a <b> c", "string theory", "dates"])
def test_real_texts_that_look_alike_pass(text: str) -> None:
    runtime = ScriptedRuntime(reply(name=text))
    assert decision.make("Ship it.", {"ship": ship}, runtime=runtime).startswith(text)


def scan(resolution: Annotated[int, Param("dpi", options=[300, 600, 1200])]) -> int:
    """Scan a page."""
    return resolution


def size(n: Literal[1, 2, 3], ratio: Literal[0.5, 1.5], flag: Literal[True]) -> Any:
    return n, ratio, flag


def test_non_string_options_are_shown_as_the_json_the_validator_takes() -> None:
    menu = decision.render_options({"scan": scan, "size": size})
    assert "    resolution: dpi (options: 300, 600, 1200)\n" in menu
    assert '    Call: {"call": "scan", "args": {"resolution": 300}}\n' in menu
    assert "    n (options: 1, 2, 3)\n" in menu
    assert "    ratio (options: 0.5, 1.5)\n" in menu
    assert "    flag (options: true)\n" in menu
    assert '"args": {"n": 1, "ratio": 0.5, "flag": true}' in menu


def test_the_menus_example_of_an_option_field_is_accepted() -> None:
    # A model that copies the Call: line gets a valid pick, never type_mismatch on "300".
    for options in ({"scan": scan}, {"size": size}):
        menu = decision.render_options(options)
        line = next(line for line in menu.splitlines() if "Call:" in line)
        copied = line.split("Call: ", 1)[1]
        runtime = ScriptedRuntime(copied)
        decision.make("Go.", options, runtime=runtime, max_retries=0)


def order(pages: int, duplex: bool, ratio: float, note: str) -> tuple[int, bool, float, str]:
    """Print an order."""
    return pages, duplex, ratio, note


ORDER = {"pages": 3, "duplex": True, "ratio": 1.5, "note": "rush"}


def test_numbers_and_booleans_have_no_example_to_copy() -> None:
    # 0 and false (the reference's examples) would be answers a copy cannot be told from.
    line = decision.render_options({"order": order}).splitlines()[-1]
    assert line == (
        '    Call: {"call": "order", "args": {"pages": <int>, "duplex": <bool>, '
        '"ratio": <float>, "note": "<str>"}}'
    )


@pytest.mark.parametrize(
    ("copied", "slot", "wanted"),
    [
        ('"pages": <int>', "<int>", "an integer"),
        ('"duplex": <bool>', "<bool>", "true or false"),
        ('"ratio": <float>', "<float>", "a number"),
    ],
)
def test_a_copied_slot_is_re_asked_saying_so(copied: str, slot: str, wanted: str) -> None:
    key = copied.split('"')[1]
    args = json.dumps({k: v for k, v in ORDER.items() if k != key})
    first = '{"call": "order", "args": ' + args[:-1] + ", " + copied + "}}"
    runtime = ScriptedRuntime(first, pick("order", **ORDER))
    assert decision.make("Print it.", {"order": order}, runtime=runtime) == (3, True, 1.5, "rush")
    assert runtime.calls[1].prompt.split("Problem: ")[1].split("\n")[0] == (
        f"Reply contained no parseable JSON with a 'call' field: it copies {slot} from the "
        f"Call: example of 'order', a placeholder and no JSON value; write {wanted} in its "
        "place."
    )


def test_a_quoted_slot_is_a_copy_too() -> None:
    runtime = ScriptedRuntime(
        json.dumps({"call": "order", "args": {**ORDER, "note": "<int>"}}), pick("order", **ORDER)
    )
    decision.make("Print it.", {"order": order}, runtime=runtime)
    assert (
        "Problem: Field 'note' is \"<int>\", the placeholder copied from the Call: example; "
        "send a real value instead\n"
    ) in runtime.calls[1].prompt


def test_a_text_that_names_a_type_is_no_copy() -> None:
    # The brackets make a slot: "int" or "bool" may be a text field's real answer.
    runtime = ScriptedRuntime(json.dumps({"call": "order", "args": {**ORDER, "note": "bool"}}))
    assert decision.make("Print it.", {"order": order}, runtime=runtime)[3] == "bool"


def test_a_reply_without_a_slot_keeps_the_plain_message() -> None:
    runtime = ScriptedRuntime("I would print it. <b>ok</b>", pick("order", **ORDER))
    decision.make("Print it.", {"order": order}, runtime=runtime)
    assert "Problem: Reply contained no parseable JSON with a 'call' field.\n" in (
        runtime.calls[1].prompt
    )
