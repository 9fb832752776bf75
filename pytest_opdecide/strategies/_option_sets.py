"""Options of next-step decisions, in dict or list form, with function, value and schema options.

Function options are drawn from typed example functions, module-level here so that their names
and annotations resolve; value options carry JSON values; schema options carry schema notation
nested at random.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from hypothesis import strategies as st

from pytest_opdecide.options import META_KEYS, Param
from pytest_opdecide.strategies._question_decisions import check_range
from pytest_opdecide.strategies._realistic import json_values, realistic_text

__all__ = ["option_sets"]

# --- options -------------------------------------------------------------------------------------
# Example option functions: module-level (so that their names and annotations resolve), typed
# with what the decision library supports.


def lookup_order(order_id: str) -> dict[str, str]:
    """Look up an order.

    Args:
        order_id: The order's id, e.g. A-1042.
    """
    return {"order_id": order_id, "status": "shipped"}


def refund(amount: float, reason: str = "") -> dict[str, Any]:
    """Refund the customer.

    Args:
        amount: The amount in dollars.
        reason: Why, for the audit log.
    """
    return {"refunded": amount, "reason": reason}


def escalate(team: Literal["billing", "technical", "legal"], note: str | None = None) -> str:
    """Hand the ticket to a team."""
    return f"escalated to {team}"


def set_priority(level: Annotated[int, Param("1 = low, 3 = high", options=[1, 2, 3])]) -> int:
    """Set the ticket's priority."""
    return level


def tag_ticket(tags: list[str], public: bool = False) -> list[str]:
    """Add tags to the ticket."""
    return tags


def schedule_callback(minutes: int, channels: dict[str, bool] | None = None) -> str:
    """Call the customer back later."""
    return f"callback in {minutes} minutes"


def close_ticket() -> str:
    """Close the ticket: nothing more to do."""
    return "closed"


_FUNCTIONS: tuple[Callable[..., Any], ...] = (
    lookup_order,
    refund,
    escalate,
    set_priority,
    tag_ticket,
    schedule_callback,
    close_ticket,
)
_FUNCTION_NAMES = frozenset(f.__name__ for f in _FUNCTIONS)
_VALUE_NAMES = (
    "done", "wait", "ask_for_details", "reply", "spam", "billing", "shipping", "route_to_human",
    "summarise", "translate", "plan", "retry", "give_up", "answer",
)  # fmt: skip
_FIELD_NAMES = (
    "amount", "reason", "team", "note", "tags", "priority", "order_id", "when", "steps",
    "customer", "address", "quantity", "urgent", "language",
)  # fmt: skip
assert not META_KEYS & set(_FIELD_NAMES)  # a dict of only meta keys is read as a meta-spec


@functools.cache
def _schema_leaves() -> st.SearchStrategy[Any]:
    words = st.lists(realistic_text("word"), min_size=1, max_size=4, unique=True)
    return st.one_of(
        st.sampled_from([str, int, float, bool, list, dict]),
        realistic_text("sentence"),
        st.builds(
            lambda t, d: {"type": t, "description": d},
            st.sampled_from([str, int, float, bool]),
            realistic_text("sentence"),
        ),
        words.map(lambda options: {"type": str, "options": options}),
        st.lists(st.integers(0, 10), min_size=1, max_size=4, unique=True).map(
            lambda options: {"type": int, "options": options}
        ),
    )


def _schema_fields(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(_FIELD_NAMES), children, min_size=1, max_size=3)


@functools.cache
def _schema_notation() -> st.SearchStrategy[Any]:
    return st.recursive(
        _schema_leaves(),
        lambda children: st.one_of(
            children.map(lambda child: [child]),
            _schema_fields(children),
            st.builds(
                lambda fields, description: {"fields": fields, "description": description},
                _schema_fields(children),
                realistic_text("sentence"),
            ),
            children.map(lambda child: {"items": child}),
        ),
        max_leaves=6,
    )


@functools.cache
def _schemas() -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(_FIELD_NAMES), _schema_notation(), max_size=4)


@st.composite
def _option_set(
    draw: st.DrawFn, forms: tuple[str, ...], kinds: tuple[str, ...], min_size: int, max_size: int
) -> dict[str, Any] | list[Any]:
    form = draw(st.sampled_from(forms))
    drawn = draw(st.lists(st.sampled_from(kinds), min_size=min_size, max_size=max_size))
    functions = draw(
        st.lists(
            st.sampled_from(_FUNCTIONS),
            min_size=drawn.count("function"),
            max_size=drawn.count("function"),
            unique_by=(lambda f: f.__name__) if form == "list" else None,
        )
        if drawn.count("function") <= len(_FUNCTIONS) or form == "dict"
        else st.just(list(_FUNCTIONS))
    )
    names = iter(
        draw(
            st.lists(
                st.one_of(
                    st.sampled_from(_VALUE_NAMES),
                    st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True).filter(
                        lambda name: name not in _FUNCTION_NAMES
                    ),
                ),
                min_size=len(drawn),
                max_size=len(drawn),
                unique=True,
            )
        )
    )
    pending = iter(functions)
    entries: list[Any] = []
    as_dict: dict[str, Any] = {}
    for kind in drawn:
        described = draw(st.booleans())
        description = draw(realistic_text("sentence"))
        if kind == "function":
            fn = next(pending, None)
            if fn is None:  # more function options than functions in list form
                kind = "value"
            else:
                entries.append((fn, description) if described else fn)
                as_dict[next(names)] = (fn, description) if described else fn
                continue
        name = next(names)
        if kind == "value":
            value = draw(json_values(max_leaves=4))
            entries.append((name, description) if described else name)
            as_dict[name] = (value, description) if described else value
        else:
            schema = draw(_schemas())
            entries.append((name, description, schema))
            as_dict[name] = (description, schema)
    return as_dict if form == "dict" else entries


def option_sets(
    *,
    form: Literal["dict", "list"] | None = None,
    kinds: Sequence[str] = ("function", "value", "schema"),
    min_size: int = 1,
    max_size: int = 5,
) -> st.SearchStrategy[dict[str, Any] | list[Any]]:
    """Options of a next-step decision, in dict form (``{name: handler}``) or list form.

    Function options are drawn from a set of typed example functions (``lookup_order``,
    ``refund``, ``escalate``...); value options carry JSON values; schema options carry schema
    notation nested at random (``[template]``, ``{field: ...}``, meta-specs with ``options``,
    ``fields`` and ``items``).

    Args:
        form: ``"dict"``, ``"list"``, or ``None`` for either.
        kinds: Some of ``function``, ``value`` and ``schema``.
        min_size: The fewest options (at least 1).
        max_size: The most options.
    """
    forms = ("dict", "list") if form is None else (form,)
    chosen = tuple(kinds)
    if not chosen or any(kind not in ("function", "value", "schema") for kind in chosen):
        raise ValueError(f"kinds are some of function, value and schema, got {list(chosen)}")
    check_range("options", min_size, max_size, floor=1)
    return _option_set(forms, chosen, min_size, max_size)
