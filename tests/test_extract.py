"""``extract_action``: the last JSON object carrying a call key, found in linear time.

Examples pin the rules one by one; properties check them on generated replies, including a
comparison with a deliberately naive (quadratic, obviously faithful) reading of the same rules.
Speed is measured by ``benchmarks/bench_extract.py``, not here: the one large-input test below
only guards against hangs and recursion errors.
"""

from __future__ import annotations

import contextlib
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_opdecide import decision
from pytest_opdecide._nextstep import _extract
from pytest_opdecide._nextstep._extract import extract_action

PICK = {"call": "greet", "args": {"name": "ada"}}
PICK_TEXT = json.dumps(PICK)

# --- examples -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(f"```json\n{PICK_TEXT}\n```", id="fenced"),
        pytest.param(f"```\n{json.dumps(PICK, indent=2)}\n```", id="fenced-untagged-indented"),
        pytest.param(PICK_TEXT, id="bare"),
        pytest.param(f"I will greet her.\n\n```json\n{PICK_TEXT}\n```", id="prose-before"),
        pytest.param(f"{PICK_TEXT}\nThat greets her.", id="prose-after"),
        pytest.param(f'She said "hi".\n```json\n{PICK_TEXT}\n```\nDone, "ok"?', id="prose-quotes"),
        pytest.param(f"Use {{name}} as a placeholder.\n{PICK_TEXT}", id="prose-braces-before"),
        pytest.param(f"{PICK_TEXT}\nThen fill in {{name}}.", id="prose-braces-after"),
        pytest.param(f"{{see {PICK_TEXT}}}", id="prose-braces-around"),
        pytest.param(f"{{ my pick: ```json\n{PICK_TEXT}\n``` }}", id="prose-braces-around-fence"),
        pytest.param(f"[{PICK_TEXT}]", id="inside-a-list"),
        pytest.param(f"{{unclosed prose brace {PICK_TEXT}", id="after-an-unclosed-brace"),
    ],
)
def test_finds_the_pick(reply: str) -> None:
    assert extract_action(reply) == PICK


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        pytest.param('{"call": "a"} no, rather {"call": "b"}', "b", id="bare-bare"),
        pytest.param(
            '```json\n{"call": "a"}\n```\nor\n```json\n{"call": "b"}\n```', "b", id="fences"
        ),
        pytest.param(
            '```json\n{"call": "a"}\n```\nfinally {"call": "b"}', "b", id="fenced-then-bare"
        ),
        pytest.param('{"call": "a"}\n```json\n{"call": "b"}\n```', "b", id="bare-then-fenced"),
        pytest.param('[{"call": "a"}, {"call": "b"}]', "b", id="in-one-list"),
        pytest.param('{"call": "a"} then {"not": "a pick"} {oops}', "a", id="later-non-picks"),
        pytest.param('{"call": "a"} then {"call": "b"', "a", id="later-one-unfinished"),
    ],
)
def test_the_last_pick_wins(reply: str, expected: str) -> None:
    assert extract_action(reply) == {"call": expected}


@pytest.mark.parametrize("key", ["call", "action", "function", "tool"])
def test_every_call_key_counts(key: str) -> None:
    pick = {key: "greet", "args": {"name": "ada"}}
    assert extract_action(f"Here:\n{json.dumps(pick)}") == pick


def test_the_object_is_returned_as_parsed() -> None:
    pick = {"function": {"name": "greet", "arguments": '{"name": "ada"}'}, "extra": [1, None]}
    assert extract_action(f"```json\n{json.dumps(pick)}\n```") == pick


def test_nested_args() -> None:
    pick = {"call": "plan", "args": {"steps": [{"action": "go", "to": {"x": 1}}], "why": {}}}
    assert extract_action(f"Plan:\n{json.dumps(pick, indent=2)}\n") == pick


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("}", id="closing"),
        pytest.param("{", id="opening"),
        pytest.param("}{ {}} {{", id="mixed"),
        pytest.param('say "}" twice', id="escaped-quotes-around"),
        pytest.param('\\"}', id="escaped-backslash-then-quote"),
        pytest.param("back\\slash\\", id="trailing-backslash"),
        pytest.param("tab\tnew\nline", id="escaped-control-characters"),
    ],
)
def test_braces_and_quotes_inside_strings(value: str) -> None:
    pick = {"call": "say", "args": {"text": value}}
    assert extract_action(f"Saying it.\n{json.dumps(pick)}\nDone.") == pick


