"""Secret values, and every form in which each of them could be written.

A value is searched for raw, URL-encoded (upper and lower case escapes), JSON-escaped once and
twice (a JSON document inside a JSON string), in base64 (standard and URL-safe, padded or not,
on its own and at any of the three offsets it can start at inside a longer blob) and, in bytes,
as UTF-8, UTF-16 and Latin-1 (:class:`Secrets`). Values shorter than :data:`MIN_SECRET_LENGTH`,
or without a letter, are not searched for: replacing every ``"1"`` or ``"x"`` would garble what
is written. Text shaped like a key (:data:`KEYLIKE`) is replaced wherever it appears.

Where the values come from: the credentials this package's clients were configured with
(:mod:`._credentials`), the values of environment variables whose names say ``KEY``, ``TOKEN``,
``SECRET``, ``PASSWORD`` or ``PASSWD`` (:func:`env_secrets`), and what the cassette layer's
name rules find (:mod:`pytest_opdecide._cassettes._scrub`).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import Any
from urllib.parse import quote, quote_plus

from pytest_opdecide._http._credentials import registered

__all__ = [
    "KEYLIKE",
    "MIN_SECRET_LENGTH",
    "PLACEHOLDER",
    "Secrets",
    "env_secrets",
    "holds_any",
    "json_strings_lack",
    "worth_searching",
]

PLACEHOLDER = "<REDACTED>"
"""What a cassette holds in place of each secret."""
_PLACEHOLDER_BYTES = PLACEHOLDER.encode()

MIN_SECRET_LENGTH = 8
"""Values shorter than this (in characters) are not searched for by value."""

KEYLIKE = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}"
    r"|Bearer\s+(?=[A-Za-z]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{12,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|gh[pousr]_[A-Za-z0-9]{36,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,})"
)
"""Text shaped like a key or token, replaced wherever it appears (OpenAI-style ``sk-`` keys,
bearer tokens, AWS access key ids, Google API keys, GitHub and Slack tokens). A bearer token
holds something besides letters (a digit, a dot...): ``Bearer authentication required`` is a
sentence that servers send, not a token."""
_KEYLIKE_BYTES = re.compile(KEYLIKE.pattern.encode())
_GITHUB_MARKS = frozenset(f"gh{kind}_" for kind in "pousr")
_GITHUB_MARK = re.compile("gh[pousr]_")
"""The five GitHub marks, looked for in one pass (five searches of a long text cost five)."""
_OTHER_MARKS = ("sk-", "Bearer", "AKIA", "ASIA", "AIza", "xox")
_KEYLIKE_MARKS = (*_OTHER_MARKS, *sorted(_GITHUB_MARKS))
"""What every match of :data:`KEYLIKE` holds (a Slack token's ``xox`` stands for its five
kinds): a text with none of them is not searched (looking for a few plain strings is many
times faster than trying the pattern at every word)."""
_KEYLIKE_BYTE_MARKS = tuple(mark.encode() for mark in _KEYLIKE_MARKS)
_GATED_LENGTH = 512
"""From this length on, :func:`holds_any` first looks for the characters of each string."""


_SEARCHED_LENGTH = 1 << 10
"""From this length on, a string is looked for with a compiled pattern (:func:`contains`)."""


@functools.lru_cache(maxsize=512)
def _literal(needle: str) -> Callable[[str], re.Match[str] | None]:
    return re.compile(re.escape(needle)).search


def contains(text: str, needle: str) -> bool:
    """``needle in text``. In a text of a kilobyte or more, looked for with a compiled
    pattern of the needle instead: the regular expression engine scans for a literal's first
    character and checks the rest, some 1.4 to 2.4 times as fast as ``in`` on prose for the few
    characters long needles scrubbing looks for (``sk-``, ``xox``, a path's first characters;
    CPython 3.11 to 3.13 alike, measured on a long prompt's text)."""
    if len(text) < _SEARCHED_LENGTH:
        return needle in text
    return _literal(needle)(text) is not None


def holds_mark(text: str) -> bool:
    """``holds_any(text, _KEYLIKE_MARKS)``, the GitHub marks looked for in one pass."""
    if holds_any(text, _OTHER_MARKS):
        return True
    return "_" in text and _GITHUB_MARK.search(text) is not None


def holds_any(text: str, needles: tuple[str, ...]) -> bool:
    """Whether any of ``needles`` is in ``text`` (``any(needle in text ...)``).

    In a long text, a string is looked for only when each of its characters is there: a single
    character is looked for at ``memchr`` speed, many times faster than a longer string, and a
    long prompt lacks most of the rarer ones (``_``, ``B``, ``z``...). Each character is looked
    for once.
    """
    if len(text) < _GATED_LENGTH:
        return any(needle in text for needle in needles)
    present: dict[str, bool] = {}
    for needle in needles:
        for char in needle:
            found = present.get(char)
            if found is None:
                found = present[char] = char in text
            if not found:
                break
        else:
            if contains(text, needle):
                return True
    return False


_MAX_SCANNED_FORMS = 48
"""Up to this many forms of the values, a text is first scanned for each form as a plain string
(fast), and searched with the pattern only when one is there."""

_ESCAPE_MADE = frozenset('"\\/\b\f\n\r\t')
"""The characters a JSON escape other than ``\\u`` writes: ``\\"``, ``\\\\``, ``\\/`` write the
character that follows the backslash, ``\\b \\f \\n \\r \\t`` a control character."""
_CONTROL_MADE = frozenset("\b\f\n\r\t")


def json_strings_lack(text: str, needles: tuple[str, ...]) -> bool:
    """Whether no string of the JSON document ``text`` (keys too), nor ``text`` itself when
    it is no JSON, can hold any of ``needles``: proven on the text, without parsing it.

    Without a ``\\u`` escape, a string's characters are the text's own between its quotes,
    cut only where an escape writes one of :data:`_ESCAPE_MADE`: a needle with none of those
    is in a string only if it is in the text; a needle with a character that the text lacks
    (one no escape writes from other characters: not a control character) is in no string.
    ``False`` says only that a string may hold one.
    """
    if contains(text, "\\u"):
        return False
    present: dict[str, bool] = {}
    github: bool | None = None
    for needle in needles:
        lacking = False
        for char in needle:
            found = present.get(char)
            if found is None:
                found = present[char] = char in text
            if not found and char not in _CONTROL_MADE:
                lacking = True
                break
        if lacking:
            continue
        if _ESCAPE_MADE.intersection(needle):
            return False
        if needle in _GITHUB_MARKS:  # the five looked for at once
            if github is None:
                github = _GITHUB_MARK.search(text) is not None
            if github:
                return False
        elif contains(text, needle):
            return False
    return True


_ENV_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD", re.IGNORECASE)


def worth_searching(value: str) -> bool:
    """Whether a value is searched for by value: long enough, with a letter, and not part of
    the placeholder (a replacement must never be replaced again)."""
    return (
        len(value) >= MIN_SECRET_LENGTH
        and any(char.isalpha() for char in value)
        and value not in PLACEHOLDER
    )


def env_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the environment variables whose names contain ``KEY``, ``TOKEN``,
    ``SECRET``, ``PASSWORD`` or ``PASSWD`` (upper or lower case) and that are worth searching
    for (see :func:`worth_searching`)."""
    environ = os.environ if environ is None else environ
    return [
        value
        for name, value in environ.items()
        if _ENV_NAME.search(name) and worth_searching(value)
    ]


def _base64_forms(data: bytes) -> set[str]:
    """``data`` in base64: whole (padded or not), and the part of its encoding that does not
    depend on what surrounds it, at each of the three offsets it can start at in a longer blob."""
    forms = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(data).decode("ascii")
        forms |= {whole, whole.rstrip("=")}
        for offset in (0, 1, 2):
            encoded = encode(b"\0" * offset + data).decode("ascii")
            forms.add(encoded[(8 * offset + 5) // 6 : (8 * (offset + len(data))) // 6])
    return forms


def _percent_lower(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda found: found.group().lower(), text)


def _text_forms(secret: str) -> set[str]:
    """Every form in which ``secret`` may be written into text."""
    forms = {secret, quote(secret, safe=""), quote(secret), quote_plus(secret)}
    forms |= {_percent_lower(form) for form in forms}
    for ascii_only in (True, False):
        once = json.dumps(secret, ensure_ascii=ascii_only)[1:-1]
        twice = json.dumps(once, ensure_ascii=ascii_only)[1:-1]
        forms |= {once, twice}
    forms |= _base64_forms(secret.encode("utf-8"))
    return forms


def _byte_forms(secret: str, text_forms: Iterable[str]) -> set[bytes]:
    """Every form in which ``secret`` may be written into a body that is not UTF-8 text."""
    forms = {form.encode("utf-8") for form in text_forms}
    forms |= {secret.encode("utf-16-le"), secret.encode("utf-16-be")}
    with contextlib.suppress(UnicodeEncodeError):
        forms.add(secret.encode("latin-1"))
    return forms


def _trie(forms: Iterable[str]) -> str | None:
    """A pattern matching every form, built as a trie: forms that share a beginning share its
    test, so a text is read about once however many forms there are (an alternation of
    hundreds of forms tries each at every position). At each position the longest form wins:
    a secret inside a longer one gives way to it. Forms that are part of the placeholder are
    left out: a replacement is never replaced again. ``None`` when there is no form."""
    root: dict[str | None, Any] = {}
    for form in {form for form in forms if form and form not in PLACEHOLDER}:
        node = root
        for char in form:
            node = node.setdefault(char, {})
        node[None] = {}  # a form ends here

    def emit(node: dict[str | None, Any]) -> str:
        branches = [re.escape(key) + emit(child) for key, child in node.items() if key]
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if None in node and branches:  # longer forms first (greedy), else the form ends here
            body = f"(?:{body})?"
        return body if branches else ""

    return emit(root) or None


class Secrets:
    """Secret values, each searched for in every form (see the module's docstring).

    Equal (and hashed) by their values: matching caches what it compared by it.

    Args:
        values: The values; those not worth searching for are left out.
    """

    def __init__(self, values: Iterable[str] = ()) -> None:
        self.values = frozenset(value for value in values if worth_searching(value))
        self._hash = hash(self.values)

    @classmethod
    def current(cls) -> Secrets:
        """The configured credentials of this process and the secret environment variables'
        values (the same object while they stay the same: its patterns are compiled once)."""
        return _current(registered(), frozenset(env_secrets()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secrets) and other.values == self.values

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Secrets(<{len(self.values)} values>)"  # never the values

    def __or__(self, other: Iterable[str]) -> Secrets:
        return Secrets([*self.values, *other])

    @cached_property
    def _text_form_set(self) -> frozenset[str]:
        forms = (form for value in self.values for form in _text_forms(value))
        return frozenset(form for form in forms if form and form not in PLACEHOLDER)

    @cached_property
    def _text_pattern(self) -> re.Pattern[str] | None:
        source = _trie(self._text_form_set)
        return None if source is None else re.compile(source)

    @cached_property
    def _byte_form_set(self) -> frozenset[bytes]:
        forms = (form for value in self.values for form in _byte_forms(value, _text_forms(value)))
        return frozenset(
            form for form in forms if form and form.decode("latin-1") not in PLACEHOLDER
        )

    @cached_property
    def _byte_pattern(self) -> re.Pattern[bytes] | None:
        # Bytes as Latin-1 text (one character per byte), so the same trie serves them.
        source = _trie(form.decode("latin-1") for form in self._byte_form_set)
        return None if source is None else re.compile(source.encode("latin-1"))

    @cached_property
    def needles(self) -> tuple[str, ...] | None:
        """Strings that every replacement :meth:`text` makes takes in (every form, and what
        every key-like match holds), for :func:`json_strings_lack`; ``None`` when there are
        more forms than are worth looking for one by one."""
        if len(self._text_form_set) > _MAX_SCANNED_FORMS:
            return None
        return (*_KEYLIKE_MARKS, *sorted(self._text_form_set))

    def text(self, text: str, placeholder: str = PLACEHOLDER) -> str:
        """``text`` with every form of every value, and key-like text, as ``placeholder``
        (a cassette's :data:`PLACEHOLDER` by default)."""
        pattern = self._text_pattern
        forms = self._text_form_set
        if pattern is not None and (
            len(forms) > _MAX_SCANNED_FORMS or any(contains(text, form) for form in forms)
        ):
            text = pattern.sub(placeholder, text)
        if holds_mark(text):
            text = KEYLIKE.sub(placeholder, text)
        return text

    def data(self, data: bytes) -> bytes:
        """``data`` with every form of every value, and key-like text, as the placeholder."""
        pattern = self._byte_pattern
        forms = self._byte_form_set
        if pattern is not None and (
            len(forms) > _MAX_SCANNED_FORMS or any(form in data for form in forms)
        ):
            data = pattern.sub(_PLACEHOLDER_BYTES, data)
        if any(mark in data for mark in _KEYLIKE_BYTE_MARKS):
            data = _KEYLIKE_BYTES.sub(_PLACEHOLDER_BYTES, data)
        return data

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the values (in every form) and key-like text are in ``text``, merged."""
        found = []
        if holds_mark(text):
            found += [match.span() for match in KEYLIKE.finditer(text)]
        pattern, forms = self._text_pattern, self._text_form_set
        if pattern is not None and (
            len(forms) > _MAX_SCANNED_FORMS or any(contains(text, form) for form in forms)
        ):
            found += [match.span() for match in pattern.finditer(text)]
        merged: list[tuple[int, int]] = []
        for start, end in sorted(found):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged


@functools.lru_cache(maxsize=8)
def _current(configured: frozenset[str], environment: frozenset[str]) -> Secrets:
    return Secrets(configured | environment)
