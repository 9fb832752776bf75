"""Cassettes: real model replies recorded once (vcrpy underneath) and replayed offline.

What this layer adds to vcrpy, each answering a complaint of its users:

* **Safe by default.** Credentials in headers, key-like query parameters and configured JSON
  body fields are replaced by a placeholder before anything is written, and the serialised
  text is searched once more for every secret value seen, so an echoed key cannot land either.
* **Readable.** JSON bodies are stored as structured YAML, compressed bodies decoded, long
  prompts as literal blocks, server-sent event streams event by event (and replayed as a stream).
* **Matching that explains itself.** JSON request bodies match by content (key order ignored,
  volatile paths ignored); a request that matches nothing fails with a diff against the nearest
  recorded request; interactions never replayed fail the test at teardown.
* **Atomic.** A cassette is written whole (temporary file, then rename) or not at all: a test
  that fails while recording writes nothing, and a corrupt file is reported with how to fix it.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest
import yaml
from vcr.errors import CannotOverwriteExistingCassetteException

from pytest_opdecide._settings import Settings

__all__ = [
    "PLACEHOLDER",
    "CassetteCorrupt",
    "CassetteMismatch",
    "ReadableYaml",
    "UnplayedInteractions",
    "cassette_for",
    "cassette_path",
]

PLACEHOLDER = "<REDACTED>"
SECRET_HEADERS = frozenset(
    {"authorization", "api-key", "x-api-key", "cookie", "set-cookie", "proxy-authorization"}
)
_SECRET_NAME = re.compile(
    r"(api[-_]?key|token|secret|password|passwd|auth|signature|session)", re.I
)
_KEYLIKE = re.compile(r"\b(sk-[A-Za-z0-9_-]{16,}|Bearer\s+[A-Za-z0-9._~+/=-]{12,})")
DEFAULT_BODY_FIELDS = ("api_key", "apiKey", "access_token", "password", "secret")
_ID_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class CassetteCorrupt(ValueError):
    """A cassette file cannot be read; the message names it and how to re-record it."""


class UnplayedInteractions(AssertionError):
    """Recorded interactions were never replayed by the test."""


# --- paths -------------------------------------------------------------------------------------


def _short(name: str, limit: int = 80) -> str:
    """A file-name-safe, stable form of a test name; long parametrised ids get a hash."""
    cleaned = _ID_SAFE.sub("_", name).strip("_") or "test"
    if len(cleaned) <= limit and cleaned == name:
        return cleaned
    import hashlib

    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    base, _, _ = name.partition("[")
    base = _ID_SAFE.sub("_", base).strip("_") or "test"
    room = max(8, limit - len(base) - 10)
    param = _ID_SAFE.sub("_", name[len(base) :]).strip("_")[:room]
    return f"{base}-{param}-{digest}" if param else f"{base}-{digest}"


def cassette_path(rootdir: Path, node: Any, settings: Settings) -> Path:
    """``<rootdir>/<cassette_dir>/<test module>/<[Class.]test name>.yaml``."""
    module = Path(str(node.path)).stem
    name = node.name
    cls = getattr(node, "cls", None)
    if cls is not None:
        name = f"{cls.__name__}.{name}"
    base = Path(settings.cassette_dir)
    if not base.is_absolute():
        base = rootdir / base
    return base / module / f"{_short(name)}.yaml"


# --- readable serialisation --------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    pass


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def _header(headers: Mapping[str, Any], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            if isinstance(value, list):
                return str(value[0]) if value else ""
            return str(value)
    return ""


def _text(body: Any) -> str | None:
    if body is None:
        return None
    if isinstance(body, bytes):
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return str(body)


def _parse_events(text: str) -> list[Any] | None:
    events: list[Any] = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        lines = block.split("\n")
        if not all(line.startswith(("data:", "event:", "id:", ":", "retry:")) for line in lines):
            return None
        if len(lines) == 1 and lines[0].startswith("data:"):
            data = lines[0][5:].strip()
            try:
                events.append({"data": json.loads(data)} if data != "[DONE]" else {"data": data})
            except ValueError:
                events.append({"data": data})
        else:
            events.append({"raw": block})
    return events


def _render_events(events: list[Any]) -> str:
    out = []
    for event in events:
        if "raw" in event:
            out.append(f"{event['raw']}\n\n")
        else:
            data = event["data"]
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            out.append(f"data: {text}\n\n")
    return "".join(out)


def _readable_body(body: Any, headers: Mapping[str, Any]) -> Any:
    text = _text(body)
    if text is None:
        return body
    kind = _header(headers, "content-type")
    if "event-stream" in kind:
        events = _parse_events(text)
        if events is not None:
            return {"events": events}
    if text[:1] in "{[":
        try:
            return {"json": json.loads(text)}
        except ValueError:
            pass
    return text


def _raw_body(body: Any) -> Any:
    if isinstance(body, dict):
        if "json" in body:
            return json.dumps(body["json"], ensure_ascii=False)
        if "events" in body:
            return _render_events(body["events"])
    return body


class ReadableYaml:
    """vcrpy serializer: structured JSON, SSE events and literal blocks, read back losslessly."""

    @staticmethod
    def serialize(data: dict[str, Any]) -> str:
        out = copy.deepcopy(data)
        for interaction in out.get("interactions", []):
            req, resp = interaction["request"], interaction["response"]
            req["body"] = _readable_body(req.get("body"), req.get("headers", {}))
            body = resp.get("body", {})
            if isinstance(body, dict) and "string" in body:
                body["string"] = _readable_body(body["string"], resp.get("headers", {}))
        return yaml.dump(out, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        data = yaml.safe_load(text)
        if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
            raise ValueError("not a cassette: expected a mapping with an 'interactions' list")
        for interaction in data["interactions"]:
            req, resp = interaction["request"], interaction["response"]
            req["body"] = _raw_body(req.get("body"))
            body = resp.get("body", {})
            if isinstance(body, dict) and "string" in body:
                body["string"] = _raw_body(body["string"])
        return data


# --- scrubbing ---------------------------------------------------------------------------------


class Scrubber:
    """Replaces secrets with :data:`PLACEHOLDER` and remembers every value it replaced."""

    def __init__(self, body_fields: tuple[str, ...] = DEFAULT_BODY_FIELDS) -> None:
        self.body_fields = frozenset(body_fields)
        self.seen: set[str] = set()

    def _keep(self, value: Any) -> None:
        text = str(value)
        if len(text) >= 6 and text != PLACEHOLDER:
            self.seen.add(text)
            if text.lower().startswith("bearer "):
                self.seen.add(text[7:].strip())

    def headers(self, headers: Any) -> None:
        for name in list(headers.keys()):
            if name.lower() in SECRET_HEADERS or _SECRET_NAME.search(name):
                value = headers[name]
                for v in value if isinstance(value, list) else [value]:
                    self._keep(v)
                headers[name] = [PLACEHOLDER] if isinstance(value, list) else PLACEHOLDER

    def uri(self, uri: str) -> str:
        parts = urlsplit(uri)
        if not parts.query:
            return uri
        pairs = []
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if _SECRET_NAME.search(key) or key.lower() in {"key", "sig", "code"}:
                self._keep(value)
                value = PLACEHOLDER
            pairs.append((key, value))
        return urlunsplit(parts._replace(query=urlencode(pairs)))

    def json_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key in self.body_fields and item not in (None, ""):
                    self._keep(item)
                    out[key] = PLACEHOLDER
                else:
                    out[key] = self.json_value(item)
            return out
        if isinstance(value, list):
            return [self.json_value(v) for v in value]
        return value

    def body(self, body: Any) -> Any:
        text = _text(body)
        if text is None or text[:1] not in "{[":
            return body
        try:
            parsed = json.loads(text)
        except ValueError:
            return body
        scrubbed = self.json_value(parsed)
        if scrubbed == parsed:
            return body
        out = json.dumps(scrubbed, ensure_ascii=False)
        return out.encode() if isinstance(body, bytes) else out

    def text(self, text: str) -> str:
        """The safety net over the serialised cassette."""
        for secret in sorted(self.seen, key=len, reverse=True):
            text = text.replace(secret, PLACEHOLDER)
        return _KEYLIKE.sub(PLACEHOLDER, text)


# --- persistence -------------------------------------------------------------------------------


def _rerecord_hint(path: Path, nodeid: str) -> str:
    return (
        f"re-record it: start the local model (scripts/local-model start), then run\n"
        f"    pytest '{nodeid}' --opdecide-record=rewrite\n"
        f"(or delete {path} and run with --opdecide-record=once)"
    )


class AtomicPersister:
    """vcrpy persister: atomic writes, scrubbing safety net, clear errors for bad files."""

    def __init__(self, scrubber: Scrubber, nodeid: str, ignore_existing: bool) -> None:
        self.scrubber = scrubber
        self.nodeid = nodeid
        self.ignore_existing = ignore_existing

    def load_cassette(self, cassette_path: Any, serializer: Any) -> Any:
        from vcr.persisters.filesystem import CassetteNotFoundError
        from vcr.request import Request
        from vcr.serializers import compat

        path = Path(cassette_path)
        if self.ignore_existing or not path.is_file():
            raise CassetteNotFoundError()
        try:
            text = path.read_text(encoding="utf-8")
            data = serializer.deserialize(text)
            requests = [Request._from_dict(i["request"]) for i in data["interactions"]]
            responses = [compat.convert_to_bytes(i["response"]) for i in data["interactions"]]
        except Exception as exc:
            raise CassetteCorrupt(
                f"cassette {path} is corrupt or truncated ({type(exc).__name__}: {exc}).\n"
                + _rerecord_hint(path, self.nodeid)
            ) from None
        return requests, responses

    def save_cassette(self, cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize

        path = Path(cassette_path)
        text = self.scrubber.text(serialize(cassette_dict, serializer))
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


# --- matching ----------------------------------------------------------------------------------


def _drop_path(value: Any, path: list[str]) -> Any:
    if not path or not isinstance(value, dict):
        return value
    head, rest = path[0], path[1:]
    if head not in value:
        return value
    out = dict(value)
    if rest:
        out[head] = _drop_path(out[head], rest)
    else:
        del out[head]
    return out


def comparable_body(body: Any, volatile: tuple[str, ...]) -> Any:
    """A request body as compared: parsed JSON without the volatile paths, else the text."""
    text = _text(body)
    if text is None:
        return body
    if text[:1] in "{[":
        try:
            value = json.loads(text)
        except ValueError:
            return text
        for dotted in volatile:
            value = _drop_path(value, dotted.split("."))
        return value
    return text


def json_body_matcher(volatile: tuple[str, ...]) -> Any:
    """A vcrpy matcher comparing bodies by JSON content (key order and volatile paths ignored)."""

    def json_body(r1: Any, r2: Any) -> None:
        a = comparable_body(r1.body, volatile)
        b = comparable_body(r2.body, volatile)
        if a != b:
            raise AssertionError("the request bodies differ")

    return json_body


def _pretty(body: Any) -> list[str]:
    if isinstance(body, dict | list):
        return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    if isinstance(body, bytes):
        return [repr(body[:2000])]
    return str(body if body is not None else "").splitlines()


def mismatch_message(
    cassette: Any, request: Any, volatile: tuple[str, ...], nodeid: str, mode: str
) -> str:
    """Why ``request`` matched nothing, with a diff against the nearest recorded request."""
    path = Path(cassette._path)
    head = (
        f"the test sent a request that is not in cassette {path} (record mode {mode}):\n"
        f"    {request.method} {request.uri}\n"
    )
    recorded = [r for r, _ in cassette.data]
    if not recorded:
        return head + "The cassette holds no interactions.\n" + _rerecord_hint(path, nodeid)
    wanted = comparable_body(request.body, volatile)

    def distance(index: int) -> tuple[int, float]:
        other = recorded[index]
        same_route = int(other.method == request.method) + int(other.path == request.path)
        ratio = difflib.SequenceMatcher(
            None,
            "\n".join(_pretty(comparable_body(other.body, volatile))),
            "\n".join(_pretty(wanted)),
        ).quick_ratio()
        return (-same_route, -ratio)

    nearest = min(range(len(recorded)), key=distance)
    other = recorded[nearest]
    played = cassette.play_counts[nearest] > 0
    lines: list[str] = []
    if other.method != request.method or other.uri != request.uri:
        lines.append(f"-   {other.method} {other.uri}")
        lines.append(f"+   {request.method} {request.uri}")
    diff = list(
        difflib.unified_diff(
            _pretty(comparable_body(other.body, volatile)),
            _pretty(wanted),
            fromfile=f"recorded #{nearest}",
            tofile="sent now",
            lineterm="",
            n=2,
        )
    )
    if diff:
        body = "\n".join(diff)
    elif lines:
        body = "(the bodies are the same)"
    else:
        body = "(the same request: the code sent it more often than when it was recorded)"
    return (
        head
        + f"Nearest recorded request: #{nearest} of {len(recorded)}"
        + (" (already replayed)" if played else "")
        + ":\n"
        + ("\n".join(lines) + "\n" if lines else "")
        + body
        + "\n"
        + (
            f"Volatile body paths ignored: {list(volatile)}\n"
            if volatile
            else "If a field changes on every run (an id, a timestamp), ignore it with "
            "@pytest.mark.opdecide(volatile=['path.to.field']).\n"
        )
        + "If the code changed on purpose, "
        + _rerecord_hint(path, nodeid)
    )


class CassetteMismatch(CannotOverwriteExistingCassetteException):  # type: ignore[misc]
    """A request matched nothing in the cassette; the message diffs it against the nearest."""

    def __init__(self, cassette: Any, failed_request: Any, message: str) -> None:
        self.cassette = cassette
        self.failed_request = failed_request
        self.similar_requests: list[Any] = []
        self.reason = "no_match"
        Exception.__init__(self, message)


def _cassette_class(volatile: tuple[str, ...], nodeid: str) -> type[Any]:
    from vcr.cassette import Cassette

    class OpdecideCassette(Cassette):  # type: ignore[misc]
        def can_play_response_for(self, request: Any) -> bool:
            playable = bool(super().can_play_response_for(request))
            if not playable and self.write_protected and self.filter_request(request):
                mode = getattr(self.record_mode, "value", self.record_mode)
                raise CassetteMismatch(
                    self, request, mismatch_message(self, request, volatile, nodeid, str(mode))
                )
            return playable

    return OpdecideCassette


# --- streamed replay ---------------------------------------------------------------------------


class _EventStream:
    """An httpx byte stream that yields a recorded event stream one event at a time."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks

    async def __aiter__(self) -> Any:
        for chunk in self.chunks:
            yield chunk

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


