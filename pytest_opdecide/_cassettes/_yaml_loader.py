"""Reading YAML that arrived in a pull request: fast, and at most linear in the file's size.

A cassette is untrusted input. YAML lets a short file stand for a huge value: an anchor
(``&a``) names a value and every alias (``*a``) repeats it, so ten aliases of an anchor that
holds ten aliases of the next... make a few hundred bytes read as a value of gigabytes, which
nothing notices until something walks it (turning a JSON body back into text does). The
loader here bounds that while it parses, before anything is built from it:

* **Expansion.** The *expanded size* of a file is its size in characters plus, for every
  alias, the expanded size of the value it repeats (the anchored value's characters in the
  file, plus the aliases inside it, repeated in turn). It may be at most :data:`EXPANSION`
  times the file's size plus :data:`EXPANSION_FLOOR` characters (:func:`expansion_limit`);
  the alias that would go past it is refused, naming its line.
* **Nesting.** At most :data:`MAX_DEPTH` mappings and lists inside each other.
* **Cycles.** An alias inside the value its anchor names (a value that contains itself).
* **Duplicate keys.** A mapping that names a key twice: a reader sees one value, a loader
  keeps the other.

Everything the loader builds is then at most linear in the file's size, and so is everything
that walks it. Refusals are :class:`Refused` errors, with the line and what to do.

:func:`load_yaml` builds the data straight from libyaml's events (about twice as fast as
``yaml.safe_load``, and checking as it goes); what it leaves to PyYAML's safe loader (tags on
collections, merge keys, several documents, errors) is read the usual way only after every
event of the file has passed the same checks.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Sequence
from typing import Any

import yaml

__all__ = [
    "EXPANSION",
    "EXPANSION_FLOOR",
    "MAX_DEPTH",
    "Refused",
    "expansion_limit",
    "line_of",
    "load_yaml",
]

EXPANSION = 32
"""How many times its own size a file may expand to through its aliases (see the module)."""
EXPANSION_FLOOR = 1 << 20
"""Characters of expansion every file may have, however short (1 MiB)."""
MAX_DEPTH = 100
"""How many mappings and lists may be nested inside each other."""


def expansion_limit(size: int) -> int:
    """The largest expanded size allowed for a file of ``size`` characters."""
    return EXPANSION * size + EXPANSION_FLOOR


class Refused(ValueError):
    """YAML (or a cassette in it) that the library does not read, with the line and the fix.

    Attributes:
        line: The line of the file (1-based) where the problem is, ``None`` when it is the
            whole file.
        problem: What is wrong, and what to do (one or two sentences).
    """

    def __init__(self, line: int | None, problem: str) -> None:
        self.line = line
        self.problem = problem
        super().__init__(f"line {line}: {problem}" if line is not None else problem)


_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML has it (about ten times faster), else the Python one."""

_TAG = "tag:yaml.org,2002:"


class _Unusual(Exception):
    """YAML that the fast path leaves to PyYAML's own loader (tags on collections, merge keys,
    several documents, errors): rare in a cassette, and read the usual way."""


_RESOLVED_FIRST = frozenset(key for key in yaml.SafeLoader.yaml_implicit_resolvers if key)
"""First characters of plain scalars that may be something else than text (numbers, null,
booleans, ...): any other plain scalar is text, with no resolver to ask."""
_ANY_FIRST = None in yaml.SafeLoader.yaml_implicit_resolvers
_WORDS = frozenset(
    {
        *("yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE"),
        *("false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"),
        *("null", "Null", "NULL", "~"),
    }
)
"""The plain scalars starting with a letter that YAML 1.1 reads as booleans or null."""
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_WORD_FIRST = (
    frozenset("yYnNtTfFoO")
    if all(
        {tag for tag, _ in yaml.SafeLoader.yaml_implicit_resolvers.get(first, [])}
        <= {_TAG + "bool", _TAG + "null"}
        for first in "yYnNtTfFoO"
    )
    else frozenset()
)
"""First letters whose only readings are the words above (unless a library added resolvers)."""


