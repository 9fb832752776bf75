"""Reading and writing one cassette file: whole or not at all, scrubbed, or refused clearly.

Reading turns the file into :class:`~._tape.Interaction` values; a file that is
not a cassette, or is cut short, is refused with :class:`CassetteCorrupt`, naming the file and
how to record it again. Writing scrubs every interaction (:mod:`._scrub`), lets the project's
hook scrub more, serialises the readable YAML, runs the scrubber's text net over it, checks that
replay reads it and replaces the file in one rename (:func:`~pytest_opdecide._files.write_atomic`).

The check reads the text back (:meth:`ReadableYaml.check`), except when the text is provably our
own writing of data checked directly: no hook ran and the net changed nothing
(:meth:`ReadableYaml.check_own` says when that is proof enough). Each event stream is parsed
once for every pass (:meth:`Scrubber.parsed_streams`), and the cycle collector rests while the
file is written.
"""

from __future__ import annotations

import copy
import gc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_opdecide._cassettes._matching import rerecord_hint
from pytest_opdecide._cassettes._scrub import Scrubber
from pytest_opdecide._cassettes._tape import Interaction
from pytest_opdecide._cassettes._yaml_format import (
    ReadableYaml,
    Refused,
    raw_body,
    readable_body,
)
from pytest_opdecide._files import write_atomic

__all__ = ["CassetteCorrupt", "ScrubHook", "read_interactions", "write_cassette"]

ScrubHook = Callable[[dict[str, Any]], dict[str, Any] | None]
"""Called with each interaction as the cassette stores it; changes it or returns another."""


