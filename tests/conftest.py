"""Shared configuration of the test suite."""

# ruff: noqa: E402  (the jail is installed before anything else is imported)

import gc
import importlib.util
import os
import sys
from pathlib import Path

# The network jail (tests/_jail/sitecustomize.py): no test, and no process a test starts, can
# reach a non-loopback host, even if the guard under test fails. Loaded here for this process
# and through PYTHONPATH for every subprocess.
_JAIL = str(Path(__file__).parent / "_jail")
os.environ["PYTHONPATH"] = os.pathsep.join(
    [_JAIL, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
)
_spec = importlib.util.spec_from_file_location("opdecide_network_jail", f"{_JAIL}/sitecustomize.py")
assert _spec is not None
assert _spec.loader is not None
_spec.loader.exec_module(importlib.util.module_from_spec(_spec))

# Import the library before any in-process pytester run: pytester restores sys.modules after
# each inner run, and a module first imported inside one would be imported anew later, giving
# two distinct copies of classes such as Runtime (and failing isinstance checks across them).
import hypothesis.strategies  # noqa: F401
import pytest

import fake_runtimes  # noqa: F401
import pytest_opdecide.conformance
import pytest_opdecide.decision
import pytest_opdecide.plugin._real_components
import pytest_opdecide.questions
import pytest_opdecide.strategies  # noqa: F401

pytest_plugins = ["pytester"]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move everything imported and collected so far out of the garbage collector's sight,
    and write no more bytecode.

    Every in-process pytester run ends with full collections (pytest 8.4.0 does five); each
    would walk the whole imported world and every collected item again, which nothing here
    ever frees. Objects made later are collected as usual.

    The package's modules are imported (and their bytecode cached) by now; the inner
    sessions, in this process or another, read those caches but write none: a test that
    rewrites a test file within the same second, at the same size, would otherwise run the
    cached old version.
    """
    gc.freeze()
    sys.dont_write_bytecode = True
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
