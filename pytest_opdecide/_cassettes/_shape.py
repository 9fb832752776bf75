"""What a cassette file may hold: the layout this library writes, checked before any replay.

A cassette arrives in pull requests and is read by a reviewer: replay must serve exactly what
the reviewer read, and meet no surprise half-way through a test. So the whole file is checked
when it is read, and anything outside the layout the library writes is refused, naming the line
and the fix (:class:`~._yaml_loader.Refused`):

* the top level holds ``interactions`` (a list) and ``version`` (a version this library writes:
  :data:`KNOWN_VERSIONS`), nothing else;
* each interaction holds a ``request`` (``method`` and ``uri`` text, optional ``body`` and
  ``headers``) and a ``response`` (``status`` with an integer ``code`` from 100 to 599 and an
  optional text ``message``, optional ``headers``, and ``body`` with its ``string``);
* a body is text, bytes (``!!binary``), nothing, JSON data under ``json`` (JSON values only:
  no dates, no bytes) or an event stream under ``events`` (each event ``data`` or ``raw``) or
  under ``event_stream`` (its text);
* a header's value is text, or a list of texts;
* a response whose headers name a ``Content-Encoding`` holds a body in that encoding: gzip and
  deflate (what replay's HTTP clients decode), and decoding it stays within the loader's bound
  (:func:`~._yaml_loader.expansion_limit`), all such bodies of the file together.

The loader (:mod:`._yaml_loader`) has already refused what no YAML file may do (aliases that
multiply, deep nesting, a key given twice).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_opdecide._cassettes._yaml_loader import Refused, expansion_limit, line_of

__all__ = ["KNOWN_VERSIONS", "check_encodings", "check_layout"]

KNOWN_VERSIONS = (1,)
"""The values of a cassette's ``version`` key that this library writes and reads."""

_JSON_SCALARS = (str, int, float, bool, type(None))
_JSON_SCALAR_TYPES = frozenset(_JSON_SCALARS)
_ENCODINGS = ("identity", "gzip", "deflate")
"""The content encodings replay checks (and its HTTP clients decode)."""


def _kind(value: Any) -> str:
    """What a value is, in a reader's words."""
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return f"the boolean {value!r}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the text {value[:40]!r}" + ("..." if len(value) > 40 else "")
    if isinstance(value, bytes):
        return "bytes (!!binary)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"