@contextlib.contextmanager
def _stream_events() -> Iterator[None]:
    """Make vcrpy replay ``text/event-stream`` bodies chunk by chunk (one chunk per event)."""
    try:
        from vcr.stubs import httpx_stubs
    except ImportError:  # pragma: no cover
        yield
        return
    original = getattr(httpx_stubs, "_deserialize_response", None)
    if original is None:  # pragma: no cover - a vcrpy without this seam replays in one chunk
        yield
        return

    def deserialize(vcr_response: Any, httpx: Any) -> Any:
        response = original(vcr_response, httpx)
        headers = vcr_response.get("headers", {})
        if "event-stream" in _header(headers, "content-type"):
            body = vcr_response["body"]["string"]
            raw = body if isinstance(body, bytes) else str(body).encode()
            chunks = [part + b"\n\n" for part in raw.split(b"\n\n") if part.strip()]
            stream = _EventStream(chunks)
            response.stream = stream
        return response

    httpx_stubs._deserialize_response = deserialize
    try:
        yield
    finally:
        httpx_stubs._deserialize_response = original


# --- the cassette of one test ------------------------------------------------------------------


def _run_user_scrub(request: Any, response: Any, hook: Any, settings: Settings) -> Any:
    from vcr.request import Request

    interaction = {"request": request._to_dict(), "response": response}
    results = hook.pytest_opdecide_scrub_interaction(interaction=interaction, settings=settings)
    for result in results:
        if result is not None:
            interaction = result
    return Request._from_dict(interaction["request"]), interaction["response"]


