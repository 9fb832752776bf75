"""The first sight of a function option, read the fast way, gives what the slow way gives.

A plain function's parameters are read off its code object (names, counts, defaults and
annotations) instead of ``inspect.signature``, and an argument validator whose fields all have
types pydantic-core always compiles is compiled on the option's first pick. Each function here
is read both ways: as it is (the fast path) and as a copy carrying its own ``__signature__``
(which sends it through ``inspect.signature`` and ``typing.get_type_hints``); the shapes and
the menu text must be the same.
"""

import functools
import inspect
import types
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_opdecide import FromContext, Param, Runtime
from pytest_opdecide._nextstep import _function_shapes, _menu_text, _options
from pytest_opdecide._nextstep._field_types import FieldSpec, ScalarSpec
from pytest_opdecide._nextstep._options import normalize_options, render_menu
from pytest_opdecide._nextstep._validation import ArgsValidator

from . import _future_types


def positional_only(order_id: str, count: int = 2, /, note: str = "n") -> str:
    """Positional-only parameters, one with a default.

    Args:
        order_id: The order.
        count: How many.
    """
    return order_id


def keyword_only(first: int, *, limit: int = 5, label: str) -> str:
    """Keyword-only parameters, with and without defaults."""
    return label


def variadic(code: str, *rest: int, flag: bool = False, **extra: str) -> str:
    """``*args`` and ``**kwargs``: never shown, as the slow path leaves them out."""
    return code


def hidden_ones(
    query: str, runtime: Runtime, user: Annotated[str, FromContext("user_id")] = "u"
) -> str:
    """Parameters the library fills."""
    return query


def constrained(
    priority: Annotated[str, Param("How urgent.", options=["low", "high"])],
    mode: Literal["a", "b"] = "a",
    items: list[int] | None = None,
) -> str:
    return priority


def no_annotations(a, b=3):  # type: ignore[no-untyped-def]
    return a


def no_docstring(amount: float, reason: str) -> str:
    return reason


def _documented(number: int, doc: str) -> Any:
    def act(amount: float) -> str:
        return "x"

    act.__doc__ = doc
    act.__name__ = act.__qualname__ = f"docstring_{number}"
    return act


# One-line docstrings take a short way past inspect.cleandoc; these must read as it reads them.
ODD_DOCSTRINGS = [
    "",
    " ",
    "Refund the customer.",
    "  Refund the customer.  ",
    "Refund\tthe customer.",
    "\tRefund the customer.",
    "Refund the customer.\rNow.",
    "Refund the customer.\x0cNow.",
    "Refund the customer.\u2028Now.",
    "\x0bRefund the customer.",
    "Refund the customer.\n",
    "Refund the customer.\n\n    Args:\n        amount: How much.",
]

FUNCTIONS = [
    *(_documented(number, doc) for number, doc in enumerate(ODD_DOCSTRINGS)),
    positional_only,
    keyword_only,
    variadic,
    hidden_ones,
    constrained,
    no_annotations,
    no_docstring,
    _future_types.scalars,  # annotations as strings (``from __future__ import annotations``)
    _future_types.typed,
    _future_types.structured,
    _future_types.hidden,
]


def _through_signature(fn: Any) -> Any:
    """A copy of ``fn`` that carries its own ``__signature__``: read the slow way."""
    copy = types.FunctionType(
        fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__annotations__ = dict(fn.__annotations__)
    copy.__doc__ = fn.__doc__
    copy.__qualname__ = fn.__qualname__
    copy.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return copy


def _parts(shape: Any) -> Any:
    def field(f: FieldSpec) -> Any:
        return (f.name, f.type.label, f.description, f.required, f.source, f.context_key,
                f.default, f.positional_only)  # fmt: skip

    return (
        [field(f) for f in shape.fields],
        [field(f) for f in shape.hidden],
        shape.description,
        shape.positional,
        shape.validator is None,
        shape.version,
    )


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda fn: fn.__name__)
def test_a_function_read_off_its_code_has_the_shape_its_signature_gives(fn: Any) -> None:
    _options.clear_caches()
    slow = _through_signature(fn)
    assert not _function_shapes._by_code(slow)
    assert _function_shapes._by_code(fn)
    fast_shape = _function_shapes._introspect(fn)
    slow_shape = _function_shapes._introspect(slow)
    assert _parts(fast_shape) == _parts(slow_shape)
    fast_menu = normalize_options({"act": fn, "done": "DONE"})
    slow_menu = normalize_options({"act": slow, "done": "DONE"})
    assert render_menu(fast_menu.options) == render_menu(slow_menu.options)


class Desk:
    def refund(self, amount: float, reason: str = "late") -> str:
        """Refund the customer."""
        return reason

    @classmethod
    def create(cls, amount: float, reason: str = "late") -> str:
        """Refund the customer."""
        return reason