class _Checker:
    """Checks one loaded cassette; each refusal names the line of the value at fault."""

    def __init__(self, text: str) -> None:
        self.text = text
        # The containers whose JSON has been found to fit: one the file shares by an alias (a
        # response schema every request repeats) is walked once for the whole cassette.
        self.fitting: set[int] = set()

    def refuse(self, path: Sequence[Any], problem: str) -> Refused:
        return Refused(line_of(self.text, path), problem)

    def mapping(
        self,
        value: Any,
        path: Sequence[Any],
        what: str,
        *,
        required: Sequence[str],
        optional: Sequence[str] = (),
    ) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.refuse(
                path, f"{what} must be a mapping with {', '.join(required)}; it is {_kind(value)}."
            )
        for key in value:
            if key not in required and key not in optional:
                known = ", ".join([*required, *optional])
                raise self.refuse(
                    [*path, key],
                    f"{what} holds {key!r}, which this library neither writes nor reads "
                    f"(it knows {known}): remove it, or correct its name.",
                )
        for key in required:
            if key not in value:
                raise self.refuse(path, f"{what} lacks {key!r}: add it.")
        return value

    def text_value(self, value: Any, path: Sequence[Any], what: str) -> None:
        if not isinstance(value, str):
            raise self.refuse(path, f"{what} must be text; it is {_kind(value)}. Quote it ('...').")

    def headers(self, value: Any, path: Sequence[Any], what: str) -> None:
        if value is None:
            return
        if not isinstance(value, dict):
            raise self.refuse(path, f"{what} must be a mapping of names to values.")
        for name, values in value.items():
            self.text_value(name, [*path, name], f"a header name of {what}")
            for index, item in enumerate(values if isinstance(values, list) else [values]):
                if not isinstance(item, str):
                    where = [*path, name, index] if isinstance(values, list) else [*path, name]
                    raise self.refuse(
                        where,
                        f"the header {name!r} of {what} must be text (or a list of texts); it "
                        f"is {_kind(item)}. Quote it ('...'): replay sends headers as text.",
                    )

    def body(self, value: Any, path: Sequence[Any], what: str) -> None:
        if value is None or isinstance(value, str | bytes):
            return
        if (
            not isinstance(value, dict)
            or len(value) != 1
            or next(iter(value))
            not in (
                "json",
                "events",
                "event_stream",
            )
        ):
            raise self.refuse(
                path,
                f"{what} must be text, bytes (!!binary), empty, JSON data under 'json' or an "
                f"event stream under 'events'; it is {_kind(value)}"
                + (f" with {', '.join(map(repr, value))}" if isinstance(value, dict) else "")
                + ".",
            )
        if "json" in value:
            self.json([*path, "json"], value["json"], what)
            return
        if "event_stream" in value:
            self.text_value(value["event_stream"], [*path, "event_stream"], f"the stream of {what}")
            return
        events = value["events"]
        if not isinstance(events, list):
            raise self.refuse([*path, "events"], f"the events of {what} must be a list.")
        for index, event in enumerate(events):
            where = [*path, "events", index]
            if (
                not isinstance(event, dict)
                or len(event) != 1
                or next(iter(event))
                not in (
                    "data",
                    "raw",
                )
            ):
                raise self.refuse(
                    where,
                    f"event {index} of {what} must be a mapping with one key, 'data' (the "
                    "event's data) or 'raw' (its text as the server sent it).",
                )
            if "raw" in event:
                self.text_value(event["raw"], [*where, "raw"], f"event {index} of {what}")
            elif isinstance(event["data"], dict | list):
                self.json([*where, "data"], event["data"], f"event {index} of {what}")
            else:
                self.text_value(event["data"], [*where, "data"], f"event {index} of {what}")

    def json(self, path: Sequence[Any], value: Any, what: str) -> None:
        """Refuse a value that replay cannot send as JSON (a date, bytes, a set...)."""
        if not _json_fits(value, self.fitting):
            self._refuse_json(path, value, what)

    def _refuse_json(self, path: Sequence[Any], value: Any, what: str) -> None:
        """Find where ``value`` holds what JSON cannot carry, and say so: the walk of
        :func:`_json_fits` again, keeping the path of every item (only for a refused file)."""
        todo: list[tuple[list[Any], Any]] = [(list(path), value)]
        seen: set[int] = set()
        while todo:
            where, item = todo.pop()
            if isinstance(item, _JSON_SCALARS):
                continue
            if isinstance(item, dict | list):
                if id(item) in seen:
                    continue
                seen.add(id(item))
                if isinstance(item, list):
                    todo.extend(([*where, i], child) for i, child in enumerate(item))
                    continue
                for key, child in item.items():
                    if not isinstance(key, _JSON_SCALARS):
                        raise self.refuse(
                            where,
                            f"a key of {what}'s JSON data is {_kind(key)}: JSON keys are text.",
                        )
                    todo.append(([*where, key], child))
                continue
            raise self.refuse(
                where,
                f"{what} holds {_kind(item)} in its JSON data, which JSON cannot carry. Quote "
                "it ('...') if it is text.",
            )


def _json_fits(value: Any, seen: set[int] | None = None) -> bool:
    """Whether replay can send ``value`` as JSON: only JSON's scalars, lists and mappings with
    scalar keys. Iterative (the loader bounds the depth, not the breadth of the walk), each
    aliased container walked once, and no path kept: a cassette is read on every replay, and
    almost every one fits. Types are compared exactly (the loader gives no subclasses); a
    subclass takes :meth:`_Checker._refuse_json`'s walk, which decides as ``isinstance`` does.

    ``seen``: the ids of containers already found to fit (kept only when all of ``value``
    fits), to skip them; the objects must outlive the set (the loaded cassette does).
    """
    todo: list[Any] = [value]
    known = seen if seen is not None else set()
    walked: set[int] = set()
    scalars = _JSON_SCALAR_TYPES
    while todo:
        item = todo.pop()
        kind = type(item)
        if kind is list or kind is dict:
            if id(item) in walked or id(item) in known:
                continue
            walked.add(id(item))
            if kind is list:
                todo += [child for child in item if type(child) not in scalars]
                continue
            if not all(type(key) in scalars for key in item):
                return False
            todo += [child for child in item.values() if type(child) not in scalars]
        elif kind not in scalars:
            return False
    known |= walked
    return True


