"""Options and their fields as the decision library reads them: for tools that generate picks.

``decision.make`` accepts options in several forms (a dict of values, functions, schema options, a
list...). :func:`normalize_options` reads any of them into a :class:`Menu` of :class:`Option`
values, each with its fields (:class:`FieldSpec`), each field with its type (a :class:`TypeSpec`:
:class:`ScalarSpec`, :class:`ChoiceSpec`, :class:`ListSpec`, :class:`SequenceSpec`,
:class:`DictSpec`, :class:`ObjectSpec`, :class:`ModelSpec`, :class:`PydanticSpec`,
:class:`UnionSpec`, :class:`NoneSpec` or :class:`UnknownSpec`). :func:`parse_reply` checks a
reply exactly as ``decision.make`` does, raising :class:`ParseFailure` with the message the model
would read. ``META_KEYS`` are the keys that make a dict in schema notation the description of one
field (``{"type": int, "description": ...}``) rather than an object of fields; a ``Param`` (in
``typing.Annotated``) describes a function parameter.

Generators of picks (the seeded fakes, the Hypothesis strategies, your own) draw values of these
types with :func:`draw_value` and :func:`draw_arguments`, one generator per type, every choice
made by a :class:`ValueSource`: :class:`RandomSource` over a seeded ``random.Random``, or one of
your own, whose :class:`ValueLimits` bound what a type that sets no bounds draws. Replies that
must fail take their values from :func:`wrong_type_value` and :func:`disallowed_value`.

Example:
    >>> import random
    >>> from pytest_opdecide.options import (
    ...     RandomSource, ScalarSpec, draw_arguments, normalize_options, parse_reply
    ... )
    >>> def refund(amount: float) -> str:
    ...     return f"refunded {amount}"
    >>> menu = normalize_options({"refund": refund, "close": "CLOSED"})
    >>> menu.names
    ('refund', 'close')
    >>> field = menu.by_name["refund"].fields[0]
    >>> field.name, isinstance(field.type, ScalarSpec)
    ('amount', True)
    >>> option, args = parse_reply('{"call": "refund", "args": {"amount": 9.5}}', menu)
    >>> option.name, args
    ('refund', {'amount': 9.5})
    >>> draw_arguments(menu.by_name["refund"].fields, RandomSource(random.Random(7)))
    {'amount': 32.38}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_opdecide._nextstep._annotations import META_KEYS, Param
from pytest_opdecide._nextstep._field_types import (
    ChoiceSpec,
    DictSpec,
    FieldSpec,
    ListSpec,
    ModelSpec,
    NoneSpec,
    ObjectSpec,
    PydanticSpec,
    ScalarSpec,
    SequenceSpec,
    TypeSpec,
    UnionSpec,
    UnknownSpec,
)
from pytest_opdecide._nextstep._options import Menu, Option, normalize_options
from pytest_opdecide._nextstep._procedure import read_reply
from pytest_opdecide._nextstep._validation import ParseFailure
from pytest_opdecide._nextstep._values import (
    CannotGenerate,
    RandomSource,
    ValueLimits,
    ValueSource,
    disallowed_value,
    draw_arguments,
    draw_value,
    wrong_type_value,
)

__all__ = [
    "META_KEYS",
    "CannotGenerate",
    "ChoiceSpec",
    "DictSpec",
    "FieldSpec",
    "ListSpec",
    "Menu",
    "ModelSpec",
    "NoneSpec",
    "ObjectSpec",
    "Option",
    "Param",
    "ParseFailure",
    "PydanticSpec",
    "RandomSource",
    "ScalarSpec",
    "SequenceSpec",
    "TypeSpec",
    "UnionSpec",
    "UnknownSpec",
    "ValueLimits",
    "ValueSource",
    "disallowed_value",
    "draw_arguments",
    "draw_value",
    "normalize_options",
    "parse_reply",
    "wrong_type_value",
]


def parse_reply(
    reply: Any, menu: Menu, context: Mapping[str, Any] | None = None
) -> tuple[Option, dict[str, Any]]:
    """Parse and validate one model reply against ``menu``, as ``decision.make`` does once.

    Args:
        reply: The model's reply (text holding a JSON pick, or the pick as an object).
        menu: The options offered (:func:`normalize_options`).
        context: The values of the options' ``FromContext`` parameters.

    Returns:
        The option picked and its validated arguments.

    Raises:
        ParseFailure: The reply picks nothing valid; ``kind`` says why (``no_action``,
            ``unknown_call``, ``bad_args``, ``missing_required``, ``type_mismatch``...) and
            ``message`` is what the model would be told.
    """
    return read_reply(reply, menu, context)
