"""Functions defined inside the method that decides: new objects on every call, one shape.

Closures share their code; their shapes are kept by code and by what else the shape is made of
(defaults, annotations, docstring, globals), compared exactly, so that a fresh closure is read
at the cost of a few comparisons, and one that differs in any of them is read anew. (No
``from __future__ import annotations`` here: the closures' annotations are evaluated per call.)
"""

import inspect
import typing
from typing import Annotated, Any, Literal

import pytest

from pytest_opdecide import Param
from pytest_opdecide._nextstep import _function_shapes, _options
from pytest_opdecide._nextstep._options import normalize_options

from . import _future_types


def _make(limit: Any, doc: str = "Refund the customer.") -> Any:
    def refund(amount: int, reason: str = "late", cap: Any = limit) -> str:
        return f"{amount} {reason} {cap}"

    refund.__doc__ = doc
    return refund


def test_closures_of_one_code_share_their_shape() -> None:
    first, second = _make(5), _make(5)
    assert first is not second
    one = normalize_options({"refund": first}).by_name["refund"]
    two = normalize_options({"refund": second}).by_name["refund"]
    assert one.fields is two.fields  # read once
    assert two.handler is second  # each call's own function is the one called


def test_a_closure_with_another_default_is_read_anew() -> None:
    menu = normalize_options({"refund": _make(5)})
    other = normalize_options({"refund": _make(True)})
    assert [f.default for f in menu.by_name["refund"].fields][-1] == 5
    assert [f.default for f in other.by_name["refund"].fields][-1] is True
    required = normalize_options({"refund": _make(1)}).by_name["refund"].fields
    assert required[-1].default == 1
    assert type(required[-1].default) is int


def test_a_closure_with_another_docstring_is_read_anew() -> None:
    assert "Refund the customer." in normalize_options({"refund": _make(1)}).text
    assert "Pay back." in normalize_options({"refund": _make(1, "Pay back.")}).text


def _typed(kind: Any, options: tuple[Any, ...]) -> Any:
    def pick_it(value: kind, level: Annotated[int, Param("Level", options=options)]) -> str:
        return str(value)

    return pick_it


def test_a_closure_with_other_annotations_is_read_anew() -> None:
    text = normalize_options({"p": _typed(Literal["a", "b"], (1, 2))}).text
    assert '"a", "b"' in text
    changed = normalize_options({"p": _typed(Literal["a", "c"], (1, 2))}).text
    assert '"c"' in changed
    assert changed != text
    levels = normalize_options({"p": _typed(Literal["a", "b"], (1, 3))}).text
    assert "(options: 1, 3)" in levels
    assert "(options: 1, 2)" in text
    assert "(options: 1, 2)" not in levels


def test_an_annotation_changed_in_place_is_read_anew() -> None:
    fn = _make(1)
    assert "amount: int" in normalize_options({"refund": fn}).text
    again = _make(1)
    again.__annotations__["amount"] = str
    assert "amount: str" in normalize_options({"refund": again}).text
    assert "amount: int" in normalize_options({"refund": _make(1)}).text


def test_the_shapes_kept_by_code_are_bounded() -> None:
    _options.clear_caches()
    for n in range(_function_shapes._CODE_CACHE_MAX + 50):
        namespace: dict[str, Any] = {}
        exec(f"def f{n}(x: int) -> int:\n    return x", namespace)
        normalize_options({"f": namespace[f"f{n}"]})
    assert len(_function_shapes._code_cache) <= _function_shapes._CODE_CACHE_MAX
    _options.clear_caches()


def _typed_futures() -> list[Any]:
    # That module's annotations are strings (``from __future__ import annotations``).
    return [v for v in vars(_future_types).values() if inspect.isfunction(v)]


@pytest.mark.parametrize("fn", _typed_futures(), ids=lambda fn: fn.__name__)
def test_annotations_resolved_on_the_quick_path_are_what_get_type_hints_resolves(fn: Any) -> None:
    quick = _function_shapes._quick_hints(fn)
    try:
        full = typing.get_type_hints(fn, include_extras=True)
    except NameError:  # the unresolvable ones: never on the quick path
        assert quick is None
        return
    full.pop("return", None)
    assert quick is None or quick == full
    if fn.__name__ == "scalars":
        assert quick == full  # plain classes are resolved on the quick path


class _Shadow:
    """A class a module binds to the name of a builtin."""