def check_layout(data: Any, text: str) -> None:
    """Refuse a loaded cassette (the readable form ``load_yaml`` gives) that is not in the
    layout the library writes (see the module's docstring); ``text`` is the file, for lines.

    Raises:
        Refused: Naming the line, what is wrong and the fix.
    """
    check = _Checker(text)
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise Refused(None, "not a cassette: expected a mapping with an 'interactions' list")
    if "version" not in data:
        raise Refused(None, "truncated: the final 'version' line is missing")
    check.mapping(data, [], "a cassette", required=("interactions", "version"))
    version = data["version"]
    if type(version) is not int or version not in KNOWN_VERSIONS:
        known = ", ".join(map(str, KNOWN_VERSIONS))
        raise check.refuse(
            ["version"],
            f"version {version!r} is not one this library writes: it reads version {known}.",
        )
    for index, interaction in enumerate(data["interactions"]):
        path = ["interactions", index]
        what = f"interaction #{index}"
        check.mapping(interaction, path, what, required=("request", "response"))
        request = check.mapping(
            interaction["request"],
            [*path, "request"],
            f"the request of {what}",
            required=("method", "uri"),
            optional=("body", "headers"),
        )
        for key in ("method", "uri"):
            check.text_value(request[key], [*path, "request", key], f"the {key} of {what}")
        check.headers(request.get("headers"), [*path, "request", "headers"], f"{what}'s request")
        check.body(request.get("body"), [*path, "request", "body"], f"the request body of {what}")
        response = check.mapping(
            interaction["response"],
            [*path, "response"],
            f"the response of {what}",
            required=("status", "body"),
            optional=("headers",),
        )
        status = check.mapping(
            response["status"],
            [*path, "response", "status"],
            f"the status of {what}",
            required=("code",),
            optional=("message",),
        )
        code = status["code"]
        if type(code) is not int or not 100 <= code <= 599:
            raise check.refuse(
                [*path, "response", "status", "code"],
                f"the status code of {what} is {_kind(code)}: an HTTP status code is a whole "
                "number from 100 to 599.",
            )
        if status.get("message") is not None:
            check.text_value(
                status["message"],
                [*path, "response", "status", "message"],
                f"the status message of {what}",
            )
        check.headers(response.get("headers"), [*path, "response", "headers"], f"{what}'s response")
        body = check.mapping(
            response["body"],
            [*path, "response", "body"],
            f"the response body of {what}",
            required=("string",),
        )
        check.body(
            body["string"], [*path, "response", "body", "string"], f"the response body of {what}"
        )


def _encodings(headers: Mapping[str, Any] | None) -> list[str]:
    """The content codings a response's headers name, in the order they were applied."""
    found: list[str] = []
    for name, values in (headers or {}).items():
        if name.lower() == "content-encoding":
            for value in values if isinstance(values, list) else [values]:
                found += [part.strip().lower() for part in str(value).split(",") if part.strip()]
    return found


def _decoded(coding: str, body: bytes, room: int) -> bytes:
    """``body`` decoded from ``coding`` (at most ``room + 1`` bytes of it).

    Raises:
        zlib.error: The body is not in that coding, or ends before its stream does.
    """
    if coding == "gzip":
        decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
        content = decoder.decompress(body, room + 1)
    else:  # deflate: zlib's format, or the raw stream some servers send (as httpx reads it)
        try:
            decoder = zlib.decompressobj()
            content = decoder.decompress(body, room + 1)
        except zlib.error:
            decoder = zlib.decompressobj(-zlib.MAX_WBITS)
            content = decoder.decompress(body, room + 1)
    if len(content) <= room and not decoder.eof:
        raise zlib.error("the data ends before the compressed stream does")
    return content


def check_encodings(data: Mapping[str, Any], text: str) -> None:
    """Refuse a response whose body is not in the ``Content-Encoding`` its headers name.

    ``data`` is the cassette as replay uses it (bodies raw, headers as lists): the library
    stores bodies decoded and drops the header, so a body that still claims an encoding was
    recorded by another tool or edited; replay would hand it to the client, whose decoder
    fails half-way through the test. Decoding is bounded: all the decoded bodies of the file
    together stay within :func:`~._yaml_loader.expansion_limit` of its size.

    Raises:
        Refused: Naming the interaction's line, the encoding and the fix.
    """
    room = expansion_limit(len(text))
    for index, interaction in enumerate(data["interactions"]):
        response = interaction["response"]
        codings = [coding for coding in _encodings(response.get("headers")) if coding != "identity"]
        if not codings:
            continue
        path = ["interactions", index, "response", "body"]
        what = f"the response of interaction #{index}"
        body = response["body"]["string"]
        content = body.encode("utf-8") if isinstance(body, str) else body or b""
        for coding in reversed(codings):
            if coding not in _ENCODINGS:
                raise Refused(
                    line_of(text, path),
                    f"{what} says Content-Encoding {coding!r}, which replay does not check "
                    f"(it knows {', '.join(_ENCODINGS)}): store the body decoded and remove "
                    "the header (as the library records it).",
                )
            try:
                content = _decoded(coding, content, room)
            except zlib.error as error:
                raise Refused(
                    line_of(text, path),
                    f"{what} says Content-Encoding {coding!r}, but its body is not {coding} "
                    f"data ({error}). If the body is stored decoded, remove the "
                    "Content-Encoding header.",
                ) from None
            room -= len(content)
            if room < 0:
                raise Refused(
                    line_of(text, path),
                    f"{what} decodes ({coding}) past {expansion_limit(len(text)):,} bytes, "
                    "the bound for a file of this size: store the body decoded.",
                )
