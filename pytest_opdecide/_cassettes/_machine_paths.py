"""Machine paths: what is recorded names no folder of the machine that recorded it.

A server's error page can quote its traceback (``File "/home/ada/llama/lib/python3.12/
site-packages/llama_cpp/server/app.py"``), a prompt can carry a test's temporary folder, a
reply the project's root. :class:`MachinePaths` replaces each such absolute path with a stable
placeholder, so that a cassette recorded on one machine reads the same on every other one, and
replay still matches (requests are compared as they are stored: the request sent on the
replaying machine has its own paths replaced the same way).

What is replaced, the longest first (a path inside another gets its own placeholder):

* ``<SITE-PACKAGES>``: every absolute path up to a ``site-packages`` or ``dist-packages``
  folder, of any machine (a server's traceback), and this interpreter's own;
* ``<PYTHON-LIB>``: every absolute path up to a ``lib/pythonX.Y`` folder (a standard library),
  and this interpreter's;
* ``<PYTEST-TMP>``: pytest's temporary folder of the run (``tmp_path`` lives under it), when
  the caller names it;
* ``<PROJECT>``: the project's root (pytest's rootdir; else the working directory);
* ``<PYTHON>``: this interpreter's prefixes (a virtual environment's folder, the base install);
* ``<TMP>``: the temporary folder (:func:`tempfile.gettempdir`);
* ``<HOME>``: the user's home folder.

Each known path is searched for as written and resolved (through symbolic links), in the forms
text can hold it in (JSON-escaped, with escaped slashes, URL-encoded), and only whole: at the
start of a path (``/data/home/ada`` is not ``/home/ada``), up to its end or a separator
(``/home/adam`` is not ``/home/ada``). The filesystem root and relative paths are never
replaced.
"""

from __future__ import annotations

import functools
import json
import os
import re
import site
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pytest_opdecide._http._secrets import _trie, holds_any

__all__ = ["PLACEHOLDERS", "MachinePaths", "strings_replaced"]

PLACEHOLDERS = (
    "<SITE-PACKAGES>",
    "<PYTHON-LIB>",
    "<PYTEST-TMP>",
    "<PROJECT>",
    "<PYTHON>",
    "<TMP>",
    "<HOME>",
)
"""The placeholders, in the order that wins when two names hold the same path."""

_PATH_CHAR = r"[\w.+~@%-]"
_START = r"(?<![\w.+~@%-])"  # a path starts here, not inside a longer name
_END = r"(?![\w+~@-]|\.\w)"  # and ends here: a separator, a quote, a space or the end
_GENERIC_START = r"(?<![\w.+~@%:/\\-])"  # a URL's path is no folder of a machine
_SITE_PACKAGES = re.compile(
    _GENERIC_START
    + rf"(?:(?:/{_PATH_CHAR}+)+?/(?:site|dist)-packages"
    + r'|[A-Za-z]:(?:\\{1,2}[^\\/:*?"<>|\r\n]+?)+?\\{1,2}(?:site|dist)-packages)'
    + _END
)
_PYTHON_LIB = re.compile(
    _GENERIC_START + rf"(?:/{_PATH_CHAR}+)*?/lib(?:64)?/python\d(?:\.\d+)?t?" + _END
)


def _forms(path: str) -> set[str]:
    """The ways text can hold ``path``: as is, JSON-escaped once and twice, with escaped
    slashes, URL-encoded (a query parameter), with forward slashes (a Windows path)."""
    forms = {path, path.replace("/", "\\/"), quote(path, safe=""), quote(path)}
    if "\\" in path:
        forms.add(path.replace("\\", "/"))
    for ascii_only in (True, False):
        once = json.dumps(path, ensure_ascii=ascii_only)[1:-1]
        forms |= {once, json.dumps(once, ensure_ascii=ascii_only)[1:-1]}
    return forms


def _usable(path: str) -> str | None:
    """``path`` without a trailing separator, or ``None`` when it names no folder worth
    replacing (empty, relative, or the filesystem root)."""
    stripped = path.rstrip("/\\")
    if not stripped or not os.path.isabs(path) or len(stripped) < 2 or stripped.endswith(":"):
        return None
    return stripped


@functools.lru_cache(maxsize=64)
def _compiled(pairs: tuple[tuple[str, str], ...]) -> re.Pattern[str] | None:
    """One pattern for every form of every known path, as a trie (the text is read about once
    however many forms there are); the longest form that ends a path wins."""
    forms = _trie(form for _, path in pairs for form in _forms(path))
    return None if forms is None else re.compile(_START + "(?:" + forms + ")" + _END)


_HEAD = 3
"""How many first characters of each form :func:`_heads` keeps."""


