"""The guard against silently dropping a standard check.

A subclass may replace a standard check only to mark it as an expected failure, with a reason
anyone reading the suite can see: ``@pytest.mark.xfail(reason="...")``. Setting a check to
``None`` (which hides it from pytest) or overriding it without that mark fails the guard test,
so a conformance claim cannot quietly shrink.

The standard checks of a suite are every ``test_*`` attribute it has, its own and those it
inherits: ``DecisionProviderTests`` is put together from one mixin per section of checks, and a
check guarded is a check of any of them.
"""

from __future__ import annotations

import inspect
from typing import Any, Final

from pytest_opdecide.conformance._failures import ConformanceRule, fail

__all__ = ["GUARD_NAME", "check_standard_checks", "standard_checks", "xfail_reason"]

GUARD_NAME: Final = "test_no_standard_check_removed"


def standard_checks(base: type) -> dict[str, Any]:
    """The standard checks of a base class, by name: its ``test_*`` attributes, defined in it or
    inherited from the classes it is built from, each as ``base`` has it.

    In the order pytest runs them: a class's checks after those it inherits, the checks of its
    last base first, each class's in the order it defines them.
    """
    seen: set[str] = set()
    by_class: list[list[str]] = []
    for klass in base.__mro__:
        own = [
            name
            for name in vars(klass)
            if name.startswith("test_") and name != GUARD_NAME and name not in seen
        ]
        seen.update(own)
        by_class.append(own)
    return {name: inspect.getattr_static(base, name) for own in reversed(by_class) for name in own}


def xfail_reason(function: Any) -> str | None:
    """The non-empty ``reason`` of an ``xfail`` mark on ``function``, if it has one."""
    for mark in getattr(function, "pytestmark", ()) or ():
        if getattr(mark, "name", None) != "xfail":
            continue
        reason = mark.kwargs.get("reason")
        if isinstance(reason, str) and reason.strip():
            return reason
    return None


def check_standard_checks(cls: type, base: type, *, subject: str = "provider") -> None:
    """Fail when ``cls`` deletes a standard check of ``base`` or overrides one without an
    ``xfail`` mark giving a reason.

    Raises:
        ConformanceError: Listing every such check.
    """
    problems: list[str] = []
    dropped: list[str] = []
    for name, original in standard_checks(base).items():
        current = inspect.getattr_static(cls, name, None)
        if current is original:
            continue
        owner = next((klass.__name__ for klass in cls.__mro__ if name in vars(klass)), "?")
        dropped.append(name)
        if current is None:
            problems.append(f"{name} is deleted (set to None in {owner})")
        elif xfail_reason(current) is None:
            problems.append(
                f"{name} is overridden in {owner} without @pytest.mark.xfail(reason=...)"
            )
    if problems:
        fail(
            ConformanceRule.STANDARD_CHECK,
            f"{cls.__name__} drops standard checks of {base.__name__}: " + "; ".join(problems),
            value=dropped,
            fix="keep the standard checks; to declare one that your component does not pass, "
            "override it with the @pytest.mark.xfail(reason='why it fails') decorator (the "
            "body may stay `super().test_name(...)`), or declare a capability that skips it",
            subject=subject,
        )
