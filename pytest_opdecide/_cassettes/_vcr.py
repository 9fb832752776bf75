"""vcrpy, configured through its documented extension points only.

vcrpy patches every HTTP library it knows (httpx and httpx2 transports, requests, aiohttp...)
for the time a cassette is in use, records what they send, and replays what other clients
send. This module configures it for one cassette:

* a **persister** (:class:`Persister`) that reads the file into a
  :class:`~._tape.Tape` (the cassette layer's own record of it) and hands vcrpy
  the same interactions, and that keeps what vcrpy asks to save until vcrpy has removed its
  patches (the cassette layer then writes it, scrubbed and atomically);
* one **matcher** (``opdecide``): the cassette layer's matching (:mod:`._matching`), and, while
  the replay transport serves this package's own clients, only interactions it has not replayed;
* a **request hook** (``before_record_request``) that, when the cassette cannot record,
  refuses a request no interaction can answer with
  :class:`~._matching.CassetteMismatch` and its diff, before vcrpy raises its own
  error;
* record modes, ``decode_compressed_response`` and ``record_on_exception``, as documented, and
  ``skip_patchers`` for libraries that are not installed, where vcrpy has it;
* room for other HTTP mocks: vcrpy leaves httpx alone when another mock (pytest-httpx) has
  replaced httpx's transports as the cassette opens (vcrpy would otherwise answer above it, or
  send past it), and the request hook hands vcrpy nothing to record or replay while another
  mock (respx) has replaced httpcore's senders: what a mock answers stays the mock's, at record
  and at replay.

This package's own clients are recorded by the cassette layer itself (:meth:`VcrCassette.
record_own`, from :mod:`._recording_transport`), in vcrpy's cassette and so in order with what
vcrpy records of other clients.

Nothing of vcrpy is patched, subclassed or read through a private name: what it replayed is
read from the cassette's ``play_counts``, the requests it holds from ``requests``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import inspect
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import vcr
from vcr.persisters.filesystem import CassetteNotFoundError
from vcr.record_mode import RecordMode
from vcr.request import Request

from pytest_opdecide._cassettes._file import read_interactions
from pytest_opdecide._cassettes._matching import CassetteMismatch, RequestKey, request_key
from pytest_opdecide._cassettes._tape import Interaction, Tape
from pytest_opdecide._cassettes._yaml_format import ReadableYaml
from pytest_opdecide._http._network import httpx_replaced_by
from pytest_opdecide._http._real_methods import core_replaced_by


class MockBeforeCassette(RuntimeError):
    """Another HTTP mock replaced httpx's transport before the cassette opened, and this vcrpy
    cannot leave httpx to it (``skip_patchers`` came in vcrpy 9.4): vcrpy would send the
    test's mocked calls past the mock."""


__all__ = ["MockBeforeCassette", "VcrCassette", "absent_patchers"]

_PATCHER_MODULES = {
    "requests": "requests",
    "urllib3": "urllib3",
    "boto3": "botocore",
    "tornado": "tornado",
    "aiohttp": "aiohttp",
    "httplib2": "httplib2",
    "httpx2": "httpx2",
}
"""vcrpy's patcher groups for optional libraries, and the module each one needs."""


@functools.cache
def _installed(module: str) -> bool:
    """Whether ``module`` can be imported (asked once: libraries are not installed mid-run)."""
    return importlib.util.find_spec(module) is not None


def absent_patchers() -> tuple[str, ...]:
    """vcrpy's patcher groups for libraries that are not installed.

    vcrpy tries to import each of them whenever a cassette opens; a failed import searches the
    whole path again every time. Absent libraries cannot send requests, so skipping their
    patchers changes nothing but the cost.
    """
    return tuple(
        sorted(group for group, module in _PATCHER_MODULES.items() if not _installed(module))
    )


@functools.cache
def _vcr_options() -> frozenset[str]:
    """The keyword arguments this vcrpy's ``VCR`` takes (``skip_patchers`` came in 9.4)."""
    return frozenset(inspect.signature(vcr.VCR).parameters)


def _as_vcrpy_request(stored: Interaction) -> Any:
    """A recorded request as vcrpy holds it."""
    headers = {name: values[0] for name, values in stored.request_headers.items() if values}
    return Request(stored.method, stored.uri, stored.body, headers)


def _as_vcrpy_response(stored: Interaction) -> dict[str, Any]:
    """A recorded response as vcrpy holds it."""
    return stored.stored()[1]


