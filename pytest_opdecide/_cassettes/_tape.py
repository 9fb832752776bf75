"""The recorded interactions of one cassette, as replay uses them, and which were replayed.

A :class:`Tape` is what a cassette file holds once read: each :class:`Interaction` with its
request (as compared) and its response (as replayed). Replay takes interactions off the tape in
the cassette's order: a request gets the first recorded interaction that matches it and has not
been replayed yet (see :mod:`._matching` for what "matches" means). At the end, the
interactions never replayed are reported (:class:`UnplayedInteractions`).

Two players share one tape: this project's own HTTP layer, through the replay transport
(:mod:`._replay_transport`), and any other HTTP client, through vcrpy (:mod:`._vcr`), which tells
the tape what it replayed through :attr:`Tape.played_elsewhere`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_opdecide._cassettes._matching import (
    CassetteMismatch,
    RequestKey,
    hashable_key,
    mismatch_message,
    request_key,
    rerecord_hint,
)
from pytest_opdecide._cassettes._scrub import (
    DEFAULT_BODY_FIELDS,
    MachinePaths,
    Redaction,
    shown_uri,
)
from pytest_opdecide._cassettes._yaml_format import header

__all__ = ["Interaction", "Tape", "UnplayedInteractions"]


class UnplayedInteractions(AssertionError):
    """Recorded interactions were never replayed by the test."""

    __module__ = "pytest_opdecide"


@dataclass(frozen=True, slots=True)
class Interaction:
    """One recorded request and its response, as read from the cassette.

    Attributes:
        method: The request's method.
        uri: The request's URL (as recorded: no user info, secrets as the placeholder).
        body: The request's body as sent, or ``None``.
        request_headers: The request's headers (name to values).
        status: The response's status code.
        reason: The response's reason phrase (``""``: none recorded).
        response_headers: The response's headers (name to values).
        content: The response's body as the server sent it (decoded, not compressed).
    """

    method: str
    uri: str
    body: bytes | None
    request_headers: Mapping[str, list[str]]
    status: int
    reason: str
    response_headers: Mapping[str, list[str]]
    content: bytes
    streamed: bool = field(init=False)
    """Whether the response is a server-sent event stream (replayed event by event)."""

    def __post_init__(self) -> None:
        kind = header(self.response_headers, "content-type")
        object.__setattr__(self, "streamed", "event-stream" in kind)

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> Interaction:
        """An interaction from the cassette's data (bodies raw, headers as lists).

        Raises:
            KeyError, TypeError, ValueError: The data is not an interaction.
        """
        request, response = stored["request"], stored["response"]
        content = response["body"]["string"]
        if content is None:
            content = b""
        elif isinstance(content, str):
            content = content.encode("utf-8")
        elif not isinstance(content, bytes):
            raise TypeError(f"the response body is {type(content).__name__}, not text")
        body = request.get("body")
        if isinstance(body, str):
            body = body.encode("utf-8")  # as clients send it
        status = response["status"]
        return cls(
            method=str(request["method"]),
            uri=str(request["uri"]),
            body=body,
            request_headers=dict(request.get("headers") or {}),
            status=int(status["code"]),
            reason=str(status.get("message") or ""),
            response_headers=dict(response.get("headers") or {}),
            content=content,
        )

    def stored(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The request and the response as vcrpy records them (to be written again)."""
        request = {
            "method": self.method,
            "uri": self.uri,
            "body": self.body,
            "headers": {name: list(values) for name, values in self.request_headers.items()},
        }
        response = {
            "status": {"code": self.status, "message": self.reason},
            "headers": {name: list(values) for name, values in self.response_headers.items()},
            "body": {"string": self.content},
        }
        return request, response


class _Sent:
    """A request being sent, as matching and messages see it."""

    __slots__ = ("body", "method", "uri")

    def __init__(self, method: str, uri: str, body: Any) -> None:
        self.method = method
        self.uri = uri
        self.body = body


def _exact_key(method: str, uri: str, body: Any) -> Hashable:
    return (method, uri, body)


class _Bucket:
    """Interactions in cassette order, and how many at its start have been replayed."""

    __slots__ = ("cursor", "indexes")

    def __init__(self, indexes: list[int] | None = None) -> None:
        self.indexes: list[int] = [] if indexes is None else indexes
        self.cursor = 0

    def first(self, played: Callable[[int], bool]) -> int | None:
        """The first interaction not replayed (the cursor moves past those that were)."""
        while self.cursor < len(self.indexes) and played(self.indexes[self.cursor]):
            self.cursor += 1
        return self.indexes[self.cursor] if self.cursor < len(self.indexes) else None


