"""Test names that differ only in case, which file systems that ignore case cannot tell apart.

macOS and Windows ignore case in file names: ``test_A.yaml`` and ``test_a.yaml`` are one file
there, so two tests of one module named ``test_A`` and ``test_a`` (or ``TestX`` and ``Testx``,
or parametrised ``[Yes]`` and ``[yes]``) would read and write each other's cassette and menu
snapshot. This module records, as pytest collects, the names of every collector's children
(the tests of a module, the methods of a class: all of them, whatever the run selects), so
that a test knows its *case twins*: siblings whose names, as they appear in a file name, differ
from its own only in case.

A test without a case twin keeps the file name it always had. Of a group of case twins, the
one whose name is all lower case (when exactly one is) keeps it too; every other one gets a
short hash of its exact name added (``test_A-1a2b3c4d.yaml``), the same on every system and in
every run that collects the module.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["exact_digest", "needs_digest", "note_children"]

_children_key = pytest.StashKey[dict[str, list[str]]]()


def note_children(config: pytest.Config, report: pytest.CollectReport) -> None:
    """Record the names of a collector's children (``pytest_make_collect_report``)."""
    names = [
        item.name for item in report.result if isinstance(item, pytest.Item | pytest.Collector)
    ]
    if names:
        config.stash.setdefault(_children_key, {})[report.nodeid] = names


def exact_digest(name: str) -> str:
    """Eight hexadecimal digits of the hash of ``name`` as it is spelt (lower case only)."""
    return hashlib.sha256(name.encode()).hexdigest()[:8]


def _levels(node: Any) -> list[Any]:
    """The nodes from the test's file (excluded) down to the test."""
    chain: list[Any] = node.listchain()
    files = [index for index, item in enumerate(chain) if isinstance(item, pytest.File)]
    return chain[files[-1] + 1 :] if files else chain[-1:]


def needs_digest(node: Any, shown: Callable[[str], str]) -> bool:
    """Whether ``node``'s file name needs :func:`exact_digest` to tell it from a case twin.

    Args:
        node: The test.
        shown: How a name appears in the file name (its characters cleaned up).
    """
    config = getattr(node, "config", None)
    known = config.stash.get(_children_key, {}) if config is not None else {}
    if not known:
        return False
    for level in _levels(node):
        parent = level.parent
        if parent is None:
            continue
        siblings = known.get(parent.nodeid, [level.name])
        mine = shown(level.name)
        group = [name for name in siblings if shown(name).lower() == mine.lower()]
        if len(set(group)) <= 1:
            continue  # no other name at this level reads the same, whatever the case
        lower = [name for name in group if shown(name) == shown(name).lower()]
        if not (mine == mine.lower() and len(lower) == 1):
            return True
    return False