class Refund:
    """Refund the customer."""

    def __init__(self, amount: float, reason: str = "late") -> None:
        self.amount = amount


def refund(amount: float, reason: str = "late") -> str:
    """Refund the customer."""
    return reason


def _refund_with_flag(flag: bool, amount: float, reason: str = "late") -> str:
    """Refund the customer."""
    return reason


@pytest.mark.parametrize(
    "other",
    [Desk().refund, Desk.create, Refund, functools.partial(_refund_with_flag, True)],
    ids=["method", "classmethod", "class", "partial"],
)
def test_callables_read_through_their_signature_render_as_the_plain_function(
    other: Any,
) -> None:
    _options.clear_caches()
    assert not _function_shapes._by_code(other)
    plain = render_menu(normalize_options({"refund": refund}).options)
    assert render_menu(normalize_options({"refund": other}).options) == plain


def test_a_validator_of_plain_types_compiles_on_first_use_and_checks_alike() -> None:
    fields = (FieldSpec("amount", ScalarSpec(float)), FieldSpec("reason", ScalarSpec(str)))
    lazy = ArgsValidator(fields, all_required=True)
    assert "_compiled" not in vars(lazy)  # nothing compiled until a pick is checked
    assert lazy.validate_parsed({"amount": 2.5, "reason": "late"}) == {
        "amount": 2.5,
        "reason": "late",
    }
    with pytest.raises(Exception, match="reason"):
        lazy.validate_parsed({"amount": 2.5})
    assert "_compiled" in vars(lazy)


def test_a_validator_of_other_types_compiles_with_the_menu() -> None:
    shape = _function_shapes._introspect(constrained)
    assert shape.validator is not None
    assert "_compiled" in vars(shape.validator)  # choices, unions of them: compiled eagerly


def test_a_type_pydantic_cannot_check_is_refused_before_any_model_call() -> None:
    class Opaque:
        pass

    def act(thing: Opaque) -> str:
        return "x"

    with pytest.raises(TypeError, match="thing"):
        normalize_options({"act": act})


@pytest.mark.parametrize("pytype", [str, int, float, bool, list, dict])
def test_a_plain_scalar_parameter_gets_the_spec_its_annotation_gives(pytype: type) -> None:
    def act(value, other=None, /):  # type: ignore[no-untyped-def]
        return value

    act.__annotations__ = {"value": pytype, "other": Annotated[pytype, "note"]}
    shape = _function_shapes._introspect(act)
    quick, general = shape.fields  # a bare class, and one through spec_from_annotation
    assert type(quick.type) is type(general.type) is ScalarSpec
    assert quick.type.label == general.type.label
    assert quick.type.placeholder() == general.type.placeholder()
    assert quick.type.json_schema() == general.type.json_schema()
    assert quick.type.core_schema({}) == general.type.core_schema({})
    assert (quick.required, quick.positional_only) == (True, True)
    assert (general.required, general.default, general.positional_only) == (False, None, True)


def test_a_field_made_at_once_is_the_field_its_init_makes() -> None:
    import dataclasses

    spec = ScalarSpec(int)
    for required, default, positional in [(True, inspect.Parameter.empty, False), (False, 3, True)]:
        made = FieldSpec.shown("count", spec, "How many.", required, default, positional)
        built = FieldSpec(
            "count", spec, "How many.", required=required, default=default,
            positional_only=positional,
        )  # fmt: skip
        # Every dataclass field (a slot never set raises): a field added to FieldSpec must be
        # set by shown().
        names = [f.name for f in dataclasses.fields(FieldSpec)]
        assert [getattr(made, name) for name in names] == [getattr(built, n) for n in names]
        assert repr(made) == repr(built)


async def _async_act(amount: float) -> str:
    return "x"


def _generator_act(amount: float) -> Any:
    yield amount


async def _async_generator_act(amount: float) -> Any:
    yield amount


def _marked_act(amount: float) -> str:
    return "x"


if hasattr(inspect, "markcoroutinefunction"):  # Python 3.12 and later
    inspect.markcoroutinefunction(_marked_act)


@pytest.mark.parametrize(
    "handler",
    [refund, _async_act, _generator_act, _async_generator_act, _marked_act,
     functools.partial(_async_act, 1.0), Desk().refund, Refund],
    ids=["plain", "async", "generator", "async generator", "marked", "partial", "method",
         "class"],
)  # fmt: skip
def test_an_option_is_async_as_inspect_says(handler: Any) -> None:
    assert _options._is_async(handler) is inspect.iscoroutinefunction(handler)