def test_escaped_quotes() -> None:
    reply = r'{"call": "say", "args": {"text": "she said \"{hi}\" \\"}}'
    assert extract_action(reply) == {"call": "say", "args": {"text": 'she said "{hi}" \\'}}


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param('{"result": {"call": "x"}}', id="data-hides-its-inside"),
        pytest.param('{"name": "ada"}', id="no-call-key"),
        pytest.param('{"args": {"name": "ada"}, "note": "call"}', id="call-only-as-a-value"),
        pytest.param("call greet", id="no-json"),
        pytest.param('{call: "greet"}', id="unquoted-key"),
        pytest.param("{'call': 'greet'}", id="single-quotes"),
        pytest.param('{"call": "greet",}', id="trailing-comma"),
        pytest.param('{"call": "greet"', id="unclosed"),
        pytest.param('"call": "greet"}', id="unopened"),
        pytest.param('{"call": "gr\neet"}', id="raw-newline-in-a-string"),
        pytest.param('{"call": "greet", "args": {"x": NaN}}', id="nan"),
        pytest.param('{"call": "greet", "args": {"x": Infinity}}', id="infinity"),
        pytest.param('{"call": "greet", "args": {"x": -Infinity}}', id="minus-infinity"),
        pytest.param('["call", "greet"]', id="a-list"),
        pytest.param('{"call" "greet"}', id="missing-colon"),
    ],
)
def test_no_pick(reply: str) -> None:
    assert extract_action(reply) is None


def test_data_without_a_call_key_does_not_hide_a_later_pick() -> None:
    assert extract_action('{"result": {"call": "x"}} so {"call": "y"}') == {"call": "y"}


def test_invalid_json_is_skipped_for_an_earlier_pick() -> None:
    assert extract_action('{"call": "a"} and {"call": "b", oops}') == {"call": "a"}


def test_a_failed_outer_object_is_looked_inside() -> None:
    reply = '{"a": {"b" 1}, "c": {"call": "inner"}, "d": {"call": "last"} oops}'
    assert extract_action(reply) == {"call": "last"}


def test_nan_rejection_spares_a_valid_sibling() -> None:
    assert extract_action('{"call": "a", "x": NaN} {"call": "b"}') == {"call": "b"}


def test_a_stray_prose_quote_does_not_swallow_the_pick() -> None:
    reply = '{I think "the best} one is {"call": "greet"}'
    assert extract_action(reply) == {"call": "greet"}


def test_a_newline_ends_a_stray_quote() -> None:
    reply = '{ "quoted but never closed\n{"call": "a", "args": {"text": "}"}}'
    assert extract_action(reply) == {"call": "a", "args": {"text": "}"}}


def test_unicode() -> None:
    pick = {"call": "grüßen", "args": {"name": "李雷", "mood": "🙂", "note": "naïve café"}}
    for text in (json.dumps(pick), json.dumps(pick, ensure_ascii=False)):
        assert extract_action(f"Ça va ? 🙂 « oui »\n```json\n{text}\n```\nфин") == pick


def test_a_call_key_spelt_with_escapes() -> None:
    assert extract_action('{"\\u0063all": "greet"}') == {"call": "greet"}


def test_the_empty_string() -> None:
    assert extract_action("") is None


@pytest.mark.parametrize(
    "value",
    [None, 0, 1.5, True, [PICK], (PICK_TEXT,), {PICK_TEXT}, object(), memoryview(b"{}"), str],
    ids=["None", "int", "float", "bool", "list", "tuple", "set", "object", "memoryview", "type"],
)
def test_other_types_are_no_pick(value: object) -> None:
    assert extract_action(value) is None


def test_bytes_and_bytearray_are_decoded() -> None:
    raw = f"Pick: {PICK_TEXT} \N{SNOWMAN}".encode()
    assert extract_action(raw) == PICK
    assert extract_action(bytearray(raw)) == PICK
    assert extract_action(b"\xff\xfe" + raw + b"\xc3") == PICK  # invalid UTF-8 is replaced


def test_a_dict_with_a_call_key_is_the_pick() -> None:
    pick = {"tool": "greet", "args": {"name": "ada"}}
    found = extract_action(pick)
    assert found == pick
    assert found is not pick


def test_a_dict_without_a_call_key_is_no_pick() -> None:
    assert extract_action({"name": "ada", "args": {"call": "x"}}) is None


def test_hostile_inputs_do_not_raise() -> None:
    class Reply(str):
        def find(self, *args: Any) -> int:
            raise AssertionError("overrides are not used")

    class Key:
        def __hash__(self) -> int:
            return hash("call")

        def __eq__(self, other: object) -> bool:
            raise RuntimeError("no comparing")

    assert extract_action(Reply(PICK_TEXT)) == PICK
    assert extract_action({Key(): 1}) is None