@pytest.mark.parametrize(
    ("names", "annotation"),
    [
        ({}, "str"),  # a builtin class
        ({"str": int}, "str"),  # a module name shadowing the builtin
        ({"list": _Shadow}, "list"),
        ({"Order": _Shadow}, "Order"),
        ({"Nothing": None}, "Nothing"),  # a name bound to None: NoneType, as get_type_hints has it
        ({"Mode": Literal["a", "b"]}, "Mode"),  # not plain: left to get_type_hints
        ({"Count": Annotated[int, "n"]}, "Count"),
        ({}, "NoSuchName"),  # names nothing
        ({}, "print"),  # a builtin that is no class
        ({}, "None"),
        ({"x": 1}, "x"),  # not a type at all
    ],
)
def test_a_bare_name_annotation_resolves_as_get_type_hints_resolves_it(
    names: dict[str, Any], annotation: str
) -> None:
    namespace: dict[str, Any] = dict(names)
    exec("def act(thing):\n    return thing", namespace)
    fn = namespace["act"]
    fn.__annotations__ = {"thing": annotation}
    quick = _quick_hints_agree(fn)
    if annotation in {"str", "list", "Order", "Nothing", "None"}:
        assert quick is not None  # found without compiling the annotation


@pytest.mark.parametrize("builtins_of", ["a dict", "a module", "a dict without str", "no dict"])
def test_a_bare_builtin_name_is_looked_up_where_eval_looks(builtins_of: str) -> None:
    import builtins

    found: Any = {
        "a dict": dict(vars(builtins)),
        "a module": builtins,
        "a dict without str": {k: v for k, v in vars(builtins).items() if k != "str"},
        "no dict": object(),
    }[builtins_of]
    namespace: dict[str, Any] = {"__builtins__": found}
    exec("def act(thing):\n    return thing", {"__builtins__": builtins}, namespace)
    fn = type(namespace["act"])(namespace["act"].__code__, namespace)
    fn.__annotations__ = {"thing": "str"}
    _quick_hints_agree(fn)


def _quick_hints_agree(fn: Any) -> Any:
    """The quick path's hints of ``fn``, having checked them against ``get_type_hints``: the
    same, or ``None`` (left to it), and ``None`` where it fails."""
    quick = _function_shapes._quick_hints(fn)
    try:
        full = typing.get_type_hints(fn, include_extras=True)
    except Exception:
        assert quick is None
        return None
    assert quick is None or quick == full
    return quick


def test_a_local_function_s_shape_changed_in_place_is_read_anew() -> None:
    # Functions defined inside another are kept by code, not by identity: a change made to
    # the same object must still be seen by the shape.
    def refund(amount: int, reason: str = "late") -> str:
        """Refund the customer."""
        return reason

    assert "<locals>" in refund.__qualname__
    assert refund.__closure__ is None
    first = _function_shapes._function_shape(refund)
    assert [f.default for f in first.fields] == [inspect.Parameter.empty, "late"]
    refund.__defaults__ = ("early",)
    refund.__doc__ = "Refund at once."
    again = _function_shapes._function_shape(refund)
    assert [f.default for f in again.fields] == [inspect.Parameter.empty, "early"]
    assert again.description == "Refund at once."


def test_a_local_function_changed_in_place_is_read_anew() -> None:
    def refund(amount: int, reason: str = "late") -> str:
        """Refund the customer."""
        return reason

    assert "<locals>" in refund.__qualname__
    assert refund.__closure__ is None
    first = normalize_options({"refund": refund})
    assert [f.default for f in first.options[0].fields] == [inspect.Parameter.empty, "late"]
    refund.__defaults__ = ("early",)
    refund.__doc__ = "Refund at once."
    again = normalize_options({"refund": refund})
    assert [f.default for f in again.options[0].fields] == [inspect.Parameter.empty, "early"]
    assert "Refund at once." in again.text
    refund.__annotations__["amount"] = float
    edited = normalize_options({"refund": refund})
    assert "amount: float" in edited.text


def test_a_module_function_changed_in_place_is_read_anew() -> None:
    # The same menu object too: the exact snapshot holds the function's parts as they were.
    options = {"refund": _module_refund, "close": "CLOSED"}
    saved = (_module_refund.__defaults__, _module_refund.__doc__)
    try:
        assert "Refund the customer." in normalize_options(options).text
        _module_refund.__doc__ = "Refund at once."
        _module_refund.__defaults__ = ("early",)
        again = normalize_options(options)
        assert "Refund at once." in again.text
        assert [f.default for f in again.options[0].fields] == [inspect.Parameter.empty, "early"]
    finally:
        _module_refund.__defaults__, _module_refund.__doc__ = saved
    assert "Refund the customer." in normalize_options(options).text


def _module_refund(amount: int, reason: str = "late") -> str:
    """Refund the customer."""
    return reason
