"""Failures of the fakes. They are ``AssertionError`` subclasses: a misused fake fails the test.

The tree, drawn once::

    AssertionError
     └── FakeError
          ├── ScriptExhausted    a model call came after the last scripted step
          ├── ScriptMismatch     a scripted pick/tool call names an option/tool not offered
          └── UnusedSteps        scripted steps were never used (assert_complete, teardown)
"""

from __future__ import annotations

__all__ = ["FakeError", "ScriptExhausted", "ScriptMismatch", "UnusedSteps"]


class FakeError(AssertionError):
    """Base class of every failure a fake raises."""


class ScriptExhausted(FakeError):
    """A model call came after the last scripted step."""


class ScriptMismatch(FakeError):
    """A scripted pick or tool call names an option or tool the call did not offer."""


class UnusedSteps(FakeError):
    """Scripted steps were never used."""