@contextlib.contextmanager
def cassette_for(request: pytest.FixtureRequest, settings: Settings, mode: str) -> Iterator[Any]:
    """Wire every HTTP request of the test to its cassette (replay or record).

    Replay (``record=none``): requests not in the cassette fail with a diff; interactions
    never replayed fail the test at teardown unless ``allow_unused``. Record: new interactions
    are scrubbed and written atomically at teardown, only when the test passed.
    """
    import vcr
    from vcr.record_mode import RecordMode

    from pytest_opdecide.plugin import call_passed

    node = request.node
    path = cassette_path(request.config.rootpath, node, settings)
    record = "none" if mode == "replay" else settings.record
    volatile = tuple(settings.volatile)
    scrubber = Scrubber(tuple(settings.scrub_fields) or DEFAULT_BODY_FIELDS)
    hook = request.config.hook

    def before_save(req: Any, resp: Any) -> Any:
        scrubber.headers(req.headers)
        req.uri = scrubber.uri(req.uri)
        req.body = scrubber.body(req.body)
        scrubber.headers(resp.get("headers", {}))
        return _run_user_scrub(req, resp, hook, settings)

    if mode == "replay" and not path.is_file():
        pytest.fail(
            f"no cassette at {path} for {node.nodeid}.\n"
            "Record it once: start the local model (scripts/local-model start) and run\n"
            f"    pytest '{node.nodeid}' --opdecide-record=once",
            pytrace=False,
        )
    machine = vcr.VCR(
        serializer="opdecide",
        record_mode=RecordMode.ALL if record == "rewrite" else RecordMode(record),
        match_on=["method", "scheme", "host", "port", "path", "query", "opdecide_body"],
        decode_compressed_response=True,
        record_on_exception=False,
        before_save_interaction=before_save,
    )
    machine.register_serializer("opdecide", ReadableYaml)
    machine.register_matcher("opdecide_body", json_body_matcher(volatile))
    persister = AtomicPersister(scrubber, node.nodeid, ignore_existing=record == "rewrite")
    config = machine.get_merged_config(path=str(path), persister=persister)
    context = _cassette_class(volatile, node.nodeid).use(**config)
    with _stream_events():
        cassette = context.__enter__()
        failed: BaseException | None = None
        try:
            yield cassette
        except BaseException as exc:  # pragma: no cover - fixtures do not see test errors
            failed = exc
            raise
        finally:
            if failed is None and not call_passed(node):
                failed = RuntimeError("the test did not pass: nothing is recorded")
            if failed is not None:
                context.__exit__(type(failed), failed, None)
            else:
                context.__exit__(None, None, None)
    if (
        failed is None
        and record in ("none", "once")
        and cassette._loaded_count
        and not settings.allow_unused
    ):
        unplayed = [i for i in range(cassette._loaded_count) if cassette.play_counts[i] == 0]
        if unplayed:
            shown = "\n".join(
                f"    #{i}: {cassette.data[i][0].method} {cassette.data[i][0].uri}"
                for i in unplayed[:10]
            )
            raise UnplayedInteractions(
                f"{len(unplayed)} of {cassette._loaded_count} recorded interaction(s) in {path} "
                f"were never replayed:\n{shown}\n"
                "The code made fewer requests than when the cassette was recorded. If that is "
                "intended, " + _rerecord_hint(path, node.nodeid) + "\nor allow it with "
                "@pytest.mark.opdecide(allow_unused=True)."
            )