class Tape:
    """The interactions of one cassette and which of them have been replayed.

    Args:
        path: The cassette file (for messages).
        interactions: Its interactions, in order (none: an empty or a new cassette).
        volatile: Dotted JSON body paths ignored when matching.
        scrub_fields: JSON body fields compared as scrubbed, besides the secret-named ones.
        nodeid: The test's id, for the "re-record it" hints of messages.
        mode: The record mode (for messages).
        paths: The machine paths requests are compared without (default: this machine's).
    """

    def __init__(
        self,
        path: Path,
        interactions: Sequence[Interaction] = (),
        *,
        volatile: tuple[str, ...] = (),
        scrub_fields: tuple[str, ...] = DEFAULT_BODY_FIELDS,
        nodeid: str = "",
        mode: str = "none",
        paths: MachinePaths | None = None,
    ) -> None:
        self.path = path
        self.volatile = volatile
        self.scrub_fields = scrub_fields
        self.redaction = Redaction(scrub_fields, paths=paths)
        """How requests are compared as stored (the known secrets are read when first
        needed)."""
        self.nodeid = nodeid
        self.mode = mode
        self.played_elsewhere: Callable[[int], bool] = lambda index: False
        """Whether an interaction was replayed by another player (vcrpy, for other clients)."""
        self._lock = threading.Lock()
        self.load(interactions)

    def load(self, interactions: Sequence[Interaction]) -> None:
        """Hold ``interactions`` (read from the file), none of them replayed yet."""
        self.interactions = list(interactions)
        self.plays = [0] * len(self.interactions)
        """How often each interaction was replayed by this package's own HTTP clients."""
        self._keys: list[RequestKey | None] = [None] * len(self.interactions)
        # The index replay looks requests up in (constant time per request, in order or not):
        # the recorded requests by method, URL and raw body (built now: hashing is cheap), and
        # by what matching compares (built when first needed: it parses every body). Each
        # bucket lists its interactions in cassette order, with a cursor past those replayed
        # (replayed stays replayed, so cursors only move on).
        self._exact: dict[Hashable, _Bucket] = {}
        for index, stored in enumerate(self.interactions):
            exact = _exact_key(stored.method, stored.uri, stored.body)
            self._exact.setdefault(exact, _Bucket()).indexes.append(index)
        self._by_key: dict[Hashable, _Bucket] | None = None
        self._all = _Bucket(list(range(len(self.interactions))))

    def __len__(self) -> int:
        return len(self.interactions)

    def played(self, index: int) -> bool:
        """Whether interaction ``index`` has been replayed, by any player."""
        return self.plays[index] > 0 or self.played_elsewhere(index)

    @property
    def play_count(self) -> int:
        """How many interactions have been replayed (each counted once)."""
        return sum(1 for index in range(len(self)) if self.played(index))

    @property
    def all_played(self) -> bool:
        """Whether every interaction has been replayed."""
        return self.play_count == len(self)

    def key(self, index: int) -> RequestKey:
        """What matching compares of recorded request ``index`` (computed once)."""
        known = self._keys[index]
        if known is None:
            stored = self.interactions[index]
            known = self._keys[index] = request_key(
                stored.method, stored.uri, stored.body, self.volatile, self.redaction
            )
        return known

    def find(self, method: str, uri: str, body: Any) -> int | None:
        """The first interaction that matches the request and has not been replayed.

        Looked up in an index, not by comparing the request with every recorded one. A
        recorded request with the very same method, URL and body, when it is the first not
        replayed, matches without either body being parsed: the usual case, when a test sends
        what it sent while recording.
        """
        first = self._all.first(self.played)
        if first is None:
            return None
        exact: int | None = None
        try:
            bucket = self._exact.get(_exact_key(method, uri, body))
        except TypeError:  # a body that cannot be hashed: compared by key alone
            bucket = None
        if bucket is not None:
            exact = bucket.first(self.played)
            if exact == first:
                return exact
        wanted = request_key(method, uri, body, self.volatile, self.redaction)
        keyed = self._keyed().get(hashable_key(wanted))
        found = None if keyed is None else keyed.first(self.played)
        if exact is not None and (found is None or exact < found):
            return exact
        return found

    def _keyed(self) -> dict[Hashable, _Bucket]:
        """The recorded requests by what matching compares (built on first use)."""
        if self._by_key is None:
            index_of: dict[Hashable, _Bucket] = {}
            for index in range(len(self.interactions)):
                index_of.setdefault(hashable_key(self.key(index)), _Bucket()).indexes.append(index)
            self._by_key = index_of
        return self._by_key

    def take(self, method: str, uri: str, body: Any) -> Interaction | None:
        """The interaction that answers the request, marked as replayed; ``None`` when none can
        (the caller then raises :meth:`mismatch`)."""
        with self._lock:
            index = self.find(method, uri, body)
            if index is None:
                return None
            self.plays[index] += 1
            return self.interactions[index]

    def not_recorded_again(
        self, recorded: Sequence[tuple[dict[str, Any], dict[str, Any]]]
    ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """The interactions that no request of ``recorded`` matches, as vcrpy records them:
        what record mode ``all`` keeps of the old file (the rest was recorded again)."""
        again = {
            hashable_key(
                request_key(
                    request["method"],
                    request["uri"],
                    request["body"],
                    self.volatile,
                    self.redaction,
                )
            )
            for request, _ in recorded
        }
        return [
            stored.stored()
            for index, stored in enumerate(self.interactions)
            if hashable_key(self.key(index)) not in again
        ]

    def mismatch(self, method: str, uri: str, body: Any) -> CassetteMismatch:
        """The error for a request that no interaction can answer, with its diff."""
        message = mismatch_message(
            self.path,
            self.interactions,
            [self.played(index) for index in range(len(self))],
            _Sent(method, uri, body),
            volatile=self.volatile,
            nodeid=self.nodeid,
            mode=self.mode,
            redaction=self.redaction,
        )
        return CassetteMismatch(message, path=self.path, method=method, uri=uri)

    def unplayed_message(self) -> str:
        """Why the test fails when interactions were never replayed (``""``: all were)."""
        unplayed = [index for index in range(len(self)) if not self.played(index)]
        if not unplayed:
            return ""
        shown = "\n".join(
            f"    #{i}: {self.interactions[i].method} "
            f"{shown_uri(self.interactions[i].uri, self.redaction.secrets)}"
            for i in unplayed[:10]
        )
        more = f"\n    ... and {len(unplayed) - 10} more" if len(unplayed) > 10 else ""
        return (
            f"{len(unplayed)} of {len(self)} recorded interaction(s) in {self.path} "
            f"were never replayed:\n{shown}{more}\n"
            "The code made fewer requests than when the cassette was recorded. If that is "
            "intended, " + rerecord_hint(self.path, self.nodeid) + "\nor allow it with "
            "@pytest.mark.opdecide(allow_unused=True)."
        )
