"""Cassettes: real model replies recorded once (vcrpy underneath) and replayed offline.

What this layer adds to vcrpy, each answering a complaint of its users, each in a module of its
own:

* **Safe by default** (:mod:`._scrub`). Credentials in headers, key-like query parameters and
  configured JSON body fields are replaced by a placeholder before anything is written, and
  the serialised text is searched once more for every secret value seen, so an echoed key
  cannot land either.
* **Readable** (:mod:`._yaml_format`). JSON bodies are stored as structured YAML, compressed
  bodies decoded, long prompts as literal blocks, server-sent event streams event by event.
* **Matching that explains itself** (:mod:`._matching`). JSON request bodies match by content
  (key order ignored, volatile paths ignored); a request that matches nothing fails with a diff
  against the nearest recorded request; interactions never replayed fail the test at the end
  (:mod:`._tape`).
* **Fast replay** (:mod:`._replay_transport`). This package's own runtimes and providers are
  answered straight from the loaded cassette through an httpx transport, streams event by event;
  every other HTTP client is replayed and recorded by vcrpy, configured through its documented
  extension points (:mod:`._vcr`).
* **Beside other HTTP mocks** (:mod:`._recording_transport`). While recording, this package's
  own clients reach the server past pytest-httpx or respx and are recorded here, in order with
  what vcrpy records; vcrpy records and replays nothing another mock answers.
* **Atomic** (:mod:`._file`). A cassette is written whole (temporary file, then
  rename) or not at all: a test that fails while recording writes nothing, and a corrupt file is
  reported with how to fix it.
* **No cut-off stream passes for a reply** (:func:`mark_truncated`). A chat-completions stream
  that ended before the server finished it is recorded as it came, marked with the header
  :data:`TRUNCATED_HEADER`: replayed, the runtime raises the same ``MalformedResponseError`` as
  it did while recording, and whoever reads the file sees why.

:func:`use_cassette` ties them together; the pytest plugin's cassette tests use it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pytest_opdecide._cassettes import RECORD_MODES
from pytest_opdecide._cassettes._file import (
    CassetteCorrupt,
    ScrubHook,
    write_cassette,
)
from pytest_opdecide._cassettes._log_filters import credentials_kept_out_of_logs
from pytest_opdecide._cassettes._matching import CassetteMismatch
from pytest_opdecide._cassettes._recording_transport import RecordingTransport
from pytest_opdecide._cassettes._replay_transport import CassetteTransport
from pytest_opdecide._cassettes._scrub import (
    DEFAULT_BODY_FIELDS,
    PLACEHOLDER,
    MachinePaths,
    Scrubber,
)
from pytest_opdecide._cassettes._tape import Tape, UnplayedInteractions
from pytest_opdecide._cassettes._vcr import VcrCassette
from pytest_opdecide._cassettes._yaml_format import body_text, header
from pytest_opdecide._http._replay_routing import replaying
from pytest_opdecide.runtimes._protocol import unfinished_stream

__all__ = [
    "PLACEHOLDER",
    "RECORD_MODES",
    "TRUNCATED_HEADER",
    "CassetteCorrupt",
    "CassetteMismatch",
    "MachinePaths",
    "UnplayedInteractions",
    "mark_truncated",
    "use_cassette",
]

TRUNCATED_HEADER = "x-opdecide-truncated-stream"
"""The response header that marks a recorded chat-completions stream cut off before its end;
its value says what came (``the stream ended before the server finished it: 1 event came, with
no finish_reason and no [DONE]``)."""


def mark_truncated(interactions: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """Mark, in place, each chat-completions stream among ``interactions`` (as vcrpy records
    them) that ended before the server finished it: no ``[DONE]`` and no ``finish_reason``,
    judged as the runtime judges it (:func:`~pytest_opdecide.runtimes._protocol.unfinished_stream`).

    The events stay as the server sent them, so that replay hands the runtime the same stream
    and it raises the same error; the header :data:`TRUNCATED_HEADER` says it is no reply.
    """
    for request, response in interactions:
        path = urlsplit(str(request.get("uri", ""))).path
        headers = response.setdefault("headers", {})
        body = response.get("body")
        if not path.endswith("/chat/completions") or "event-stream" not in header(
            headers, "content-type"
        ):
            continue
        text = body_text(body.get("string")) if isinstance(body, dict) else None
        why = unfinished_stream(text) if text is not None else None
        if why is not None:
            headers[TRUNCATED_HEADER] = [why]


class _NotSaved(Exception):
    """Leaves vcrpy's block without saving: the test's work did not succeed."""


@contextlib.contextmanager
def use_cassette(
    path: str | os.PathLike[str],
    *,
    record: str = "none",
    volatile: tuple[str, ...] = (),
    scrub_fields: tuple[str, ...] = DEFAULT_BODY_FIELDS,
    allow_unused: bool = False,
    nodeid: str = "",
    scrub_hook: ScrubHook | None = None,
    passed: Callable[[], bool] | None = None,
    machine_paths: MachinePaths | None = None,
) -> Iterator[Tape]:
    """Wire every HTTP request made inside the ``with`` block to the cassette at ``path``.

    The plain-Python core of the plugin's cassettes (the ``runtime`` fixture of a
    ``cassette=True`` test uses it), usable from any test runner.

    Args:
        path: The cassette file.
        record: ``none`` (replay only: a request not in the cassette raises
            :class:`CassetteMismatch`), ``once``, ``new_episodes``, ``all`` or ``rewrite``.
        volatile: Dotted JSON body paths ignored when matching (``*`` matches every key or
            list item).
        scrub_fields: JSON body fields replaced by the placeholder before writing.
        allow_unused: Do not raise :class:`UnplayedInteractions` for interactions never replayed.
        nodeid: The test's id, for the "re-record it" hints of messages.
        scrub_hook: Called with each interaction before it is written (as the cassette stores
            it); may change it in place or return a replacement.
        passed: Whether the block's work succeeded, asked at its end (pytest fixtures cannot see
            the test's exception); by default, whether the block raised. Nothing is written, and
            unplayed interactions are not reported, when it did not.
        machine_paths: The absolute paths of this machine written as placeholders
            (``<PROJECT>``, ``<HOME>``, ``<TMP>``, ``<SITE-PACKAGES>``...) and compared so at
            replay; by default :meth:`MachinePaths.current` (the working directory as the
            project). ``MachinePaths(generic=False)`` keeps every path as it came.

    Yields:
        The cassette's tape: its recorded interactions and which were replayed.

    Raises:
        CassetteCorrupt: The file cannot be read (at the start).
        UnplayedInteractions: At the end, when recorded interactions were never replayed.
        ValueError: ``record`` is not a record mode.
    """
    if record not in RECORD_MODES:
        modes = f"{', '.join(RECORD_MODES[:-1])} or {RECORD_MODES[-1]}"
        raise ValueError(f"record must be {modes}, got {record!r}")
    where = Path(path)
    paths = MachinePaths.current() if machine_paths is None else machine_paths
    tape = Tape(
        where,
        volatile=volatile,
        scrub_fields=scrub_fields,
        nodeid=nodeid,
        mode=record,
        paths=paths,
    )
    machine = VcrCassette(tape, record)
    try:
        with credentials_kept_out_of_logs(), machine.open(where):
            # This package's clients are answered here (the fast way) when only replaying, and
            # recorded here otherwise: past other mocks, in vcrpy's order.
            machine.replaying_here = machine.protected
            with replaying(
                CassetteTransport(tape) if machine.replaying_here else RecordingTransport(machine)
            ):
                yield tape  # an exception here leaves without saving anything
            if passed is not None and not passed():
                raise _NotSaved
    except _NotSaved:
        return  # a failure records nothing, and its unplayed interactions prove nothing
    if not machine.protected:
        pending = machine.persister.pending
        if pending is not None:
            mark_truncated(pending)
        if pending is not None and record == "all":
            # What was recorded again replaces what it matches; the rest of the file stays.
            pending = tape.not_recorded_again(pending) + pending
        if pending is not None or record == "rewrite" or not where.is_file():
            # A test that passed without any request gets an empty cassette: its replay finds one.
            write_cassette(
                where,
                pending or [],
                scrubber=Scrubber(scrub_fields, paths=paths),
                scrub_hook=scrub_hook,
            )
    if record in ("none", "once") and len(tape) and not allow_unused:
        message = tape.unplayed_message()
        if message:
            raise UnplayedInteractions(message)
