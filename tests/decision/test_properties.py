"""Property-based tests: any reply ends in a pick or a DecisionError; valid picks resolve.

Menus are generated from every option form (functions, values, schema notation nested at
random); replies range from arbitrary text and bytes to hostile objects and near-valid picks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_opdecide import DecisionError, FromContext, ModelReply, Runtime, decision

from ._support import FixedRuntime, filled_call

PROPERTY_SETTINGS = settings(
    max_examples=75,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

CALL_KEYS = ("call", "action", "function", "tool")

# Field names: never a meta-spec key (a dict of only those is a meta-spec), a call key, or args.
FIELD_NAMES = st.sampled_from(["a", "b", "c", "name", "steps", "plan", "x_1", "émoji", "n"])
OPTION_NAMES = st.sampled_from(
    ["greet", "done", "retry", "plan", "escalate", "f", "g", "opt_1", "a", "b"]
)


# --- schema notation, generated together with a strategy for its valid values -------------


@dataclass(frozen=True)
class Schema:
    """A schema notation and a strategy for values that satisfy it."""

    notation: Any
    values: st.SearchStrategy[Any]


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


DESCRIPTIONS = st.text(
    alphabet=st.characters(blacklist_characters="\n\r", blacklist_categories=["Cs"]), max_size=20
)
"""One-line descriptions: a line break in a description would break the menu's layout."""


def _leaf_schemas() -> st.SearchStrategy[Schema]:
    finite = st.floats(allow_nan=False, allow_infinity=False)
    ints = st.integers(min_value=-(10**9), max_value=10**9)
    return st.one_of(
        st.just(Schema(str, st.text(max_size=30))),
        st.just(Schema(int, ints)),
        st.just(Schema(float, st.one_of(finite, ints))),
        st.just(Schema(bool, st.booleans())),
        st.just(Schema(list, st.lists(JSON_VALUES, max_size=3))),
        st.just(Schema(dict, st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=3))),
        DESCRIPTIONS.filter(bool).map(lambda d: Schema(d, st.text(max_size=30))),
        st.lists(st.text(max_size=6), min_size=1, max_size=4, unique=True).map(
            lambda opts: Schema({"type": str, "options": opts}, st.sampled_from(opts))
        ),
        st.lists(ints, min_size=1, max_size=4, unique=True).map(
            lambda opts: Schema(
                {"type": int, "description": "Pick one.", "options": opts}, st.sampled_from(opts)
            )
        ),
    )


