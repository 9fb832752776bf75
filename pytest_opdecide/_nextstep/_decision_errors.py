"""Exceptions raised by the decision library.

The tree, drawn once::

    ValueError
     └── DecisionError          the model never produced a valid pick (pytest_opdecide.decision)
    RuntimeError
     ├── ToolLoopError          a turn still asked for tools after max_iterations model calls
     └── (plain RuntimeError)   no runtime: outside an Agent call and no runtime= given
    TypeError / ValueError      the options themselves are malformed (raised before any call)

Question decisions have their own tree (``pytest_opdecide.questions.ProviderError``); the
fakes add ``fake_runtimes.ScriptExhausted`` and friends (``AssertionError`` subclasses).
"""

from __future__ import annotations

from typing import Any

__all__ = ["DecisionError", "ToolLoopError", "reply_text"]


def reply_text(reply: Any) -> str:
    """Any reply as text, for messages and re-pick prompts; never raises."""
    if isinstance(reply, str):
        return reply
    if isinstance(reply, bytes | bytearray):
        return bytes(reply).decode("utf-8", errors="replace")
    if reply is None:
        return ""
    try:
        return str(reply)
    except Exception:
        return f"<unprintable {type(reply).__name__}>"


class DecisionError(ValueError):
    """The model never produced a valid pick, after every allowed re-pick.

    Attributes:
        kind: The last error's kind: ``no_action``, ``unknown_call``, ``bad_args``,
            ``missing_required``, ``type_mismatch``, ``enum_violation`` or ``invalid_value``
            (a value that breaks a constraint, or a placeholder copied from the menu).
        message: The last error's message.
        reply_head: The first 200 characters of the last reply.
        attempts: How many replies were tried (the first pick plus re-picks).
        replies: Every reply seen, in order.
    """

    __module__ = "pytest_opdecide"

    def __init__(self, kind: str, message: str, replies: list[Any], attempts: int) -> None:
        self.kind = kind
        self.message = message
        self.replies = list(replies)
        self.attempts = attempts
        self.reply_head = reply_text(replies[-1])[:200] if replies else ""
        shown = message if message.endswith(".") else f"{message}."
        super().__init__(
            f"decision failed after {attempts} attempt(s). Last error ({kind}): {shown} "
            f"Last reply head: {self.reply_head!r}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.kind, self.message, self.replies, self.attempts))


class ToolLoopError(RuntimeError):
    """A turn still asked for tools after ``max_iterations`` model calls."""

    __module__ = "pytest_opdecide"
