"""How the provider checks tell the endings of provider code apart, and name its errors.

:class:`~._provider_harness.ProviderHarness` runs provider code in the check's event loop; a
``decide()`` that did not finish ends in :class:`TimedOut` (it ran out of ``call_timeout_s``)
or :class:`Blocked` (it blocked its loop and could not be cancelled), which
:mod:`._provider_verdicts` and the check mixins (``_*_checks.py``) report. :func:`is_ours`
tells the checks' own errors (a failed rule, pytest's skip or fail) from the provider's, and
:func:`raised` and :func:`note` name an exception in a failure message.
"""

from __future__ import annotations

import pytest

from pytest_opdecide.conformance._failures import ConformanceError

__all__ = ["Blocked", "TimedOut", "is_ours", "note", "raised"]


def raised(error: BaseException) -> str:
    """An exception as a failure message names it."""
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def note(error: BaseException) -> str:
    """What a failure message adds about an exception that is not an ``Exception``."""
    if isinstance(error, Exception):
        return ""
    return (
        f" ({type(error).__name__} is not an Exception: raised anywhere but in these checks, "
        "it stops the whole program or test run)"
    )


class TimedOut(Exception):
    """The provider did not finish within ``call_timeout_s``."""


class Blocked(Exception):
    """The provider blocked its event loop past ``call_timeout_s``: it could not be cancelled."""


def is_ours(error: BaseException) -> bool:
    """An error of the checks themselves (a failed rule, pytest's skip or fail), never the
    provider's."""
    return isinstance(error, ConformanceError | pytest.skip.Exception | pytest.fail.Exception)
