"""Scrubbing: no credential reaches a cassette, and replay still matches the scrubbed file.

Before interactions are written, :class:`Scrubber` replaces secrets with :data:`PLACEHOLDER`, in
two passes over the whole cassette.

**By name** (what the name of a header, parameter or field says):

* headers: those the one list of secret header names marks
  (:func:`~pytest_opdecide._http._redaction.secret_header`: a vendor credential header, or a
  name that contains ``key``, ``token``, ``secret``, ``passw``, ``auth``, ``signature``,
  ``credential``, ``session`` or ``cookie``), with the credentials inside their values
  (:func:`~pytest_opdecide._http._redaction.credential_parts`);
* the query string (:func:`~pytest_opdecide._http._redaction.secret_param`): parameters with
  such names, and ``sig`` and ``code``; the URL's user info is removed;
* JSON (:func:`secret_field`): fields whose names end in one of :data:`SECRET_FIELD_ENDINGS`
  (``api_key``, ``access_token``, ``client_secret``, ``password``...), a bare ``token`` outside
  ``logprobs``, and the project's ``scrub_fields``, at any depth: in request and response
  bodies, in each event of a stream, in JSON documents held in strings (a tool call's
  ``arguments``), and in the text that the events of a stream add up to, field by field (a tool
  call's arguments streamed in pieces). A field is replaced when its value is a string or a
  number; an object or a list is searched further.

Each value replaced by name is remembered.

**By value** (:class:`~pytest_opdecide._http._secrets.Secrets`): every remembered value, every
credential this package's runtimes and providers were configured with, and the value of every
environment variable whose name says ``KEY``, ``TOKEN``, ``SECRET``, ``PASSWORD`` or ``PASSWD``
is replaced, in every form (raw, URL-encoded, JSON-escaped, base64...: see
:mod:`pytest_opdecide._http._secrets`), wherever it appears: in URLs, header values, every string of
a JSON body (keys too), text bodies, and the bytes of bodies that are not UTF-8. In an event stream,
the text of each field is searched across the events first, as sent (a key sent in pieces is
replaced whole: the placeholder in the event where it began, nothing in the others), then each
event on its own; the JSON data of framed events (with ``event:`` or ``id:`` lines, stored as
they came) is searched as every other event's.

Last, the serialised text is searched once more for every form of every value
(:meth:`Scrubber.text`).

**Machine paths** (:class:`~._machine_paths.MachinePaths`), last: every absolute path of the
recording machine (the project's root, the home and temporary folders, pytest's temporary
folder, the interpreter's prefix, site-packages and standard library) and every machine's
``site-packages`` and standard library folders (a server's traceback) become a stable
placeholder (``<PROJECT>``, ``<HOME>``, ``<SITE-PACKAGES>``...), in the URL, header values,
every string of a JSON body (keys too), each event of a stream, text bodies and the bytes of
bodies that are not UTF-8.

Transport noise (:data:`NOISE_HEADERS`: dates, lengths, client versions) is dropped too.

Replay compares a request with the recorded ones *as they are stored*: :func:`as_stored` turns
a request's body into its scrubbed form (cheaply, copying only what changes), and
:func:`stored_route` its path and query, so a request carrying the real secret (or the paths of
the replaying machine) still matches the recording that holds the placeholder.

The seam for new rules: a rule that finds secrets by name adds to :meth:`Scrubber.by_name` and
:func:`as_stored` (or to the name test :func:`secret_field`, which both use), and remembers each
value it replaces with :meth:`Scrubber.remember`: the value pass then replaces every other copy
of it, in every form. A new secret header or parameter name goes into
:mod:`pytest_opdecide._http._redaction` (the runtimes, the question providers and the log
filters read the same list); a new form of a value into :mod:`pytest_opdecide._http._secrets`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from pytest_opdecide._cassettes._machine_paths import MachinePaths
from pytest_opdecide._cassettes._scrub_json import (
    SECRET_FIELD_ENDINGS,
    UNIFORM_MIN,
    UniformStream,
    by_name,
    by_value,
    json_document,
    json_documents,
    named_secret,
    names_lack_secrets,
    reframe,
    secret_field,
    stream_by_value,
    stream_fields,
    unframe,
    uniform_stream,
)
from pytest_opdecide._cassettes._yaml_format import body_text, header, parse_events, render_events
from pytest_opdecide._http._redaction import credential_parts, secret_header, secret_param
from pytest_opdecide._http._secrets import (
    PLACEHOLDER,
    Secrets,
    contains,
    json_strings_lack,
    worth_searching,
)

__all__ = [
    "DEFAULT_BODY_FIELDS",
    "NOISE_HEADERS",
    "PLACEHOLDER",
    "SECRET_FIELD_ENDINGS",
    "MachinePaths",
    "Redaction",
    "Scrubber",
    "as_stored",
    "scrub_data",
    "scrubbed_query",
    "secret_field",
    "shown_uri",
    "stored_route",
]

DEFAULT_BODY_FIELDS = ("api_key", "apiKey", "access_token", "password", "secret")
"""JSON fields scrubbed in every cassette (examples of :func:`secret_field`'s rule; configured
``scrub_fields`` add exact names to it)."""

NOISE_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "connection",
        "content-length",
        "date",
        "host",
        "keep-alive",
        "server",
        "transfer-encoding",
        "user-agent",
    }
)
"""Transport details left out of cassettes: they change with the client's version or the clock,
make every re-recording a noisy diff, and replay needs none of them."""

# --- the URL's user info -------------------------------------------------------------------


def _strip_userinfo(uri: str) -> tuple[str, list[str]]:
    """``uri`` without user info, and the credentials it held."""
    parts = urlsplit(uri)
    if "@" not in parts.netloc:
        return uri, []
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    found = [user, password, unquote(user), unquote(password), userinfo, unquote(userinfo)]
    return urlunsplit(parts._replace(netloc=host)), found


# --- one interaction -----------------------------------------------------------------------


class Scrubber:
    """Replaces secrets with :data:`PLACEHOLDER` in the interactions of one cassette.

    Args:
        body_fields: JSON field names scrubbed besides those :func:`secret_field` names.
        secrets: The values known to be secret before anything is read (by default the
            configured credentials and secret environment variables: :meth:`Secrets.current`).
        paths: The machine paths replaced last (by default :meth:`MachinePaths.current`;
            ``MachinePaths(generic=False)`` replaces none).
    """

    def __init__(
        self,
        body_fields: Iterable[str] = DEFAULT_BODY_FIELDS,
        secrets: Secrets | None = None,
        paths: MachinePaths | None = None,
    ) -> None:
        self.body_fields = frozenset(body_fields)
        self.known = Secrets.current() if secrets is None else secrets
        self.paths = MachinePaths.current() if paths is None else paths
        self.seen: set[str] = set()
        """Every value replaced by name so far (replaced by value in the second pass)."""
        self._combined: tuple[int, Secrets] | None = None
        self._streams: dict[str, list[Any]] | None = None
        self._documents: dict[str, Any] | None = None
        # By text, compared rather than hashed (a long stream's text would be hashed anew
        # by every pass that decodes it): a cassette has few long streams.
        self._views: list[tuple[str, UniformStream]] = []
        self._blocks: list[str] = []

    @property
    def secrets(self) -> Secrets:
        """Everything replaced by value: the known secrets and every value seen."""
        # Values are only ever added: their number tells whether the last one is still right.
        if self._combined is None or self._combined[0] != len(self.seen):
            self._combined = (len(self.seen), self.known | self.seen)
        return self._combined[1]

    def remember(self, value: Any, name: str = "") -> None:
        """Replace ``value`` (and the credentials inside it) by value too."""
        for part in credential_parts(name, str(value)):
            if worth_searching(part):
                self.seen.add(part)

    def interactions(self, interactions: Iterable[tuple[dict[str, Any], dict[str, Any]]]) -> None:
        """Scrub interactions in place, as they are about to be written: by name first, then
        by value with everything the first pass found, then the machine's paths.

        Each request has ``uri``, ``headers`` (name to a list of values) and ``body`` (text or
        bytes); each response ``status``, ``headers`` and ``body: {"string": ...}``.
        """
        pairs = list(interactions)
        self._streams, self._documents, self._blocks = {}, {}, []
        for request, response in pairs:
            self.by_name(request, response)
        secrets = self.secrets
        try:
            for request, response in pairs:
                self.by_value(request, response, secrets)
        finally:
            self._views = []  # the fields of long streams: needed by the two passes alone
        if self.paths:
            for request, response in pairs:
                self.machine_paths(request, response)

    def parsed_streams(self) -> dict[str, list[Any]]:
        """The events (:func:`parse_events`) of each stream the last :meth:`interactions` left
        as it came, by its text, handed on instead of parsed again; forgotten here. Each list
        is taken once (``pop``): two equal streams stay two lists, as parsing gives them."""
        streams, self._streams = self._streams or {}, None
        return streams

    def block_streams(self) -> list[str]:
        """The texts of the long streams the last :meth:`interactions` read as streams of one
        shape that a literal block holds (:attr:`~._scrub_json.UniformStream.block`), for the
        writer not to read them again; forgotten here. A stream a pass changed is not among
        them (its text is another)."""
        blocks, self._blocks = self._blocks, []
        return blocks

    def parsed_documents(self) -> dict[str, Any]:
        """:meth:`parsed_streams` for JSON bodies: the data (``json.loads``) of each JSON body
        the last :meth:`interactions` read by name and left as it came, by its text."""
        documents, self._documents = self._documents or {}, None
        return documents

    # -- by name --

    def by_name(self, request: dict[str, Any], response: dict[str, Any]) -> None:
        """The first pass over one interaction (see the module's docstring)."""
        for part in (request, response):
            headers = part.setdefault("headers", {})
            self.headers(headers)
            self.drop_noise(headers)
        uri, userinfo = _strip_userinfo(str(request.get("uri", "")))
        for value in userinfo:
            self.remember(value)
        request["uri"] = self.uri(uri)
        request["body"] = self.body(request.get("body"), request["headers"])
        body = response.get("body")
        if isinstance(body, dict) and "string" in body:
            body["string"] = self.body(body["string"], response["headers"])

    def headers(self, headers: Any) -> None:
        """Replace the values of secret headers, in place (values may be lists)."""
        for name in list(headers.keys()):
            if secret_header(name):
                value = headers[name]
                for item in value if isinstance(value, list) else [value]:
                    self.remember(item, name)
                headers[name] = [PLACEHOLDER] if isinstance(value, list) else PLACEHOLDER

    @staticmethod
    def drop_noise(headers: Any) -> None:
        """Remove the transport headers of :data:`NOISE_HEADERS`, in place."""
        for name in list(headers.keys()):
            if name.lower() in NOISE_HEADERS:
                del headers[name]

    def query_pairs(self, query: str) -> list[tuple[str, str]]:
        """The query's parameters with secret values replaced by the placeholder."""
        pairs = []
        for key, value in parse_qsl(query, keep_blank_values=True):
            if secret_param(key) and value:
                self.remember(value, key)
                value = PLACEHOLDER
            pairs.append((key, value))
        return pairs

    def uri(self, uri: str) -> str:
        """``uri`` with the values of secret query parameters replaced."""
        parts = urlsplit(uri)
        if not parts.query:
            return uri
        query = urlencode(self.query_pairs(parts.query), safe="<>")  # a readable placeholder
        return urlunsplit(parts._replace(query=query))

    def json_value(self, value: Any) -> Any:
        """A JSON value with secret-named fields replaced, at any depth."""
        return by_name(value, self.body_fields, self.remember)

    def body(self, body: Any, headers: Mapping[str, Any] | None = None) -> Any:
        """A body (text or bytes) with secret-named JSON fields replaced, in each event of a
        stream too; other bodies as they are. The secret fields of a JSON body that is not
        UTF-8 (UTF-16, Latin-1) are remembered, to be replaced in its bytes by value."""
        text = body_text(body)
        if text is None:
            self._remember_undecoded(body)
            return body
        if "event-stream" in header(headers or {}, "content-type"):
            return self._stream_by_name(body, text)
        parsed = json_document(text)
        if parsed is None:
            return body
        scrubbed = self.json_value(parsed)
        if scrubbed is parsed:  # by name, copy on write: ``parsed`` is as the text says
            if self._documents is not None:
                self._documents[text] = parsed
            return body
        out = json.dumps(scrubbed, ensure_ascii=False)
        try:
            encoded = out.encode()
        except UnicodeEncodeError:  # a lone surrogate the body escaped: kept escaped
            out = json.dumps(scrubbed)
            encoded = out.encode()
        return encoded if isinstance(body, bytes) else out

    def _remember_undecoded(self, body: Any) -> None:
        if not isinstance(body, bytes):
            return
        for decode in (json.loads, lambda data: json.loads(data.decode("latin-1"))):
            try:
                self.json_value(decode(body))
                return
            except (ValueError, TypeError):
                continue

    def _stream_by_name(self, body: Any, text: str) -> Any:
        view = uniform_stream(text) if len(text) >= UNIFORM_MIN else None
        if view is not None:
            fields = self.body_fields
            if not any(named_secret(key, fields, under) for key, under in view.named) and not (
                view.escaped and self._documents_in_strings_change(view)
            ):
                # No event has a secret-named field: only what the pieces of a field add up
                # to is left to read (a tool call's arguments).
                for count, joined in zip(view.counts, view.texts, strict=True):
                    if count > 1:
                        for document in json_documents(joined):
                            self.json_value(document)
                self._views.append((text, view))  # for the pass by value
                if view.block:
                    self._blocks.append(text)
                return body
        elif names_lack_secrets(text, self.body_fields):
            return body
        events = parse_events(text)
        if events is None:
            return body
        framed = unframe(events)
        changed = False
        for event in events:
            data = event.get("data")
            if isinstance(data, dict | list):
                scrubbed = self.json_value(data)
                if scrubbed is not data:
                    event["data"] = scrubbed
                    changed = True
        # A field sent in pieces (a tool call's arguments) is JSON only once put together.
        for pieces in stream_fields(events).values():
            if len(pieces) > 1:
                for document in json_documents("".join(c[k] for c, k in pieces)):
                    self.json_value(document)
        reframe(events, framed)
        if not changed:
            if self._streams is not None:
                self._streams[text] = events
            return body
        out = render_events(events)
        return out.encode() if isinstance(body, bytes) else out

    def _documents_in_strings_change(self, view: UniformStream) -> bool:
        """Whether a string of the view's events holds JSON with a secret-named field (a
        tool call's arguments sent whole): the events must then be rewritten."""
        for pieces, joined in zip(view.closing_pieces(), view.texts, strict=True):
            if '"' not in joined:
                continue  # JSON with a field has a quote
            for string in pieces:
                document = json_document(string)
                if document is not None and self.json_value(document) is not document:
                    return True
        return False

    # -- by value --

    def by_value(self, request: dict[str, Any], response: dict[str, Any], secrets: Secrets) -> None:
        """The second pass over one interaction: every value of ``secrets``, in every form."""
        _rewrite_texts(
            request,
            response,
            secrets.text,
            lambda body, headers: _body_by_value(
                body, secrets, headers, self._streams, self._views
            ),
        )

    def text(self, text: str) -> str:
        """The safety net over the serialised cassette: every form of every secret, and any
        key-like text, replaced."""
        return self.secrets.text(text)

    # -- machine paths --

    def machine_paths(self, request: dict[str, Any], response: dict[str, Any]) -> None:
        """The last pass over one interaction: every path of the machine as its placeholder."""
        paths = self.paths
        _rewrite_texts(
            request, response, paths.text, lambda body, headers: _body_paths(body, paths, headers)
        )


def _rewrite_texts(
    request: dict[str, Any],
    response: dict[str, Any],
    text: Callable[[str], str],
    rewrite_body: Callable[[Any, Mapping[str, Any] | None], Any],
) -> None:
    """Rewrite every text of one interaction: its URL, headers, status message and bodies."""
    request["uri"] = text(str(request.get("uri", "")))
    for part in (request, response):
        headers = part.get("headers") or {}
        for name, value in list(headers.items()):
            if isinstance(value, list):
                headers[name] = [text(str(item)) for item in value]
            else:
                headers[name] = text(str(value))
    request["body"] = rewrite_body(request.get("body"), request.get("headers"))
    status = response.get("status")
    if isinstance(status, dict) and isinstance(status.get("message"), str):
        status["message"] = text(status["message"])
    body = response.get("body")
    if isinstance(body, dict) and "string" in body:
        body["string"] = rewrite_body(body["string"], response.get("headers"))


def _stream_paths(text: str, paths: MachinePaths) -> str:
    """An event stream's text with every machine path replaced, event by event (a path is
    no secret: one cut across two events is left as it came).

    A stream without a backslash whose text holds no path is left as it is, unread: each
    string of its events is then the very characters between its quotes, and a quote is no
    character that a path begins or ends next to, so a path in any string would be a path in
    the text. (Text data right after ``data:`` begins a string where the text has a colon
    before it, which the generic folders' rule treats otherwise: such a stream is read.) So is
    a stream, escapes and all, none of whose strings can hold what every replacement takes in
    (:func:`json_strings_lack`: a streamed tool call's arguments are escaped JSON)."""
    if "\\" not in text and not contains(text, "data:/") and paths.text(text) == text:
        return text
    # With escapes: no string of any event (and no text data) can hold what every replacement
    # takes in, wherever it stands (as stream_by_value proves it for secrets).
    if json_strings_lack(text, paths.needles):
        return text
    events = parse_events(text)
    if events is None:
        return paths.text(text)
    framed = unframe(events)
    changed = False
    for event in events:
        for key in ("data", "raw"):
            if key in event:
                new = paths.value(event[key])
                changed = changed or new is not event[key]
                event[key] = new
    reframe(events, framed)
    return render_events(events) if changed else text


def _body_paths(body: Any, paths: MachinePaths, headers: Mapping[str, Any] | None = None) -> Any:
    """A body with every machine path replaced: in each string of a JSON body, in each event
    of a stream, in the text of other bodies, in the bytes of bodies that are not UTF-8."""
    return _rewrite_body(
        body,
        headers,
        data=paths.data,
        stream=lambda text: _stream_paths(text, paths),
        text=paths.text,
        value=paths.value,
        needles=paths.needles,
    )


def _body_by_value(
    body: Any,
    secrets: Secrets,
    headers: Mapping[str, Any] | None = None,
    streams: dict[str, list[Any]] | None = None,
    views: Sequence[tuple[str, UniformStream]] = (),
) -> Any:
    """A body with every form of every secret replaced: in each string of a JSON body, across
    the events of a stream, in the text of other bodies, in the bytes of bodies that are not
    UTF-8."""
    return _rewrite_body(
        body,
        headers,
        data=secrets.data,
        stream=lambda text: stream_by_value(text, secrets, streams, views),
        text=secrets.text,
        value=lambda parsed: by_value(parsed, secrets),
        needles=secrets.needles,
    )


def _rewrite_body(
    body: Any,
    headers: Mapping[str, Any] | None,
    *,
    data: Callable[[bytes], bytes],
    stream: Callable[[str], str],
    text: Callable[[str], str],
    value: Callable[[Any], Any],
    needles: tuple[str, ...] | None,
) -> Any:
    """A body rewritten by the pass for its kind: ``data`` for bytes that are not UTF-8,
    ``stream`` for an event stream, ``value`` for a JSON document (it returns the same object
    when nothing changed), ``text`` for any other text. An unchanged body is returned as is.

    ``needles``: what every replacement of the pass takes in (``None``: unknown); a body none
    of whose strings can hold one (:func:`json_strings_lack`) is left as it is, unparsed."""
    if body is None:
        return None
    original = body_text(body)
    if original is None:
        return data(body) if isinstance(body, bytes) else body
    if "event-stream" in header(headers or {}, "content-type"):
        out = stream(original)
    elif needles is not None and json_strings_lack(original, needles):
        return body
    elif "\\" not in original and text(original) == original:
        # Without a backslash, each string of a JSON body (keys too) is the very characters
        # between its quotes, and what ``text`` replaces never takes in a quote: a match in a
        # string would be a match in the body's text. Nothing to replace, nothing to parse.
        return body
    else:
        parsed = json_document(original)
        if parsed is None:
            out = text(original)
        else:
            scrubbed = value(parsed)
            out = original if scrubbed is parsed else json.dumps(scrubbed, ensure_ascii=False)
    if out == original:
        return body
    return out.encode() if isinstance(body, bytes) else out


# --- data written elsewhere (recordings) ---------------------------------------------------


def scrub_data(
    value: Any, secrets: Secrets | None = None, paths: MachinePaths | None = None
) -> Any:
    """YAML-ready data (a decision-level recording) with secret-named fields replaced, then
    every form of every secret (``secrets``, by default :meth:`Secrets.current`, and what the
    names found) in every string, then every machine path (``paths``, by default
    :meth:`MachinePaths.current`)."""
    seen: list[str] = []

    def remember(found: Any) -> None:
        seen.extend(part for part in credential_parts("", str(found)) if worth_searching(part))

    named = by_name(value, frozenset(), remember)
    known = Secrets.current() if secrets is None else secrets
    return (MachinePaths.current() if paths is None else paths).value(by_value(named, known | seen))


# --- the request as stored (matching) ------------------------------------------------------


class Redaction:
    """How requests are compared as stored: the extra field names, the known secrets and the
    machine's paths.

    Hashable: matching caches what it compares by it. The secrets and paths are read when
    first used (a replay that sends what it recorded never needs them).

    Args:
        fields: JSON field names scrubbed besides those :func:`secret_field` names.
        secrets: The known secrets (by default :meth:`Secrets.current`, when first needed).
        paths: The machine's paths (by default :meth:`MachinePaths.current`, when first
            needed).
    """

    __slots__ = ("_paths", "_secrets", "fields")

    def __init__(
        self,
        fields: Iterable[str] = DEFAULT_BODY_FIELDS,
        secrets: Secrets | None = None,
        paths: MachinePaths | None = None,
    ) -> None:
        self.fields = frozenset(fields)
        self._secrets = secrets
        self._paths = paths

    @property
    def secrets(self) -> Secrets:
        """The known secrets (read once, when first needed)."""
        if self._secrets is None:
            self._secrets = Secrets.current()
        return self._secrets

    @property
    def paths(self) -> MachinePaths:
        """The machine's paths (read once, when first needed)."""
        if self._paths is None:
            self._paths = MachinePaths.current()
        return self._paths

    def _key(self) -> tuple[frozenset[str], Secrets, MachinePaths]:
        return self.fields, self.secrets, self.paths

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Redaction) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Redaction(fields={sorted(self.fields)!r})"