def _stored_request(request: Any) -> dict[str, Any]:
    """A vcrpy request as the cassette stores it (its public attributes only)."""
    return {
        "method": request.method,
        "uri": request.uri,
        "body": request.body,
        "headers": {name: [value] for name, value in request.headers.items()},
    }


class Persister:
    """vcrpy's persister for one cassette (see the module's docstring).

    Args:
        tape: Filled with the file's interactions when vcrpy loads them.
        ignore_existing: Load nothing (``rewrite``: the file is replaced whole).
        hand_over: Give vcrpy the interactions as it loads the file; else vcrpy starts with
            none, and gets them when a client it serves first needs them
            (:meth:`VcrCassette.check_request`): most replayed tests never do.
    """

    def __init__(self, tape: Tape, *, ignore_existing: bool, hand_over: bool) -> None:
        self.tape = tape
        self.ignore_existing = ignore_existing
        self.hand_over = hand_over
        self.loaded = False
        """Whether a cassette file was read."""
        self.pending: list[tuple[dict[str, Any], dict[str, Any]]] | None = None
        """What vcrpy asked to save (request and response dicts), not written yet."""

    def load_cassette(self, cassette_path: Any, serializer: Any) -> Any:
        """The interactions of the file, for vcrpy (``CassetteNotFoundError``: none)."""
        path = Path(cassette_path)
        if self.ignore_existing or not path.is_file():
            raise CassetteNotFoundError()
        loaded = read_interactions(path, self.tape.nodeid)
        self.tape.load(loaded)
        self.loaded = True
        if not self.hand_over:
            return [], []
        requests = [_as_vcrpy_request(stored) for stored in loaded]
        return requests, [_as_vcrpy_response(stored) for stored in loaded]

    def save_cassette(self, cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        """Keep what vcrpy saves: it is written once vcrpy has removed its patches (vcrpy
        leaves them in place when saving raises)."""
        self.pending = [
            (_stored_request(request), response)
            for request, response in zip(
                cassette_dict["requests"], cassette_dict["responses"], strict=True
            )
        ]


def _refuse(error: CassetteMismatch) -> NoReturn:
    # Raised in a frame whose only argument is the error: pytest shows the arguments of the
    # frame that raised, and the request's URL or body may hold a key.
    raise error


class VcrCassette:
    """vcrpy in use for one cassette: its configuration, and the bridge to the tape.

    Args:
        tape: The cassette layer's record of the file (filled as vcrpy loads it).
        record: The record mode (``none``, ``once``, ``new_episodes``, ``all``, ``rewrite``).
    """

    def __init__(self, tape: Tape, record: str) -> None:
        self.tape = tape
        self.record = record
        # Only new_episodes has vcrpy replay what it loads as it loads it: replaying modes
        # hand the interactions over when a client vcrpy serves first needs them, and "all"
        # never replays (use_cassette keeps what is not recorded again).
        self.persister = Persister(
            tape, ignore_existing=record == "rewrite", hand_over=record == "new_episodes"
        )
        self.cassette: Any = None
        """vcrpy's cassette, once open."""
        self.replaying_here = False
        """Whether the replay transport serves this package's clients (set by the caller):
        vcrpy then leaves the interactions it replayed alone."""
        self._stored_keys: dict[int, tuple[Any, RequestKey]] = {}
        self._loaded: list[Any] = []  # vcrpy's loaded requests: their ids stay theirs
        self._positions: dict[int, int] | None = None
        self._handed_over = False
        self._handing_over: int | None = None  # the thread handing over
        self._hand_over_lock = threading.Lock()
        self._own = threading.local()  # set while this package's own exchange is handed over
        self.httpx_left_to: str | None = None
        """The module of the mock that had replaced httpx's transports as the cassette opened
        (vcrpy then leaves httpx alone), or ``None``."""

    @property
    def protected(self) -> bool:
        """Whether the cassette only replays: a request it cannot answer fails."""
        return self.record == "none" or (self.record == "once" and self.persister.loaded)

    def _key(self, request: Any) -> RequestKey:
        return request_key(
            request.method, request.uri, request.body, self.tape.volatile, self.tape.redaction
        )

    def _stored_key(self, request: Any) -> RequestKey:
        known = self._stored_keys.get(id(request))
        if known is None or known[0] is not request:
            known = self._stored_keys[id(request)] = (request, self._key(request))
        return known[1]

    def _position(self, stored: Any) -> int | None:
        """The index of one of vcrpy's recorded requests among the loaded interactions."""
        if self._positions is None:
            self._loaded = self.cassette.requests[: len(self.tape)]
            self._positions = {id(request): index for index, request in enumerate(self._loaded)}
        return self._positions.get(id(stored))

    def matches(self, sent: Any, stored: Any) -> bool:
        """vcrpy's matcher: the cassette layer's matching (and the transport's plays)."""
        if self._key(sent) != self._stored_key(stored):
            return False
        if self.replaying_here:
            index = self._position(stored)
            if index is not None and self.tape.plays[index]:
                return False
        return True

    def check_request(self, request: Any) -> Any:
        """vcrpy's ``before_record_request``: refuse what a replay-only cassette lacks, and
        give vcrpy the recorded interactions when it first needs them."""
        if getattr(self._own, "active", False):
            return request
        if core_replaced_by() is not None:
            return None  # respx answers it: neither recorded nor replayed, at both times
        if (
            self.cassette is None
            or not self.protected
            or self._handing_over == threading.get_ident()
        ):
            return request
        if self.tape.find(request.method, request.uri, request.body) is None:
            _refuse(self.tape.mismatch(request.method, request.uri, request.body))
        if not self.persister.hand_over:
            with self._hand_over_lock:
                if not self._handed_over:
                    # append() passes each request through this hook: let them pass.
                    self._handing_over = threading.get_ident()
                    try:
                        for stored in self.tape.interactions:
                            self.cassette.append(
                                _as_vcrpy_request(stored), _as_vcrpy_response(stored)
                            )
                    finally:
                        self._handing_over = None
                    self._handed_over = True
        return request

    @contextlib.contextmanager
    def _handing_own(self) -> Iterator[None]:
        self._own.active = True
        try:
            yield
        finally:
            self._own.active = False

    def play_own(self, method: str, uri: str, body: bytes, headers: Any) -> dict[str, Any] | None:
        """The recorded response vcrpy would replay for one of this package's requests
        (``new_episodes`` replays what it has), as vcrpy holds it, or ``None``."""
        request = Request(method, uri, body, headers)
        with self._handing_own():
            if not self.cassette.can_play_response_for(request):
                return None
            played: dict[str, Any] = self.cassette.play_response(request)
            return played

    def record_own(
        self, method: str, uri: str, body: bytes, headers: Any, response: dict[str, Any]
    ) -> None:
        """Put one of this package's exchanges in vcrpy's cassette, as vcrpy records one (its
        hooks apply: compressed bodies decoded), after what was recorded before it."""
        with self._handing_own():
            self.cassette.append(Request(method, uri, body, headers), response)

    def _played_by_vcrpy(self, index: int) -> bool:
        return bool(self.cassette.play_counts[index] > 0)

    @contextlib.contextmanager
    def open(self, path: Path) -> Iterator[Any]:
        """vcrpy's cassette at ``path``, patching HTTP libraries in the block.

        An exception out of the block leaves without saving (``record_on_exception=False``).

        Raises:
            CassetteCorrupt: The file cannot be read.
        """
        options: dict[str, Any] = {
            "record_mode": RecordMode.ALL if self.record == "rewrite" else RecordMode(self.record),
            "match_on": ["opdecide"],
            "decode_compressed_response": True,
            "record_on_exception": False,
            "before_record_request": self.check_request,
        }
        self.httpx_left_to = httpx_replaced_by()
        if self.httpx_left_to is not None and "skip_patchers" not in _vcr_options():
            raise MockBeforeCassette(
                f"{self.httpx_left_to.split('.')[0]} replaced httpx's transport before the "
                f"cassette opened, and vcrpy {vcr.__version__} cannot leave httpx to it (that "
                "came in vcrpy 9.4): its mocked calls would be sent past it. Ask for the "
                "`runtime` fixture before `httpx_mock` in the test's arguments, or upgrade "
                "vcrpy: pip install 'vcrpy>=9.4'."
            )
        if "skip_patchers" in _vcr_options():
            skipped = absent_patchers()
            if self.httpx_left_to is not None:
                skipped = (*skipped, "httpx")
            options["skip_patchers"] = skipped
        machine = vcr.VCR(serializer="opdecide", **options)
        machine.register_serializer("opdecide", ReadableYaml)
        machine.register_matcher("opdecide", self.matches)
        machine.register_persister(self.persister)
        with machine.use_cassette(str(path)) as cassette:
            self.cassette = cassette
            self.tape.played_elsewhere = self._played_by_vcrpy
            yield cassette