@functools.lru_cache(maxsize=64)
def _heads(pairs: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The distinct first characters of every form of every known path: a text holding none
    of them holds no path, and searching it for these few (at C speed) is cheaper than running
    the pattern over it (a long prompt with no path in it is the common case)."""
    return tuple(sorted({form[:_HEAD] for _, path in pairs for form in _forms(path)}))


@functools.lru_cache(maxsize=64)
def _lookup(pairs: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Each form of each known path -> its placeholder (the first name of a path wins)."""
    found: dict[str, str] = {}
    for placeholder, path in pairs:
        for form in _forms(path):
            found.setdefault(form, placeholder)
    return found


def _candidates(project: Path | None, pytest_tmp: Path | None) -> list[tuple[str, Iterable[Any]]]:
    try:
        home: list[Any] = [Path.home()]
    except (RuntimeError, KeyError):  # no home folder known
        home = []
    paths = sysconfig.get_paths()
    user_site = site.getusersitepackages() if hasattr(site, "getusersitepackages") else None
    site_packages: list[str] = getattr(site, "getsitepackages", list)()
    return [
        (
            "<SITE-PACKAGES>",
            [*site_packages, user_site, paths.get("purelib"), paths.get("platlib")],
        ),
        ("<PYTHON-LIB>", [paths.get("stdlib"), paths.get("platstdlib")]),
        ("<PYTEST-TMP>", [pytest_tmp]),
        ("<PROJECT>", [project if project is not None else Path.cwd()]),
        ("<PYTHON>", [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]),
        ("<TMP>", [tempfile.gettempdir()]),
        ("<HOME>", home),
    ]


def strings_replaced(value: Any, text: Callable[[str], str]) -> Any:
    """A JSON value with ``text`` applied to every string (keys too); the very object when
    nothing changes (copy on write). The pass by value and the pass over paths both walk so."""
    if isinstance(value, str):
        new = text(value)
        return value if new == value else new
    if isinstance(value, dict):
        out = {}
        changed = False
        for key, item in value.items():
            new_key = strings_replaced(key, text) if isinstance(key, str) else key
            new_item = strings_replaced(item, text)
            changed = changed or new_key is not key or new_item is not item
            out[new_key] = new_item
        return out if changed else value
    if isinstance(value, list):
        items = [strings_replaced(item, text) for item in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return items if changed else value
    return value


class MachinePaths:
    """The absolute paths of one machine, each replaced by its placeholder wherever it
    appears (see the module's docstring).

    Equal (and hashed) by their paths: matching caches what it compared by it.

    Args:
        known: ``(placeholder, path)`` pairs; a path named twice keeps its first placeholder.
        generic: Replace every machine's ``site-packages`` and standard library folders too.
    """

    __slots__ = ("_pairs", "generic")

    def __init__(self, known: Iterable[tuple[str, str]] = (), *, generic: bool = True) -> None:
        pairs: dict[str, str] = {}
        for placeholder, path in known:
            usable = _usable(str(path))
            if usable is not None:
                pairs.setdefault(usable, placeholder)
        self._pairs = tuple((placeholder, path) for path, placeholder in pairs.items())
        self.generic = generic

    @classmethod
    def current(
        cls,
        project: str | os.PathLike[str] | None = None,
        pytest_tmp: str | os.PathLike[str] | None = None,
    ) -> MachinePaths:
        """The paths of the machine this runs on.

        Args:
            project: The project's root (default: the working directory).
            pytest_tmp: pytest's temporary folder of the run, if any.
        """
        known = []
        chosen = (
            Path(project) if project is not None else None,
            Path(pytest_tmp) if pytest_tmp is not None else None,
        )
        for placeholder, paths in _candidates(*chosen):
            for path in paths:
                if path is None or str(path) == "":
                    continue
                known.append((placeholder, str(path)))
                resolved = os.path.realpath(path)
                if resolved != str(path):
                    known.append((placeholder, resolved))
        return cls(known)

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The known ``(placeholder, path)`` pairs."""
        return self._pairs

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MachinePaths)
            and other._pairs == self._pairs
            and other.generic == self.generic
        )

    def __hash__(self) -> int:
        return hash((self._pairs, self.generic))

    def __repr__(self) -> str:
        return f"MachinePaths(<{len(self._pairs)} paths>)"

    def __bool__(self) -> bool:
        return bool(self._pairs) or self.generic

    @property
    def needles(self) -> tuple[str, ...]:
        """Strings that every replacement :meth:`text` makes takes in (``packages`` or
        ``python`` for every machine's folders, the first characters of a known path's
        form), for :func:`~pytest_opdecide._http._secrets.json_strings_lack`."""
        generic = ("packages", "python") if self.generic else ()
        known = _heads(self._pairs) if self._pairs else ()
        return (*generic, *known)

    def text(self, text: str) -> str:
        """``text`` with every machine path replaced by its placeholder."""
        if self.generic and holds_any(text, ("packages",)):
            text = _SITE_PACKAGES.sub("<SITE-PACKAGES>", text)
        if self.generic and holds_any(text, ("python",)):
            text = _PYTHON_LIB.sub("<PYTHON-LIB>", text)
        pattern = _compiled(self._pairs)
        if pattern is None or not holds_any(text, _heads(self._pairs)):
            return text
        lookup = _lookup(self._pairs)
        return pattern.sub(lambda found: lookup[found.group()], text)

    def data(self, data: bytes) -> bytes:
        """The bytes of a body that is not UTF-8 text, with every path written in ASCII or
        Latin-1 replaced (as Latin-1 every byte is a character: nothing else changes)."""
        text = data.decode("latin-1")
        new = self.text(text)
        return data if new == text else new.encode("latin-1", errors="replace")

    def value(self, value: Any) -> Any:
        """A JSON value with every path replaced in every string (keys too); the very object
        when nothing changes (copy on write)."""
        return strings_replaced(value, self.text)
