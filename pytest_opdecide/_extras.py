"""Optional extras: the libraries that only some features need, and the error naming the fix.

Hypothesis and faker each register a pytest plugin when they are installed, so depending on
them would cost every pytest run of a user's project (and put a ``faker`` fixture into it).
They are optional extras instead, imported only where their feature is used:

* ``pytest-opdecide[strategies]``: hypothesis and faker, for :mod:`pytest_opdecide.strategies`
  and the conformance suites' property-based checks;
* ``pytest-opdecide[contexts]``: faker, for ``fake_runtimes.fake_context``.

A feature used without its extra raises :class:`MissingExtra`, whose message names the
``pip install`` command.
"""

from __future__ import annotations

__all__ = ["MissingExtra"]


class MissingExtra(ModuleNotFoundError):
    """A feature was used whose optional extra is not installed.

    A ``ModuleNotFoundError`` (so an ``except ImportError`` still catches it) whose message says
    which library is missing, what needs it and the command that installs it.

    Attributes:
        library: The missing library's import name (``"hypothesis"``).
        extra: The extra that brings it (``"strategies"``).
        feature: What needed it (``"pytest_opdecide.strategies"``).
    """

    __module__ = "pytest_opdecide"

    def __init__(self, library: str, *, extra: str, feature: str) -> None:
        self.library = library
        self.extra = extra
        self.feature = feature
        super().__init__(
            f"{feature} needs {library}, an optional extra of pytest-opdecide that is not "
            f"installed. Install it with:\n    pip install 'pytest-opdecide[{extra}]'",
            name=library,
        )
