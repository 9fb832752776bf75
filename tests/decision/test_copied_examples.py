"""A pick that copies an example of the menu's ``Call:`` line is re-asked, saying so: the
placeholder exactly, without its brackets (what is left when a grammar forbids a leading ``<``),
or inside a longer text; and the examples of allowed values are values the validator takes."""

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