def _extend(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    lists = children.map(lambda c: Schema([c.notation], st.lists(c.values, max_size=3)))
    objects = st.dictionaries(FIELD_NAMES, children, min_size=1, max_size=3).map(
        lambda fields: Schema(
            {k: v.notation for k, v in fields.items()},
            st.fixed_dictionaries({k: v.values for k, v in fields.items()}),
        )
    )
    meta_fields = st.dictionaries(FIELD_NAMES, children, min_size=1, max_size=2).map(
        lambda fields: Schema(
            {"description": "Nested.", "fields": {k: v.notation for k, v in fields.items()}},
            st.fixed_dictionaries({k: v.values for k, v in fields.items()}),
        )
    )
    meta_items = children.map(
        lambda c: Schema({"items": c.notation}, st.lists(c.values, max_size=3))
    )
    return st.one_of(lists, objects, meta_fields, meta_items)


FIELD_SCHEMAS = st.recursive(_leaf_schemas(), _extend, max_leaves=6)
SCHEMAS = st.dictionaries(FIELD_NAMES, FIELD_SCHEMAS, max_size=4).map(
    lambda fields: Schema(
        {k: v.notation for k, v in fields.items()},
        st.fixed_dictionaries({k: v.values for k, v in fields.items()}),
    )
)


# --- function options -----------------------------------------------------------------------


def f_none() -> str:
    """Take no arguments."""
    return "ran f_none"


def f_scalars(s: str, i: int, x: float = 0.5, b: bool = False) -> dict[str, Any]:
    """Scalars with defaults."""
    return {"s": s, "i": i, "x": x, "b": b}


def f_typed(
    mode: Literal["fast", "slow"], ids: list[int], tag: str | None = None
) -> dict[str, Any]:
    """Typing constructs."""
    return {"mode": mode, "ids": ids, "tag": tag}


def f_hidden(
    n: int, order: Annotated[str, FromContext()] = "no order", runtime: Runtime | None = None
) -> dict[str, Any]:
    """Hidden parameters."""
    return {"n": n, "order": order, "runtime": runtime}


def f_star(*args: Any, **kwargs: Any) -> str:
    return "ran f_star"


@dataclass(frozen=True)
class FunctionOption:
    function: Any
    args: st.SearchStrategy[dict[str, Any]]

    def expected(self, args: dict[str, Any], runtime: Runtime | None) -> Any:
        if self.function is f_none:
            return "ran f_none"
        if self.function is f_star:
            return "ran f_star"
        if self.function is f_scalars:
            return {"x": 0.5, "b": False, **args}
        if self.function is f_typed:
            return {"tag": None, **args}
        return {"order": "no order", "runtime": runtime, **args}


_INTS = st.integers(min_value=-(10**9), max_value=10**9)
FUNCTION_OPTIONS = st.sampled_from(
    [
        FunctionOption(f_none, st.just({})),
        FunctionOption(f_star, st.just({})),
        FunctionOption(
            f_scalars,
            st.fixed_dictionaries(
                {"s": st.text(max_size=10), "i": _INTS},
                optional={
                    "x": st.floats(allow_nan=False, allow_infinity=False),
                    "b": st.booleans(),
                },
            ),
        ),
        FunctionOption(
            f_typed,
            st.fixed_dictionaries(
                {"mode": st.sampled_from(["fast", "slow"]), "ids": st.lists(_INTS, max_size=3)},
                optional={"tag": st.one_of(st.none(), st.text(max_size=5))},
            ),
        ),
        FunctionOption(f_hidden, st.fixed_dictionaries({"n": _INTS})),
    ]
)


# --- menus ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One generated option: its dict-form handler, the expected result, valid args."""

    kind: str  # "function", "value", "schema"
    handler: Any
    function: FunctionOption | None = None
    value: Any = None
    schema: Schema | None = None


def _entries() -> st.SearchStrategy[Entry]:
    values = st.one_of(JSON_SCALARS, st.lists(JSON_SCALARS, max_size=2))
    return st.one_of(
        FUNCTION_OPTIONS.map(lambda f: Entry("function", f.function, function=f)),
        st.tuples(FUNCTION_OPTIONS, DESCRIPTIONS).map(
            lambda fd: Entry("function", (fd[0].function, fd[1]), function=fd[0])
        ),
        values.filter(lambda v: not isinstance(v, tuple)).map(lambda v: Entry("value", v, value=v)),
        st.tuples(values, DESCRIPTIONS).map(lambda vd: Entry("value", (vd[0], vd[1]), value=vd[0])),
        st.tuples(DESCRIPTIONS, SCHEMAS).map(
            lambda ds: Entry("schema", (ds[0], ds[1].notation), schema=ds[1])
        ),
    )


MENUS = st.dictionaries(OPTION_NAMES, _entries(), min_size=1, max_size=5)


def options_of(menu: dict[str, Entry]) -> dict[str, Any]:
    return {name: entry.handler for name, entry in menu.items()}


@st.composite
def list_and_dict_forms(draw: st.DrawFn) -> tuple[list[Any], dict[str, Any]]:
    """One menu in list form and the equivalent dict form."""
    listed: list[Any] = []
    as_dict: dict[str, Any] = {}
    functions = [f_none, f_scalars, f_typed, f_hidden, f_star]
    names = draw(
        st.lists(
            st.sampled_from(["a", "b", "c", "d", *(f.__name__ for f in functions)]),
            min_size=1,
            max_size=5,
            unique=True,
        )
    )
    by_name = {f.__name__: f for f in functions}
    for name in names:
        description = draw(DESCRIPTIONS)
        if name in by_name:
            fn = by_name[name]
            if draw(st.booleans()):
                listed.append(fn)
                as_dict[name] = fn
            else:
                listed.append((fn, description))
                as_dict[name] = (fn, description)
            continue
        shape = draw(st.sampled_from(["bare", "described", "schema"]))
        if shape == "bare":
            listed.append(name)
            as_dict[name] = name
        elif shape == "described":
            listed.append((name, description))
            as_dict[name] = (name, description)
        else:
            schema = draw(SCHEMAS).notation
            listed.append((name, description, schema))
            as_dict[name] = (description, schema)
    return listed, as_dict


# --- replies ----------------------------------------------------------------------------------


class Unprintable:
    """An object whose ``__str__`` raises (its repr is the default one)."""

    def __str__(self) -> str:
        raise RuntimeError("unprintable")


class UnprintableStr(str):
    __slots__ = ()

    def __str__(self) -> str:
        raise RuntimeError("unprintable")


PROSE = st.text(
    alphabet=st.characters(blacklist_characters="{}", blacklist_categories=["Cs"]), max_size=40
)


def _wrap(draw: st.DrawFn, body: str) -> str:
    style = draw(st.sampled_from(["bare", "fenced", "prose", "after_other"]))
    before, after = draw(PROSE), draw(PROSE)
    if style == "bare":
        return body
    if style == "fenced":
        return f"{before}\n```json\n{body}\n```\n{after}"
    if style == "prose":
        return f"{before} {body} {after}"
    return f'{before} {{"call": "not an option"}} {after}\n{body}'


@st.composite
def json_picks(draw: st.DrawFn, names: list[str]) -> str:
    """Pick-shaped JSON with random names and arguments (mostly invalid ones)."""
    key = draw(st.sampled_from(CALL_KEYS))
    name = draw(st.one_of(st.sampled_from(names), JSON_VALUES))
    shape = draw(st.sampled_from(["args", "top", "openai", "arguments_str", "none"]))
    args = draw(st.one_of(JSON_VALUES, st.dictionaries(FIELD_NAMES, JSON_VALUES, max_size=4)))
    obj: dict[str, Any]
    if shape == "args":
        obj = {key: name, "args": args}
    elif shape == "top":
        obj = {key: name, **(args if isinstance(args, dict) else {})}
    elif shape == "openai":
        obj = {"function": {"name": name, "arguments": json.dumps(args)}}
    elif shape == "arguments_str":
        obj = {
            key: name,
            "arguments": draw(st.one_of(st.just(json.dumps(args)), st.text(max_size=10))),
        }
    else:
        obj = {key: name}
    body = json.dumps(obj, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        # Damage it: cut, or splice braces, quotes and backslashes in.
        pos = draw(st.integers(min_value=0, max_value=len(body)))
        junk = draw(st.text(alphabet='{}[]"\\:,', max_size=5))
        body = body[:pos] + junk + body[pos + draw(st.integers(0, 3)) :]
    return _wrap(draw, body)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def any_replies(names: list[str]) -> st.SearchStrategy[Any]:
    hostile_objects = st.one_of(
        st.none(),
        st.integers(),
        st.floats(),
        st.booleans(),
        st.lists(JSON_VALUES, max_size=3),
        st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=3),
        st.just(Unprintable()),
        st.just(UnprintableStr('{"call": "x"}')),
        st.just(object()),
        st.builds(ModelReply, text=st.text(max_size=20)),
        st.binary(max_size=200),
        st.binary(max_size=50).map(bytearray),
    )
    dict_picks = st.sampled_from(CALL_KEYS).flatmap(
        lambda key: st.fixed_dictionaries(
            {key: st.one_of(st.sampled_from(names), JSON_VALUES)},
            optional={
                "args": st.one_of(
                    JSON_VALUES, st.just(Unprintable()), st.dictionaries(FIELD_NAMES, JSON_VALUES)
                ),
                "name": JSON_VALUES,
            },
        )
    )
    huge = st.sampled_from(
        [
            "{" * 20_000,
            '{"call": ' * 5_000,
            "}" * 20_000 + "{",
            '{"call": "' + "\\" * 10_000,
            "```json\n" * 3_000,
            f'{{"call": {_nested(3_000)}}}',
            f'{{"call": "a", "args": {{"x": {_nested(900)}}}}}',
            "x" * 300_000,
        ]
    )
    return st.one_of(
        st.text(),
        st.text(alphabet='{}[]"\\:,ca ll', max_size=200),
        json_picks(names),
        hostile_objects,
        dict_picks,
        huge,
    )


@st.composite
def menus_and_replies(draw: st.DrawFn, count: int = 2) -> tuple[dict[str, Entry], list[Any]]:
    menu = draw(MENUS)
    replies = any_replies(list(menu))
    return menu, [draw(replies) for _ in range(count)]


def _check_pick(menu: dict[str, Entry], chosen: Any, kwargs: dict[str, Any]) -> None:
    if callable(chosen):
        assert any(e.function is not None and e.function.function is chosen for e in menu.values())
    else:
        assert chosen in menu
    assert isinstance(kwargs, dict)


def outcome(call: Callable[[], Any]) -> tuple[Any, DecisionError | None]:
    """Run ``call``: its result, or the DecisionError it raised. Anything else propagates."""
    try:
        return call(), None
    except DecisionError as error:
        return None, error


ERROR_KINDS = {
    "no_action",
    "unknown_call",
    "bad_args",
    "missing_required",
    "type_mismatch",
    "enum_violation",
}


# --- properties -------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(menus_and_replies(count=1))
def test_any_reply_ends_in_a_pick_or_decision_error(
    case: tuple[dict[str, Entry], list[Any]],
) -> None:
    menu, (reply,) = case
    options = options_of(menu)
    result, error = outcome(lambda: decision.parse_args(reply, options, max_retries=0))
    if error is None:
        _check_pick(menu, *result)
    else:
        assert error.kind in ERROR_KINDS
        assert error.attempts == 1
        assert str(error).startswith(
            f"decision failed after 1 attempt(s). Last error ({error.kind}): "
        )
        assert len(error.reply_head) <= 200


@PROPERTY_SETTINGS
@given(menus_and_replies())
def test_make_with_a_repick_ends_in_a_result_or_decision_error(
    case: tuple[dict[str, Entry], list[Any]],
) -> None:
    menu, (first, second) = case
    rt = FixedRuntime(first, second)
    _, error = outcome(lambda: decision.make("Pick one.", options_of(menu), runtime=rt))
    if error is not None:
        assert error.kind in ERROR_KINDS
        assert error.attempts == 2
        assert len(error.replies) == 2
    assert 1 <= len(rt.requests) <= 2
    if len(rt.requests) == 2:
        repick = rt.requests[1].prompt
        assert repick.startswith("Previous reply:\n")
        assert repick.endswith("Call: example line — JSON only, no prose.")


@PROPERTY_SETTINGS
@given(menus_and_replies())
def test_exec_choices_ends_in_a_result_or_decision_error(
    case: tuple[dict[str, Entry], list[Any]],
) -> None:
    menu, (first, second) = case
    rt = FixedRuntime(first, second)
    _, error = outcome(lambda: rt.exec("Work.", choices=options_of(menu)))
    if error is not None:
        assert error.kind in ERROR_KINDS
        assert error.attempts == 2
    assert [r.kind for r in rt.requests] == ["turn", "repick"][: len(rt.requests)]


@st.composite
def valid_picks(draw: st.DrawFn) -> tuple[dict[str, Entry], str, str, dict[str, Any]]:
    menu = draw(MENUS)
    name = draw(st.sampled_from(list(menu)))
    entry = menu[name]
    if entry.kind == "function":
        assert entry.function is not None
        args = draw(entry.function.args)
    elif entry.kind == "schema":
        assert entry.schema is not None
        args = draw(entry.schema.values)
    else:
        args = draw(st.dictionaries(FIELD_NAMES, JSON_VALUES, max_size=2))
    key = draw(st.sampled_from(CALL_KEYS))
    obj: dict[str, Any]
    top_level: bool = draw(st.booleans())
    with_args: bool = draw(st.booleans())
    if args and top_level:
        obj = {key: name, **args}  # the top-level tolerance
    elif args or with_args:
        obj = {key: name, "args": args}
    else:
        obj = {key: name}
    body = json.dumps(
        obj, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 2]))
    )
    return menu, name, _wrap(draw, body), args


