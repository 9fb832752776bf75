"""The menu text: each option written as the block the model reads, the blocks joined.

A block is the option's signature line, its description, a line per field and a ``Call:``
example. The signature and the field and ``Call:`` lines are kept by the option's name and
fields (*frames*), so that a description with each call's own text is all that is written anew;
an option without fields is written at once, its frame costing less to write than to look up,
and so is a function option whose fields are all plain: its shape carries what its fields write
(:func:`plain_parts`), made as its parameters were read (:func:`framed_block`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_opdecide._bounded import drop_oldest
from pytest_opdecide._nextstep._field_types import (
    FieldSpec,
    ScalarSpec,
    call_example,
    shown_choice,
)

if TYPE_CHECKING:
    from pytest_opdecide._nextstep._options import Option

__all__ = [
    "PLAIN_SHOWN",
    "PlainParts",
    "clear_frames",
    "fieldless_block",
    "framed_block",
    "plain_parts",
    "render_block",
    "render_menu",
]


def _field_line(f: FieldSpec) -> str:
    line = f"    {f.name}"
    if f.description:
        line += f": {f.description}"
    if f.type.choices is not None:
        line += " (options: " + ", ".join(shown_choice(v) for v in f.type.choices) + ")"
    return line


_frame_cache: dict[Any, tuple[str, str]] = {}
_FRAME_CACHE_MAX = 8192


def render_menu(options: list[Option] | tuple[Option, ...]) -> str:
    """Render options as the menu text the model reads."""
    return "".join([render_block(opt) for opt in options])[:-1]


def _frame(opt: Option) -> tuple[str, str]:
    """The signature line of ``opt``'s block, and its field and ``Call:`` lines."""
    frame = _plain_frame(opt)
    return _general_frame(opt) if frame is None else frame


def _general_frame(opt: Option) -> tuple[str, str]:
    head = f"{opt.name}(" + ", ".join(f"{f.name}: {f.type.label}" for f in opt.fields) + ")"
    lines = [_field_line(f) for f in opt.fields]
    call: dict[str, Any] = {"call": opt.name}
    if opt.fields:
        call["args"] = {f.name: f.type.placeholder() for f in opt.fields}
    lines.append(f"    Call: {call_example(call)}")
    return head, "\n".join(lines) + "\n\n"


PLAIN_SHOWN = {str: '"<str>"', int: "<int>", float: "<float>", bool: "<bool>"}
"""What the ``Call:`` example shows for a plain field of each class (its placeholder, as
:func:`call_example` writes it)."""

PlainParts = tuple[str, str, str]
"""The parts of a block that plain fields make, whatever the option's name and description:
the signature's parameters (``amount: float, reason: str``), the field lines (each ending with
a line break) and the ``Call:`` example's arguments (``"amount": <float>, "reason": "<str>"``)."""


def plain_parts(fields: list[tuple[str, str, str, str]]) -> PlainParts:
    """The :data:`PlainParts` of fields named by identifiers, each given as its name, its
    type's label, its description and what the ``Call:`` example shows for it
    (:data:`PLAIN_SHOWN`). (A function's first sight writes the same parts as it reads its
    parameters, in ``_function_shapes._scalar_shape``; a test holds the two to the same
    text.)"""
    signature = ", ".join([f"{name}: {label}" for name, label, _, _ in fields])
    lines = "".join(
        [f"    {name}: {described}\n" if described else f"    {name}\n"
         for name, _, described, _ in fields]
    )  # fmt: skip
    args = ", ".join([f'"{name}": {shown}' for name, _, _, shown in fields])
    return signature, lines, args


def _plain_head_tail(name: str, parts: PlainParts) -> tuple[str, str]:
    """The frame of an option named by an identifier, from its fields' parts."""
    signature, lines, args = parts
    example = f'{{"call": "{name}", "args": {{{args}}}}}' if args else f'{{"call": "{name}"}}'
    return f"{name}({signature})", f"{lines}    Call: {example}\n\n"


def _plain_frame(opt: Option) -> tuple[str, str] | None:
    """:func:`_frame` of an option whose name and field names are identifiers (JSON writes
    each as itself in quotes: no character of an identifier is escaped) and whose fields are
    plain ``str``, ``int``, ``float`` or ``bool``; ``None`` for any other."""
    name = opt.name
    if type(name) is not str or not name.isidentifier():
        return None
    fields: list[tuple[str, str, str, str]] = []
    for f in opt.fields:
        spec = f.type
        if type(spec) is not ScalarSpec:
            return None
        shown = PLAIN_SHOWN.get(spec.pytype)
        field = f.name
        if shown is None or type(field) is not str or not field.isidentifier():
            return None
        fields.append((field, spec.label, f.description, shown))
    return _plain_head_tail(name, plain_parts(fields))


def framed_block(name: str, description: str, parts: PlainParts) -> str:
    """The block of an option named by an identifier whose fields made ``parts`` (see
    :func:`plain_parts`): what :func:`render_block` writes for it (its frame written by
    :func:`_plain_head_tail` around its description), in one pass, without a frame to look up
    (a function option's shape carries its parts)."""
    head, tail = _plain_head_tail(name, parts)
    if description:
        described = description.strip("\n").replace("\n", "\n    ")
        return f"{head}\n    {described}\n{tail}"
    return f"{head}\n{tail}"


def fieldless_block(name: str, description: str) -> str:
    """The block of an option without fields whose name is an identifier, written at once: its
    frame costs less to write than to look up, and a name new on every call (an option per
    item) fills no cache. What :func:`render_block` writes for such an option."""
    if description:
        described = description.strip("\n").replace("\n", "\n    ")
        return f'{name}()\n    {described}\n    Call: {{"call": "{name}"}}\n\n'
    return f'{name}()\n    Call: {{"call": "{name}"}}\n\n'


def render_block(opt: Option) -> str:
    """The block of ``opt`` in the menu text, ending with its blank line."""
    name = opt.name
    if not opt.fields and type(name) is str and name.isidentifier():
        return fieldless_block(name, opt.description)
    # The signature line, and the field and Call: lines, are kept by name and fields: a
    # description that changes per call is all that is written anew.
    key = (name, opt.fields)
    frame = _frame_cache.get(key)
    if frame is None:
        frame = _frame(opt)
        if len(_frame_cache) >= _FRAME_CACHE_MAX:
            drop_oldest(_frame_cache, _FRAME_CACHE_MAX)
        _frame_cache[key] = frame
    head, tail = frame
    if opt.description:
        described = opt.description.strip("\n").replace("\n", "\n    ")
        return f"{head}\n    {described}\n{tail}"
    return f"{head}\n{tail}"


def clear_frames() -> None:
    """Forget every kept frame (for benchmarks)."""
    _frame_cache.clear()
