"""Failures of the fakes. They are ``AssertionError`` subclasses: a misused fake fails the test.

The tree, drawn once::

    AssertionError
     └── FakeError
          ├── ScriptExhausted    a model call (or decision request) came after the last
          │                      scripted step (or answer)
          ├── ScriptMismatch     a scripted pick/tool call names an option/tool not offered
          ├── AnswerMismatch     a scripted answer does not fit the request: an option or level
          │                      the question does not offer, another question type, a
          │                      question the request does not ask
          └── UnusedSteps        scripted steps (or answers) were never used (assert_complete)
"""

from __future__ import annotations

__all__ = ["AnswerMismatch", "FakeError", "ScriptExhausted", "ScriptMismatch", "UnusedSteps"]


class FakeError(AssertionError):
    """Base class of every failure a fake raises."""

    __module__ = "fake_runtimes"


class ScriptExhausted(FakeError):
    """A model call (or decision request) came after the last scripted step (or answer)."""

    __module__ = "fake_runtimes"


class ScriptMismatch(FakeError):
    """A scripted pick or tool call names an option or tool the call did not offer."""

    __module__ = "fake_runtimes"


class AnswerMismatch(FakeError):
    """A scripted answer of a fake decision provider does not fit the request it meets."""

    __module__ = "fake_runtimes"


class UnusedSteps(FakeError):
    """Scripted steps (or answers) were never used."""

    __module__ = "fake_runtimes"