@PROPERTY_SETTINGS
@given(valid_picks())
def test_valid_picks_always_resolve(
    case: tuple[dict[str, Entry], str, str, dict[str, Any]],
) -> None:
    menu, name, reply, args = case
    entry = menu[name]
    rt = FixedRuntime()  # a valid pick never needs a re-pick
    result = decision.resolve_decision(reply, options_of(menu), rt)
    assert rt.requests == []
    if entry.kind == "function":
        assert entry.function is not None
        assert result == entry.function.expected(args, rt)
    elif entry.kind == "schema":
        assert result == {"decision": name, **args}
    else:
        assert result is entry.value


@PROPERTY_SETTINGS
@given(valid_picks())
def test_valid_picks_parse_to_the_option(
    case: tuple[dict[str, Entry], str, str, dict[str, Any]],
) -> None:
    menu, name, reply, args = case
    entry = menu[name]
    chosen, kwargs = decision.parse_args(reply, options_of(menu), max_retries=0)
    if entry.kind == "function":
        assert entry.function is not None
        assert chosen is entry.function.function
    else:
        assert chosen == name
        assert kwargs == (args if entry.kind == "schema" else {})


@PROPERTY_SETTINGS
@given(MENUS)
def test_every_rendered_call_line_is_a_valid_pick_shape(menu: dict[str, Entry]) -> None:
    options = options_of(menu)
    text = decision.render_options(options)
    assert text.endswith("\n")
    assert not text.endswith("\n\n")
    blocks = text[:-1].split("\n\n")
    assert len(blocks) == len(menu)
    for block, name in zip(blocks, menu, strict=True):
        assert block.startswith(f"{name}(")
        call_line = block.splitlines()[-1]
        assert call_line.startswith("    Call: ")
        call = filled_call(call_line)
        assert call["call"] == name
        assert set(call) <= {"call", "args"}


