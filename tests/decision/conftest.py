"""Fixtures of the decision tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_opdecide import current_runtime
from pytest_opdecide._nextstep._binding import set_no_runtime_hint


@pytest.fixture(autouse=True)
def _no_ambient_runtime() -> Iterator[None]:
    """Every test starts (and must end) with no runtime bound in its context."""
    assert current_runtime() is None
    yield
    assert current_runtime() is None


@pytest.fixture
def outside_pytest() -> Iterator[None]:
    """The library as code outside a pytest test sees it: no advice about the fixtures in the
    message of a model call with no runtime."""
    previous = set_no_runtime_hint(None)
    yield
    set_no_runtime_hint(previous)
