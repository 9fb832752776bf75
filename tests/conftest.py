"""Shared configuration of the test suite."""

# Import the library before any in-process pytester run: pytester restores sys.modules after
# each inner run, and a module first imported inside one would be imported anew later, giving
# two distinct copies of classes such as Runtime (and failing isinstance checks across them).
import hypothesis.strategies  # noqa: F401

import fake_runtimes  # noqa: F401
import pytest_opdecide._real
import pytest_opdecide.conformance
import pytest_opdecide.decision
import pytest_opdecide.questions
import pytest_opdecide.strategies  # noqa: F401

pytest_plugins = ["pytester"]