@PROPERTY_SETTINGS
@given(list_and_dict_forms(), st.data())
def test_list_form_renders_and_resolves_like_the_dict_form(
    forms: tuple[list[Any], dict[str, Any]], data: st.DataObject
) -> None:
    listed, as_dict = forms
    assert decision.render_options(listed) == decision.render_options(as_dict)
    name = data.draw(st.sampled_from(list(as_dict)))
    reply = data.draw(st.sampled_from(CALL_KEYS)).join(['{"', f'": "{name}"}}'])
    from_dict, dict_error = outcome(
        lambda: decision.resolve_decision(reply, as_dict, max_retries=0)
    )
    from_list, list_error = outcome(lambda: decision.resolve_decision(reply, listed, max_retries=0))
    assert from_list == from_dict
    if dict_error is None:
        assert list_error is None
    else:
        assert list_error is not None
        assert (list_error.kind, list_error.message) == (dict_error.kind, dict_error.message)


@pytest.mark.parametrize("size", [1, 10, 100])
def test_repick_prompt_never_grows_with_the_reply(size: int) -> None:
    reply = "z" * (size * 1000)
    rt = FixedRuntime('{"call": "a"}')
    decision.parse_args(reply, {"a": "A"}, rt)
    assert rt.prompts[0].startswith("Previous reply:\n" + "z" * 500 + "\n\nProblem: ")