# --- long and adversarial replies -----------------------------------------------------------------


def test_a_long_pick_far_into_the_reply() -> None:
    pick = {"call": "write", "args": {"text": "x" * 20_000, "items": list(range(3000))}}
    reply = "prose " * 2_000 + "{ a stray brace\n" + json.dumps(pick) + "\n}" + " more" * 1000
    assert extract_action(reply) == pick


def test_a_long_broken_object_around_a_pick() -> None:
    reply = '{"data": "' + "y" * 50_000 + '", "pick": ' + PICK_TEXT + ", oops}"
    assert extract_action(reply) == PICK


def test_many_failed_groups_around_a_pick() -> None:
    broken = ' {oops "x"}' * 40
    assert extract_action(broken + PICK_TEXT + broken) == PICK
    stray = '{I think "the best} {"call": "a"}'
    assert extract_action(broken + stray + broken) == {"call": "a"}


def _junk(size: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choices('{}"\\', k=size))


MEGABYTE = 1_000_000
DEEP = 100_000


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        pytest.param("{" * MEGABYTE, None, id="open-braces"),
        pytest.param("{" * MEGABYTE + PICK_TEXT, PICK, id="open-braces-then-pick"),
        pytest.param("}" * MEGABYTE + PICK_TEXT, PICK, id="close-braces-then-pick"),
        pytest.param(_junk(MEGABYTE, 1), None, id="junk"),
        pytest.param(_junk(MEGABYTE, 2) + "\n" + PICK_TEXT, PICK, id="junk-then-pick"),
        pytest.param('{"a":' * 200_000, None, id="unclosed-nesting"),
        pytest.param('{"call":' * 200_000, None, id="unclosed-nesting-with-keys"),
        pytest.param('{"a":' * DEEP + "1" + "}" * DEEP, None, id="deep"),
        pytest.param(
            '{"a":' * DEEP + "x" + "}" * DEEP + PICK_TEXT, PICK, id="deep-broken-then-pick"
        ),
        pytest.param('{"call": "a"} ' * 60_000 + '{"call": "b"}', {"call": "b"}, id="many-picks"),
        pytest.param('{"call"}' * 125_000, None, id="many-broken-picks"),
    ],
)
def test_large_replies_complete(reply: str, expected: dict[str, Any] | None) -> None:
    """Guards against hangs and recursion errors; the speed is the benchmark's business."""
    assert extract_action(reply) == expected


@pytest.mark.parametrize("broken", [False, True], ids=["valid", "broken"])
def test_nesting_deeper_than_the_parser_goes(broken: bool) -> None:
    reply = '{"call": ' * DEEP + ("x" if broken else "1") + "}" * DEEP
    found = extract_action(reply)
    if broken:
        assert found is None
    else:
        # The outermost object the json module can parse, however deep that is here.
        assert found is not None
        assert "call" in found


def test_a_pick_deep_inside_a_broken_nest() -> None:
    reply = '{"call": ' * DEEP + PICK_TEXT + ", x" + "}" * DEEP
    assert extract_action(reply) == PICK


def test_an_exhausted_budget_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_extract, "_BUDGET_SLACK", 0)
    monkeypatch.setattr(_extract, "_BUDGET_PER_CHARACTER", 0)
    assert extract_action(f"{{{PICK_TEXT}, x}}") is None
    monkeypatch.setattr(_extract, "_BUDGET_PER_CHARACTER", 1)
    assert extract_action(f"{{{PICK_TEXT}, x}}") == PICK


# --- properties -----------------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
picks = st.builds(
    lambda key, name, rest: {**rest, key: name},
    st.sampled_from(["call", "action", "function", "tool"]),
    json_values,
    st.dictionaries(st.text(), json_values, max_size=3),
)
prose = st.text(st.characters(exclude_characters="{"))

PIECES = [
    *'{}[]"\\:, 1x\n',
    '"call"',
    '"tool"',
    '"a"',
    '"\\""',
    '"\\u0063all"',
    "NaN",
    "null",
    '{"call": "a"}',
    '{"call": 1, "args": {"b": "}"}}',
    '{"tool": [1, {"x": 2}]}',
    '{"call": {"call": {"tool": 2}}}',
    '"long string with { and } inside"',
    '{"a": "',
]
reply_like = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def _carries_a_call_key(value: object) -> bool:
    return isinstance(value, dict) and any(
        key in value for key in ("call", "action", "function", "tool")
    )


