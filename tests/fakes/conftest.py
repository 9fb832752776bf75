"""Fixtures of the fake-runtime tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_opdecide import current_runtime


@pytest.fixture(autouse=True)
def _no_ambient_runtime() -> Iterator[None]:
    """Every test starts (and must end) with no runtime bound in its context."""
    assert current_runtime() is None
    yield
    assert current_runtime() is None