def _ignore(value: Any) -> None:
    pass


def as_stored(value: Any, redaction: Redaction) -> Any:
    """A request's parsed JSON body (or text, or bytes) as a cassette stores it: secret-named
    fields, every form of every known secret and key-like text as the placeholder, machine
    paths as theirs. Copy on write: a value with nothing to scrub comes back as it is (the very
    object)."""
    paths = redaction.paths
    if isinstance(value, bytes):
        return paths.data(redaction.secrets.data(value))
    if isinstance(value, str):
        return paths.text(redaction.secrets.text(value))
    named = by_name(value, redaction.fields, _ignore)
    return paths.value(by_value(named, redaction.secrets))


def scrubbed_query(query: str) -> list[tuple[str, str]]:
    """A query string's parameters as a cassette stores them (secret values replaced)."""
    return Scrubber(secrets=Secrets()).query_pairs(query)


def stored_route(
    uri: str, secrets: Secrets, paths: MachinePaths | None = None
) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A URL's path and sorted query as a cassette stores them: what matching compares of it
    (with ``paths``, the machine's paths as their placeholders too)."""
    parts = urlsplit(uri)

    def stored(text: str) -> str:
        text = secrets.text(text)
        return text if paths is None else paths.text(text)

    query = (
        tuple(sorted((stored(key), stored(value)) for key, value in scrubbed_query(parts.query)))
        if parts.query
        else ()
    )
    return stored(parts.path), query


def shown_uri(uri: str, secrets: Secrets | None = None) -> str:
    """A URL as messages show it: no user info, secret query values and every known secret
    (by default :meth:`Secrets.current`) as the placeholder."""
    stripped, _ = _strip_userinfo(uri)
    shown = Scrubber(secrets=Secrets()).uri(stripped)
    return (Secrets.current() if secrets is None else secrets).text(shown)
