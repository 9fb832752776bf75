"""Replies to next-step decisions: valid picks of an option, and replies that must fail.

A valid reply picks an option with arguments its field types accept, in any of the ways a
model writes a pick (bare JSON, after prose, in a fenced block, with the ``action`` key); an
invalid reply carries the ``DecisionError`` kind it must end in.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from fake_runtimes import InvalidReply
from fake_runtimes import invalid_replies as _seeded_invalid_replies
from pytest_opdecide.options import (
    ChoiceSpec,
    DictSpec,
    FieldSpec,
    ListSpec,
    ModelSpec,
    NoneSpec,
    ObjectSpec,
    Option,
    PydanticSpec,
    ScalarSpec,
    SequenceSpec,
    TypeSpec,
    UnionSpec,
    normalize_options,
)
from pytest_opdecide.strategies._question_decisions import option_names
from pytest_opdecide.strategies._realistic import json_values, realistic_text

__all__ = ["ValidReply", "invalid_replies", "valid_replies"]

# --- replies -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidReply:
    """A reply that picks an option validly.

    Attributes:
        text: The reply text, as a model would send it.
        option: The picked option's name.
        args: The arguments it sends (before validation converts them).
    """

    text: str
    option: str
    args: dict[str, Any]

    def __str__(self) -> str:
        return self.text


def _values_for(spec: TypeSpec, depth: int = 0) -> st.SearchStrategy[Any]:
    """JSON values ``spec`` accepts."""
    if isinstance(spec, ChoiceSpec):
        return st.sampled_from(list(spec.choices or (None,)))
    if isinstance(spec, ScalarSpec):
        kind = spec.pytype
        if kind is str:
            return st.one_of(realistic_text("word"), st.text(max_size=30))
        if kind is bool:
            return st.booleans()
        if kind is int:
            return st.integers(min_value=-(10**6), max_value=10**6)
        if kind is float:
            return st.one_of(
                st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9),
                st.integers(min_value=-1000, max_value=1000),
            )
        if kind is list:
            return st.lists(json_values(max_leaves=4), max_size=3)
        return st.dictionaries(st.text(max_size=8), json_values(max_leaves=4), max_size=3)
    if isinstance(spec, NoneSpec):
        return st.none()
    if depth > 6:
        return st.nothing()
    if isinstance(spec, ListSpec):
        return st.lists(_values_for(spec.item, depth + 1), max_size=3)
    if isinstance(spec, SequenceSpec):
        items = [_values_for(item, depth + 1) for item in spec.items]
        if not spec.variadic:
            return st.tuples(*items).map(list)
        unique = spec.kind != "tuple"  # a set's items are distinct (as JSON)
        return st.lists(items[0], max_size=3, unique_by=_as_json if unique else None)
    if isinstance(spec, PydanticSpec):
        # Drawn from the type's JSON schema by a generator seeded by hypothesis: reproducible,
        # shrinking towards seed 0, and checked by pydantic (a value it refuses is not drawn).
        leaf = spec
        return (
            st.integers(min_value=0, max_value=2**32 - 1)
            .map(lambda seed: leaf.example(random.Random(seed)))
            .filter(leaf.accepts)
        )
    if isinstance(spec, DictSpec):
        return st.dictionaries(st.text(max_size=8), _values_for(spec.value, depth + 1), max_size=3)
    if isinstance(spec, ObjectSpec):
        return _fields_values(spec.fields, depth + 1)
    if isinstance(spec, ModelSpec):
        model_spec = spec
        return _fields_values(spec.shape.fields, depth + 1).filter(model_spec.accepts)
    if isinstance(spec, UnionSpec):
        return st.one_of([_values_for(member, depth + 1) for member in spec.members])
    return json_values(max_leaves=4)


def _as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _fields_values(fields: Sequence[FieldSpec], depth: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {f.name: _values_for(f.type, depth) for f in fields if f.required},
        optional={f.name: _values_for(f.type, depth) for f in fields if not f.required},
    )


_PROSE = realistic_text("sentence").map(lambda text: text.replace("{", "(").replace("}", ")"))


@st.composite
def _reply_for(draw: st.DrawFn, option: Option) -> ValidReply:
    args = draw(_fields_values(option.fields, 0)) if option.kind != "value" else {}
    payload: dict[str, Any] = {"call": option.name}
    with_args = bool(args) or draw(st.booleans())
    if with_args:
        payload["args"] = args
    body = json.dumps(payload, ensure_ascii=draw(st.booleans()))
    style = draw(st.sampled_from(["bare", "prose", "fenced", "action_key"]))
    if style == "prose":
        text = f"{draw(_PROSE)}\n\n{body}"
    elif style == "fenced":
        text = f"{draw(_PROSE)}\n```json\n{json.dumps(payload, indent=2)}\n```"
    elif style == "action_key":
        payload = {"action": payload.pop("call"), **payload}
        text = json.dumps(payload)
    else:
        text = body
    return ValidReply(text, option.name, args)


def valid_replies(options: Any) -> st.SearchStrategy[ValidReply]:
    """Replies that pick one of ``options`` with arguments its field types accept.

    The reply comes as the bare JSON pick, after prose, in a fenced ``json`` block, or with
    the ``action`` key; optional fields are sent or left out at random.

    Args:
        options: Options in dict or list form.

    Raises:
        TypeError, ValueError: The options are malformed (as ``decision.render_options``).
    """
    menu = normalize_options(options)
    return st.sampled_from(menu.options).flatmap(_reply_for)


def _unknown_call(names: frozenset[str]) -> st.SearchStrategy[InvalidReply]:
    return (
        st.one_of(option_names(), st.text(min_size=1, max_size=20))
        .filter(lambda name: name not in names)
        .map(
            lambda name: InvalidReply(
                "unknown_call", json.dumps({"call": name}), f"{name!r} is not an option"
            )
        )
    )


def invalid_replies(options: Any) -> st.SearchStrategy[InvalidReply]:
    """Replies that must end in ``DecisionError``, each with the error ``kind`` it produces.

    Kinds: ``no_action`` (no JSON pick), ``unknown_call`` (an option not offered),
    ``bad_args`` (arguments not an object), and where the options allow it
    ``missing_required``, ``type_mismatch`` and ``enum_violation``. Built on
    :func:`fake_runtimes.invalid_replies` (seeded by hypothesis) plus generated prose and
    made-up option names.

    Args:
        options: Options in dict or list form.
    """
    menu = normalize_options(options)

    def seeded(seed: int) -> st.SearchStrategy[InvalidReply]:
        return st.sampled_from(_seeded_invalid_replies(options, seed=seed))

    return st.one_of(
        st.integers(min_value=0, max_value=10_000).flatmap(seeded),
        _PROSE.map(lambda text: InvalidReply("no_action", text, "prose without a JSON pick")),
        _unknown_call(frozenset(menu.names)),
    )