def _scalar(event: Any, loader: Any) -> Any:
    tag = event.tag
    if tag is None or tag == "!":
        value = event.value
        if not event.implicit[0]:  # quoted or block text
            return value
        if value and value[0] not in _RESOLVED_FIRST and not _ANY_FIRST:
            return value
        tag = loader.resolve(yaml.ScalarNode, value, event.implicit)
    if tag == _TAG + "str":
        return event.value
    if tag == _TAG + "null":
        return None
    node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
    if tag == _TAG + "int":
        return loader.construct_yaml_int(node)
    if tag == _TAG + "float":
        return loader.construct_yaml_float(node)
    if tag == _TAG + "bool":
        return loader.construct_yaml_bool(node)
    if tag == _TAG + "merge":
        raise _Unusual
    return loader.construct_object(node)  # !!binary, !!timestamp...; unknown tags raise


_COLLECTION_TAGS = (None, "!", _TAG + "seq", _TAG + "map")
_NO_KEY = object()


def _line(event: Any) -> int:
    return int(event.start_mark.line) + 1


def _too_large(event: Any, size: int) -> Refused:
    return Refused(
        _line(event),
        f"the alias *{event.anchor} makes the file expand past {expansion_limit(size):,} "
        f"characters ({EXPANSION} times its {size:,} characters, plus {EXPANSION_FLOOR:,}): "
        "anchors that repeat anchors multiply what is read far beyond what a reviewer sees. "
        "Write the repeated values out (the library's own anchors stay within the bound).",
    )


def _fast_load(text: str, *, check_only: bool = False) -> Any:
    """Build the data straight from libyaml's events, without composing nodes first, refusing
    what the module's docstring lists as it goes.

    Raises:
        Refused: See the module's docstring.
        _Unusual: Once every event has been checked, for what PyYAML's loader must read (or
            always, with ``check_only``).
        yaml.YAMLError: The text is not YAML (PyYAML's loader says where).
    """
    scalar, alias = yaml.ScalarEvent, yaml.AliasEvent
    seq_start, map_start = yaml.SequenceStartEvent, yaml.MappingStartEvent
    seq_end, map_end = yaml.SequenceEndEvent, yaml.MappingEndEvent
    stream_end, document_start = yaml.StreamEndEvent, yaml.DocumentStartEvent
    words_first, words, resolved_first, decimal = _WORD_FIRST, _WORDS, _RESOLVED_FIRST, _DECIMAL
    no_key = _NO_KEY
    size = len(text)
    room = expansion_limit(size) - size  # what aliases may add
    grown = 0
    unusual = check_only
    loader = _SafeLoader(text)
    get_event = loader.get_event
    try:
        # The open container, whether it is a list, and the key waiting for its value; the
        # enclosing ones on the stack.
        container: Any = None
        is_list = False
        pending: Any = no_key
        stack: list[tuple[Any, bool, Any]] = []
        anchors: dict[str, Any] = {}
        sizes: dict[str, int] = {}  # the expanded size of each complete anchored value
        # Anchored collections still open: the container, its anchor, where it starts and
        # what aliases had added by then.
        open_anchors: list[tuple[Any, str, int, int]] = []
        result: Any = None
        documents = 0
        while True:
            event = get_event()
            kind = event.__class__
            if kind is scalar:
                value = event.value
                try:
                    if event.tag is not None:
                        value = _scalar(event, loader)
                    elif event.implicit[0]:  # a plain scalar: text, a number, a bool, null...
                        if not value:
                            value = None
                        else:
                            first = value[0]
                            if first in words_first:
                                if value in words:
                                    value = _scalar(event, loader)
                            elif first in resolved_first:
                                value = (
                                    int(value) if decimal.match(value) else _scalar(event, loader)
                                )
                except (_Unusual, yaml.YAMLError, TypeError, ValueError):
                    unusual, value = True, object()
                if event.anchor is not None:
                    anchors[event.anchor] = value
                    sizes[event.anchor] = event.end_mark.index - event.start_mark.index + 1
            elif kind is map_start or kind is seq_start:
                if len(stack) >= MAX_DEPTH:
                    raise Refused(
                        _line(event),
                        f"more than {MAX_DEPTH} mappings and lists are nested inside each "
                        "other here: no cassette needs that many, and reading them would "
                        "exhaust the stack. Flatten the value.",
                    )
                if event.tag not in _COLLECTION_TAGS:
                    unusual = True
                opened: Any = [] if kind is seq_start else {}
                if event.anchor is not None:
                    anchors[event.anchor] = opened
                    sizes.pop(event.anchor, None)  # open: an alias to it now is a cycle
                    open_anchors.append((opened, event.anchor, event.start_mark.index, grown))
                stack.append((container, is_list, pending))
                container, is_list, pending = opened, kind is seq_start, no_key
                continue
            elif kind is map_end or kind is seq_end:
                value = container
                if open_anchors and open_anchors[-1][0] is value:
                    _, name, start, before = open_anchors.pop()
                    sizes[name] = event.end_mark.index - start + 1 + grown - before
                container, is_list, pending = stack.pop()
            elif kind is alias:
                name = event.anchor
                expanded = sizes.get(name)
                if expanded is None:
                    if name in anchors:
                        raise Refused(
                            _line(event),
                            f"the alias *{name} is inside the value its anchor &{name} names: "
                            "a value that contains itself has no end. Write the value out.",
                        )
                    unusual, value = True, None  # PyYAML names the undefined alias
                else:
                    grown += expanded
                    if grown > room:
                        raise _too_large(event, size)
                    value = anchors[name]
            elif kind is stream_end:
                if unusual:
                    raise _Unusual
                return result
            elif kind is document_start:
                documents += 1
                if documents > 1:
                    unusual = True
                continue
            else:  # the stream's start, a document's end
                continue
            if container is None:
                result = value
            elif is_list:
                container.append(value)
            elif pending is no_key:
                pending = value
            else:
                try:
                    if pending in container:
                        unusual = True  # PyYAML's loader below names the key and its lines
                    container[pending] = value
                except TypeError:  # an unhashable key: PyYAML's loader refuses it
                    unusual = True
                pending = no_key
    finally:
        loader.dispose()