def _is_pick_or_none(found: object) -> bool:
    return found is None or _carries_a_call_key(found)


@settings(deadline=None)
@given(st.text() | reply_like)
def test_any_text_gives_none_or_a_pick(text: str) -> None:
    assert _is_pick_or_none(extract_action(text))


@settings(deadline=None)
@given(
    st.none()
    | st.integers()
    | st.floats()
    | st.binary()
    | st.lists(st.text())
    | st.dictionaries(st.text() | st.integers(), st.text())
)
def test_any_value_gives_none_or_a_pick(value: object) -> None:
    assert _is_pick_or_none(extract_action(value))


@given(st.text(st.characters(exclude_characters="{")))
def test_text_without_an_opening_brace_has_no_pick(text: str) -> None:
    assert extract_action(text) is None


@settings(deadline=None)
@given(prose, picks, prose, st.sampled_from([None, 2]))
def test_a_pick_after_prose_is_found_exactly(
    before: str, pick: dict[str, Any], after: str, indent: int | None
) -> None:
    assert extract_action(before + json.dumps(pick, indent=indent) + after) == pick


@settings(deadline=None)
@given(prose, picks, prose, picks, prose)
def test_the_last_of_two_picks_wins(
    before: str, first: dict[str, Any], between: str, last: dict[str, Any], after: str
) -> None:
    assert extract_action(before + json.dumps(first) + between + json.dumps(last) + after) == last


@settings(deadline=None, max_examples=300)
@given(reply_like)
def test_agrees_with_a_naive_reading(text: str) -> None:
    assert extract_action(text) == _naive_extract(text)


@pytest.mark.parametrize(
    ("misses", "window"), [(0, 16), (2, 12), (32, 10)], ids=["bulk", "mixed", "windows"]
)
@settings(deadline=None, max_examples=150)
@given(text=reply_like)
def test_agrees_with_a_naive_reading_on_every_path(misses: int, window: int, text: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_extract, "_PARSE_FIRST_MISSES", misses)
        patch.setattr(_extract, "_WINDOW", window)
        assert extract_action(text) == _naive_extract(text)


fenced_replies = st.builds(
    lambda before, pick, after: before + "```json\n" + pick + "\n```" + after,
    st.lists(st.sampled_from([*PIECES, "```", "```json\n", "\n"]), max_size=30).map("".join),
    st.sampled_from(PIECES[-8:-1]) | picks.map(json.dumps),
    st.lists(st.sampled_from([*PIECES, "\n", "```"]), max_size=4).map("".join),
)