class CassetteCorrupt(ValueError):
    """A cassette file cannot be read; the message names it, the line and how to fix it.

    Attributes:
        path: The cassette file.
        line: The line of the file at fault (1-based), ``None`` when it is the whole file.
    """

    __module__ = "pytest_opdecide"

    def __init__(self, message: str, *, path: Path | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.line = line


def read_interactions(path: Path, nodeid: str = "") -> list[Interaction]:
    """The interactions of the cassette at ``path``, every one checked before any replays.

    Raises:
        CassetteCorrupt: The file is not a cassette (not YAML, cut short), or holds what the
            library does not replay (see :mod:`._shape` and :mod:`._yaml_loader`): the message
            names the line and the fix.
    """
    try:
        text = path.read_text(encoding="utf-8")
        data = ReadableYaml.deserialize(text)
        return [Interaction.from_stored(stored) for stored in data["interactions"]]
    except Refused as refused:
        if refused.line is None:  # the whole file: not a cassette, or cut short
            message = f"cassette {path} is corrupt or truncated ({refused.problem}).\n"
        else:
            message = f"cassette {path}, line {refused.line}: {refused.problem}\nOr "
        raise CassetteCorrupt(
            message + rerecord_hint(path, nodeid), path=path, line=refused.line
        ) from None
    except Exception as exc:
        raise CassetteCorrupt(
            f"cassette {path} is corrupt or truncated ({type(exc).__name__}: {exc}).\n"
            + rerecord_hint(path, nodeid),
            path=path,
        ) from None


def _run_user_scrub(
    request: dict[str, Any], response: dict[str, Any], hook: ScrubHook
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run a scrub hook on the interaction as the cassette stores it: text, JSON bodies as
    data (``body["json"]``), event streams as ``body["events"]``."""
    request["body"] = readable_body(request.get("body"), request.get("headers", {}))
    body = response.get("body")
    if isinstance(body, dict) and "string" in body:
        body["string"] = readable_body(body["string"], response.get("headers", {}))
    interaction = {"request": request, "response": response}
    interaction = hook(interaction) or interaction
    request, response = interaction["request"], interaction["response"]
    request["body"] = raw_body(request.get("body"))
    body = response.get("body")
    if isinstance(body, dict) and "string" in body:
        body["string"] = raw_body(body["string"])
    return request, response


def write_cassette(
    path: Path,
    interactions: Sequence[tuple[dict[str, Any], dict[str, Any]]],
    *,
    scrubber: Scrubber,
    scrub_hook: ScrubHook | None = None,
) -> None:
    """Write ``interactions`` (request and response dicts, as vcrpy records them) to ``path``,
    scrubbed, whole or not at all. The dicts are not changed.

    Raises:
        CassetteCorrupt: The scrubbed text is no longer a cassette that replay reads (the last
            net replaced something the passes over the data had not: a secret spanning YAML
            syntax; or the hook stored what replay refuses). Nothing is written.
    """
    # Writing builds many objects and no cycle (an event stream's data, the YAML's nodes, the
    # data read back): the cycle collector would only run over and over on the growing trees
    # (half of the time of a long stream's writing). As :func:`load_yaml` does.
    collecting = gc.isenabled()
    gc.disable()
    try:
        _write(path, interactions, scrubber, scrub_hook)
    finally:
        if collecting:
            gc.enable()


_IMMUTABLE = frozenset({str, bytes, int, float, bool, type(None)})


def _copied(value: Any, memo: dict[int, Any]) -> Any:
    """``copy.deepcopy(value, memo)`` for the plain data vcrpy records, without its
    bookkeeping for every value: a dict or list held twice is copied once (the copy holds it
    twice too, as the cassette writes it), immutable values are kept, anything else is
    deep-copied."""
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    if kind is dict or kind is list:
        made = memo.get(id(value))
        if made is not None:
            return made
        if kind is dict:
            made = memo[id(value)] = {}
            for key, item in value.items():
                made[_copied(key, memo)] = _copied(item, memo)
        else:
            made = memo[id(value)] = []
            made.extend(_copied(item, memo) for item in value)
        return made
    return copy.deepcopy(value, memo)


def _write(
    path: Path,
    interactions: Sequence[tuple[dict[str, Any], dict[str, Any]]],
    scrubber: Scrubber,
    scrub_hook: ScrubHook | None,
) -> None:
    memo: dict[int, Any] = {}
    pairs = [
        (_copied(request, memo), _copied(response, memo)) for request, response in interactions
    ]
    scrubber.interactions(pairs)
    stored = []
    for request, response in pairs:
        if scrub_hook is not None:
            request, response = _run_user_scrub(request, response, scrub_hook)
        stored.append({"request": request, "response": response})
    data = {"interactions": stored, "version": 1}
    # Our own copies, unless a hook may have handed back objects of its own.
    streams = scrubber.parsed_streams()  # each stream is parsed once, not once per pass
    documents = scrubber.parsed_documents()  # and each JSON body
    held = scrubber.block_streams()  # and each long stream's lines
    if scrub_hook:
        text, anchored = ReadableYaml.serialize(data), True
    else:
        text, anchored = ReadableYaml.written_owned(data, streams, documents, held)
    scrubbed = scrubber.text(text)
    try:  # nothing is written that replay would refuse
        if scrub_hook is None and scrubbed == text:
            ReadableYaml.check_own(data, text, anchored)  # our own writing of our own data
        else:
            ReadableYaml.check(scrubbed)
    except Exception as exc:
        if scrubbed != text:
            # Only the kind of error: its text may quote the file around the secret.
            kind = "ValueError" if isinstance(exc, Refused) else type(exc).__name__
            raise CassetteCorrupt(
                f"cassette {path} was not written: a secret could not be removed without "
                f"breaking the file ({kind}). Scrub it in a "
                "pytest_opdecide_scrub_interaction hook.",
                path=path,
            ) from None
        raise CassetteCorrupt(
            f"cassette {path} was not written: replay would refuse it ({exc}). Change what "
            "is recorded in a pytest_opdecide_scrub_interaction hook.",
            path=path,
        ) from None
    write_atomic(path, scrubbed)
