"""Short failures: a failure of this library shows the user's line and its message, not our source.

The library's messages say what went wrong and how to fix it; under pytest's default
``--tb=auto`` they used to sit below dozens of lines of the library's own frames (and httpx's,
for a cassette mismatch). The plugin's report hook hands each failure here before pytest
renders it:

* an error **of this library** (its class is defined in ``pytest_opdecide`` or
  ``fake_runtimes``, or it is a ``TypeError``/``ValueError``/``RuntimeError`` raised by this
  library's own code, as its checks of bad input are) raised in the test body keeps the
  traceback from the test function to the last frame of the user's code that called into the
  library; the frames below it (ours, and the libraries ours called: httpx, vcrpy) are hidden,
  as ``__tracebackhide__`` hides pytest's and pytest-httpx's own. Under the default
  ``--tb=auto`` the user's frames are shown in the ``short`` style (location and line), so
  that the message, which says what to fix, is on the first screen;
* the same error raised in a fixture's setup or teardown (unused steps, unplayed
  interactions: no line of the test is involved) is reported as its message alone;
* anything else (the user's own errors, and a library error that is a bug: an
  ``AttributeError`` deep in our code) is left as pytest shows it. ``--fulltrace`` shows every
  frame, as always.

Only public API is used: pytest's ``ExceptionInfo.tb`` and ``traceback`` (settable) and its
``filter``, a report's ``longrepr``, and Python's writable ``tb_next`` of a traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["message_only", "ours", "short_report", "shorten"]

_ROOTS = tuple(
    str(folder)
    for folder in (Path(__file__).parents[1], Path(__file__).parents[2] / "fake_runtimes")
)
"""The folders of this project's two packages (``pytest_opdecide``, ``fake_runtimes``)."""

_CHECK_ERRORS = (TypeError, ValueError, RuntimeError)
"""Built-in error classes that the library raises for bad input, with a message for the user."""


def _in_library(entry: object) -> bool:
    path = str(getattr(entry, "path", ""))
    return path.startswith(_ROOTS)


def ours(excinfo: pytest.ExceptionInfo[BaseException]) -> bool:
    """Whether the error is one of this library's messages to the user (see the module doc)."""
    error_type = excinfo.type
    module = getattr(error_type, "__module__", "")
    if module.split(".")[0] in ("pytest_opdecide", "fake_runtimes"):
        return True
    traceback = excinfo.traceback
    return issubclass(error_type, _CHECK_ERRORS) and bool(traceback) and _in_library(traceback[-1])


def shorten(excinfo: pytest.ExceptionInfo[BaseException], test_file: Path) -> bool:
    """Hide the frames from the library's first one below the test's own down, if the error is
    ours. Returns whether the traceback was shortened.

    Args:
        excinfo: The failure of a test's call phase.
        test_file: The test's module: the first frame in it is the test function (those above
            are pytest's, and the hook wrappers of plugins, this one's among them).
    """
    if not ours(excinfo):
        return False
    entries = list(excinfo.traceback)
    user = next((i for i, entry in enumerate(entries) if Path(entry.path) == test_file), None)
    if user is None:
        return False
    first = next((i for i in range(user, len(entries)) if _in_library(entries[i])), None)
    if first is None:
        return False
    # The raw traceback is cut too (a traceback's ``tb_next`` is writable): pytest rebuilds
    # its entries from the raw chain when it cuts the traceback at the test function.
    raw = excinfo.tb
    for _ in range(first - 1):
        if raw.tb_next is None:
            return False
        raw = raw.tb_next
    raw.tb_next = None
    kept = {id(entry) for entry in entries[user:first]}
    excinfo.traceback = excinfo.traceback.filter(lambda entry: id(entry) in kept)
    return True


def short_report(excinfo: pytest.ExceptionInfo[BaseException]) -> object:
    """A shortened failure as pytest's ``short`` style renders it: each of the user's frames as
    its location and line, then the message (what ``--tb=auto`` gives for a library error)."""
    return excinfo.getrepr(style="short", tbfilter=False)


def message_only(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """The error as its class and message: the report of a fixture's setup or teardown."""
    error_type = excinfo.type
    module = error_type.__module__
    name = (
        error_type.__qualname__ if module == "builtins" else f"{module}.{error_type.__qualname__}"
    )
    # As pytest prints an exception's lines: each behind "E   ".
    return "\n".join(f"E   {line}".rstrip() for line in f"{name}: {excinfo.value}".splitlines())