class _CheckedLoader(_SafeLoader):  # type: ignore[misc]
    """PyYAML's safe loader, refusing a key given twice in one mapping (merged keys, ``<<``,
    may be given again: that is what merging is for)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == _TAG + "merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:
                    continue  # PyYAML refuses an unhashable key itself
                if first is not key_node:
                    raise Refused(
                        key_node.start_mark.line + 1,
                        f"the key {key!r} is given twice in one mapping (first at line "
                        f"{first.start_mark.line + 1}): a reader sees one value and replay "
                        "would use the other. Keep one of them.",
                    )
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """Parse YAML safely (as ``yaml.safe_load`` does), about twice as fast for plain data, in
    time and memory at most linear in the text's size.

    A cassette's loading time is most of what replaying it costs: PyYAML composes a node for
    every value before building the data; this builds the data from libyaml's events directly,
    checking each (see the module's docstring). Anything unusual (and every error, for its
    message) goes through the safe loader itself once every event has passed.

    Raises:
        Refused: An alias expands the text past :func:`expansion_limit`, values are nested
            deeper than :data:`MAX_DEPTH`, a value contains itself, or a mapping gives a key
            twice.
        yaml.YAMLError: The text is not YAML, or not safe YAML.
    """
    # Parsing allocates thousands of objects and no cycle: the cycle collector would only run
    # over and over on the growing tree (a third of the parsing time).
    collecting = gc.isenabled()
    gc.disable()
    try:
        # Without libyaml, or with resolvers the fast path does not know, the events are only
        # checked, and PyYAML's loader builds the data.
        return _fast_load(text, check_only=_SafeLoader is yaml.SafeLoader or _ANY_FIRST)
    except _Unusual:
        return yaml.load(text, Loader=_CheckedLoader)  # a safe loader
    except yaml.YAMLError:
        # Every event before the error passed the checks: PyYAML stops at the same place.
        return yaml.load(text, Loader=_CheckedLoader)
    finally:
        if collecting:
            gc.enable()


def line_of(text: str, path: Sequence[Any]) -> int | None:
    """The line (1-based) of the value at ``path`` (keys and list indexes) in YAML ``text``
    that :func:`load_yaml` has read: of its key, when the last step is a key. The nearest
    enclosing value's line when the path leads nowhere; ``None`` when the text is not YAML.
    """
    try:
        node = yaml.compose(text, Loader=_SafeLoader)
    except yaml.YAMLError:
        return None
    if node is None:
        return None
    line = int(node.start_mark.line) + 1
    for step in path:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(step):
                    line, node = int(key_node.start_mark.line) + 1, value_node
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
            if not 0 <= step < len(node.value):
                return line
            node = node.value[step]
            line = int(node.start_mark.line) + 1
        else:
            return line
    return line