@pytest.mark.parametrize("pytype", [str, int, float, bool, list, dict])
def test_a_scalar_s_schema_and_placeholder_are_what_their_builders_make(pytype: type) -> None:
    from pydantic_core import core_schema as cs

    from pytest_opdecide._nextstep._field_types import SCALAR_PLACEHOLDERS

    built = {str: cs.str_schema, int: cs.int_schema, float: cs.float_schema,
             bool: cs.bool_schema, list: cs.list_schema, dict: cs.dict_schema}[pytype]  # fmt: skip
    spec = ScalarSpec(pytype)
    first = spec.core_schema({})
    assert first == built(strict=True)
    first["strict"] = False
    assert spec.core_schema({}) == built(strict=True)  # each validator's schema is its own
    placeholder = spec.placeholder()
    assert placeholder == SCALAR_PLACEHOLDERS[pytype]
    if isinstance(placeholder, list | dict):
        assert placeholder is not spec.placeholder()  # a new container for each caller


class _Text(str):
    pass


PLAIN_ARGUMENTS = [
    {"amount": 2.5, "reason": "late"},
    {"reason": "late", "amount": 2, "count": 3, "urgent": True},
    {"amount": 2**53, "reason": "x"},
    {"amount": 2**53 + 1, "reason": "x"},
    {"amount": -(2**60), "reason": "x"},
    {"amount": 10**400, "reason": "x"},
    {"amount": float("inf"), "reason": "x"},
    {"amount": True, "reason": "x"},
    {"amount": "2.5", "reason": "x"},
    {"amount": None, "reason": "x"},
    {"amount": 2.5},
    {"reason": "x"},
    {"amount": 2.5, "reason": _Text("x")},
    {"amount": 2.5, "reason": "x", "count": 10**30},
    {"amount": 2.5, "reason": "x", "count": 1.0},
    {"amount": 2.5, "reason": "x", "count": False},
    {"amount": 2.5, "reason": "x", "urgent": 1},
    {"amount": 2.5, "reason": "x", "other": object()},
    {},
]


@pytest.mark.parametrize("all_required", [False, True])
@pytest.mark.parametrize("args", PLAIN_ARGUMENTS, ids=range(len(PLAIN_ARGUMENTS)))
def test_plain_fields_are_checked_as_pydantic_checks_them(args: Any, all_required: bool) -> None:
    import pydantic

    fields = (
        FieldSpec("amount", ScalarSpec(float)),
        FieldSpec("reason", ScalarSpec(str)),
        FieldSpec("count", ScalarSpec(int), required=False),
        FieldSpec("urgent", ScalarSpec(bool), required=False),
    )
    checked = ArgsValidator(fields, all_required=all_required)
    assert checked._plain  # the check told without pydantic-core
    compiled = ArgsValidator(fields, all_required=all_required)._compiled
    try:
        expected = compiled.validate_python(args, strict=True)
    except pydantic.ValidationError as exc:
        refused = exc.errors()
    else:
        refused = None
    if refused is not None:
        with pytest.raises(pydantic.ValidationError) as raised:
            checked.validate_parsed(args)
        assert raised.value.errors() == refused  # pydantic's own error
        with pytest.raises(pydantic.ValidationError):
            checked.validate(args, from_json=False)
        return
    for got in (checked.validate_parsed(args), checked.validate(args, from_json=False)):
        assert got == expected
        assert list(got) == list(expected)  # the fields' order
        assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]


def _plain_options() -> list[Any]:
    """Options of every plain shape the one-pass frame writes, and some it leaves alone."""

    def act(amount: float, reason: str, count: int = 2, urgent: bool = False) -> str:
        """Act.

        Args:
            amount: How much, in "euros" \\ cents.
            reason: Why.
        """
        return reason

    def nothing() -> str:
        return "x"

    def ünïcode(naïve: str) -> str:
        return naïve

    def mixed(items: list[int], note: str) -> str:
        return note

    options = {
        "act": act,
        "nothing": nothing,
        "ünïcode": ünïcode,
        "mixed": mixed,
        "not an identifier": act,
        "plan": (
            "A plan.",
            {"title": str, "pages": int, "ratio": float, "done": bool, "note": "A note."},
        ),
        "tags": ("Tags.", {"tags": [str], "mode": {"type": str, "options": ["a", "b"]}}),
        "odd-field": ("Odd.", {"my-field": str}),
        "close": ("CLOSED", "Close it."),
    }
    return list(normalize_options(options).options)


def test_a_plain_block_is_written_as_the_general_way_writes_it() -> None:
    written = 0
    for option in _plain_options():
        plain = _menu_text._plain_frame(option)
        if plain is not None:
            written += 1
            assert plain == _menu_text._general_frame(option), option.name
    assert written == 5  # act, nothing, ünïcode, plan, close


