"""What the plugin remembers of each test while it runs: whether its body passed.

Fixtures cannot see the exception of the test they serve; a report hook of the plugin records
the outcome of the call phase here, and fixtures read it at teardown (to check a scripted fake's
unused steps, to write a cassette, to report unplayed interactions) only for a test that passed.
"""

from __future__ import annotations

import pytest

__all__ = ["call_passed", "note_call"]

_call_passed = pytest.StashKey[bool]()


def note_call(item: pytest.Item, report: pytest.TestReport) -> None:
    """Record the outcome of ``item``'s call phase (from ``pytest_runtest_makereport``)."""
    item.stash[_call_passed] = report.passed


def call_passed(item: pytest.Item) -> bool:
    """Whether the test body of ``item`` ran and passed (known from its teardown on)."""
    return bool(item.stash.get(_call_passed, False))
