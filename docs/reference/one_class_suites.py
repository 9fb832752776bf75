"""Griffe extension: document a conformance suite put together from mixins as the one class it is.

``DecisionProviderTests`` is built from private mixins, one per section of checks (see
``pytest_opdecide/conformance/_provider_tests.py``); a user subclasses the class, never a mixin.
mkdocstrings shows a class's own members only, and names its bases: the reference page would
list none of the checks, and name private classes instead. For each class of :data:`SUITES`,
this extension makes the members the class inherits from its own package its own, and drops
its bases, so that the page shows what the user gets: every check, fixture and method.
"""

from __future__ import annotations

from typing import Any

import griffe

SUITES = ("pytest_opdecide.conformance._provider_tests.DecisionProviderTests",)
"""The classes documented as one class, by the path of their definition."""


class OneClassSuites(griffe.Extension):
    """Moves the inherited members of each suite into it, once its package is loaded."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        for path in SUITES:
            if path.split(".", 1)[0] != pkg.name:
                continue
            suite = loader.modules_collection.get_member(path)
            inherited = {
                name: member.final_target
                for name, member in suite.inherited_members.items()
                if member.final_target.path.startswith(f"{pkg.name}.")
            }
            for name, member in inherited.items():
                suite.set_member(name, member)
            suite.bases = []