def test_an_option_made_at_once_is_the_option_its_init_makes() -> None:
    import dataclasses

    values = ("act", "function", "Act.", (), (), refund, None, ("amount",), None)
    made = _options._made_option(*values)  # type: ignore[arg-type]
    built = _options.Option(*values)  # type: ignore[arg-type]
    # Every dataclass field, in order: a field added to Option must be set by _made_option().
    assert [f.name for f in dataclasses.fields(_options.Option)] == list(_options.Option.__slots__)
    for f in dataclasses.fields(_options.Option):
        assert getattr(made, f.name) is getattr(built, f.name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.name = "other"  # type: ignore[misc]


def test_a_plain_validator_made_at_once_is_the_one_its_init_makes() -> None:
    from pytest_opdecide._nextstep._validation import _placeholder_texts

    shape = _function_shapes._introspect(_future_types.scalars)
    made = shape.validator
    assert made is not None
    assert made._plain
    built = ArgsValidator(shape.fields, all_required=False)
    made_parts = {k: v for k, v in vars(made).items() if k != "by_name"}
    built_parts = {k: v for k, v in vars(built).items() if k != "by_name"}
    assert made_parts == built_parts
    assert made.by_name == built.by_name  # built when a failure is explained
    assert made._texts == _placeholder_texts(made.fields)  # the plain shortcut
    assert (made.placeholders, made.bare_placeholders, made.copy_marks) == (
        built.placeholders,
        built.bare_placeholders,
        built.copy_marks,
    )


def test_a_picked_plain_validator_is_freed_without_the_cycle_collector() -> None:
    # A validator that kept its own bound method (a cached hot path) would live on in a
    # reference cycle after every first pick, for the cycle collector to find.
    import gc
    import weakref

    gc.disable()
    try:
        made = _function_shapes._introspect(_future_types.scalars).validator
        assert made is not None
        args = {"count": 2, "ratio": 0.5, "name": "ada", "flag": True}
        assert made.validate_parsed(args) == args
        gone = weakref.ref(made)
        del made
        assert gone() is None
    finally:
        gc.enable()


# --- the block a function's first sight writes, against the block written from its fields ---

_PARAMETER_NAMES = st.lists(
    st.sampled_from(["amount", "reason", "order_id", "n", "flag", "x_1", "émoji", "ratio"]),
    max_size=4,
    unique=True,
)
_ANNOTATIONS = st.sampled_from(["str", "int", "float", "bool", "list", "dict", str, int, float])


@st.composite
def _plain_functions(draw: st.DrawFn) -> Any:
    """A plain function of scalar parameters, written as source: annotations as classes or
    names, defaults, keyword-only and positional-only parameters, and a docstring that may
    describe its parameters in an Args: section."""
    names = draw(_PARAMETER_NAMES)
    annotations = {name: draw(_ANNOTATIONS) for name in names}
    defaults = [draw(st.booleans()) for _ in names]
    split = draw(st.integers(0, len(names)))  # parameters from here on are keyword-only
    slash = draw(st.integers(0, split))  # before here: positional-only
    params: list[str] = []
    seen_default = False
    for index, name in enumerate(names):
        if index == split:
            params.append("*")
        has_default = defaults[index] or (seen_default and index < split)
        seen_default = seen_default or (has_default and index < split)
        params.append(f"{name}=None" if has_default else name)
        if index + 1 == slash:
            params.append("/")
    summary = draw(st.sampled_from(["", "Act on it.", "  Act now.  ", "Act.\n\nMore."]))
    described = [n for n in names if draw(st.booleans())]
    doc = summary
    if described:
        lines = "\n".join(f"        {n}: The {n}.\n            Still the {n}." for n in described)
        doc = f"{summary or 'Act.'}\n\n    Args:\n{lines}\n    "
    namespace: dict[str, Any] = {}
    exec(f"def act({', '.join(params)}):\n    return 1\n", namespace)
    fn = namespace["act"]
    fn.__annotations__ = annotations
    fn.__doc__ = doc or None
    return fn


@given(
    _plain_functions(),
    st.sampled_from(["act", "refund_now", "émoji_pick", "not an identifier", "a-b"]),
    st.sampled_from([None, "", "Refund it.", "Two\nlines."]),
)
@settings(max_examples=150, deadline=None, database=None)
def test_the_block_a_first_sight_writes_is_the_block_its_fields_make(
    fn: Any, name: str, description: str | None
) -> None:
    _options.clear_caches()
    entry = fn if description is None else (fn, description)
    fast = normalize_options({name: entry, "done": "DONE"})
    slow_fn = _through_signature(fn)
    slow_entry = slow_fn if description is None else (slow_fn, description)
    slow = normalize_options({name: slow_entry, "done": "DONE"})
    _menu_text.clear_frames()
    assert fast.text == render_menu(fast.options) == slow.text
    assert render_menu(slow.options) == slow.text