@settings(deadline=None, max_examples=400)
@given(fenced_replies)
def test_a_fenced_last_block_is_read_as_the_whole_reply_is(text: str) -> None:
    """The shortcut for a reply whose pick is its last fenced block (it reads only that block
    and what follows it) answers what reading every group of the reply answers."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_extract, "_SHORTCUT_FROM", 0)  # every reply tries the shortcut
        assert extract_action(text) == _naive_extract(text)


def test_the_fenced_shortcut_leaves_the_reply_to_the_full_reading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_extract, "_SHORTCUT_FROM", 0)
    quoted = "".join(f'Record {n}: {{"id": {n}, "items": [{{"sku": {n}}}]}}\n' for n in range(50))
    assert extract_action(f"{quoted}```json\n{PICK_TEXT}\n```\n") == PICK
    # A pick after the block, bare or spelt with escapes, still wins.
    assert extract_action(f'```json\n{PICK_TEXT}\n```\nno: {{"call": "b"}}') == {"call": "b"}
    escaped = '{"\\u0063all": "c"}'
    assert extract_action(f"```json\n{PICK_TEXT}\n```\n{escaped}") == {"call": "c"}
    # A block that is no pick leaves an earlier pick standing.
    assert extract_action(f'{PICK_TEXT}\n```json\n{{"result": 1}}\n```') == PICK
    assert extract_action(f'{PICK_TEXT}\n```json\n{{"call": NaN}}\n```') == PICK


# --- the naive reading: the same rules, quadratic and obvious -------------------------------------


def _naive_extract(text: str) -> dict[str, Any] | None:
    """Group by group: the last maximal valid span carrying a call key; braces only as fallback."""
    best = None
    start = text.find("{")
    while start >= 0:
        spans, end, braces_in_strings = _naive_group(text, start)
        found = _naive_last_pick(text, spans)
        if found is None and braces_in_strings:
            found = _naive_last_pick(text, _naive_brace_spans(text, start, end))
        if found is not None:
            best = found
        start = text.find("{", end)
    return best


def _naive_group(text: str, start: int) -> tuple[list[tuple[int, int]], int, int]:
    stack: list[int] = []
    spans: list[tuple[int, int]] = []
    in_string = False
    braces_in_strings = 0
    index = start
    while index < len(text):
        char = text[index]
        if in_string:
            if char in '"\n':
                in_string = False
            elif char == "\\":
                if index + 1 < len(text) and text[index + 1] != "\n":
                    index += 1
                    braces_in_strings += text[index] in "{}"
                else:
                    in_string = False
            elif char in "{}":
                braces_in_strings += 1
        elif char == '"':
            in_string = True
        elif char == "{":
            stack.append(index)
        elif char == "}":
            spans.append((stack.pop(), index))
            if not stack:
                return spans, index + 1, braces_in_strings
        index += 1
    return spans, len(text), braces_in_strings


def _naive_brace_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    stack: list[int] = []
    spans: list[tuple[int, int]] = []
    for index in range(start, end):
        if text[index] == "{":
            stack.append(index)
        elif text[index] == "}" and stack:
            spans.append((stack.pop(), index))
    return spans


def _naive_last_pick(text: str, spans: list[tuple[int, int]]) -> dict[str, Any] | None:
    def reject(name: str) -> None:
        raise ValueError(name)

    valid = {}
    for start, end in spans:
        with contextlib.suppress(ValueError, RecursionError):
            valid[start, end] = json.loads(text[start : end + 1], parse_constant=reject)
    outermost = [
        span
        for span in valid
        if not any(other != span and other[0] <= span[0] <= span[1] <= other[1] for other in valid)
    ]
    picks = [span for span in outermost if _carries_a_call_key(valid[span])]
    return valid[max(picks)] if picks else None


# --- decision.extract_action: the pick normalised -----------------------------------------------


@pytest.mark.parametrize(
    ("reply", "normalised"),
    [
        ('{"call": "greet", "args": {"name": "ada"}}', {"call": "greet", "args": {"name": "ada"}}),
        (
            '{"action": "greet", "args": {"name": "ada"}}',
            {"call": "greet", "args": {"name": "ada"}},
        ),
        ('{"function": "greet", "args": {"x": 1}}', {"call": "greet", "args": {"x": 1}}),
        ('{"tool": "greet"}', {"call": "greet", "args": {}}),
        ('{"call": "greet", "args": null}', {"call": "greet", "args": {}}),
        ('Sure. {"call": "greet", "name": "ada"}', {"call": "greet", "args": {"name": "ada"}}),
        (
            '{"call": "greet", "arguments": {"name": "ada"}}',
            {"call": "greet", "args": {"name": "ada"}},
        ),
        (
            '{"call": "greet", "arguments": "{\\"name\\": \\"ada\\"}"}',
            {"call": "greet", "args": {"name": "ada"}},
        ),
        (
            '{"function": {"name": "greet", "arguments": "{\\"name\\": \\"ada\\"}"}}',
            {"call": "greet", "args": {"name": "ada"}},
        ),
        ('{"function": {"name": "greet", "arguments": ""}}', {"call": "greet", "args": {}}),
        ('{"call": "greet", "arguments": "{oops"}', {"call": "greet", "args": "{oops"}),
        ('{"call": "greet", "args": [1, 2]}', {"call": "greet", "args": [1, 2]}),
        ('{"call": 7}', {"call": 7, "args": {}}),
    ],
)
def test_the_public_extract_action_normalises_every_form(reply: str, normalised: Any) -> None:
    assert decision.extract_action(reply) == normalised
    assert type(decision.extract_action(reply)["args"]) is type(normalised["args"])  # type: ignore[index]


def test_the_raw_pick_is_offered_as_extract_raw_action() -> None:
    reply = 'Sure. {"action": "greet", "name": "ada"}'
    assert decision.extract_raw_action(reply) == {"action": "greet", "name": "ada"}
    assert decision.extract_action("no pick here") is None
    assert decision.extract_raw_action("no pick here") is None


def test_what_parse_args_reads_is_what_extract_action_shows() -> None:
    def greet(name: str) -> str:
        return name

    for reply in ('{"tool": "greet", "name": "ada"}', '{"call": "greet", "args": {"name": "ada"}}'):
        action = decision.extract_action(reply)
        assert action is not None
        assert decision.parse_args(reply, {"greet": greet}) == (greet, action["args"])
