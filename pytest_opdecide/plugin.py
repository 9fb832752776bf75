"""The pytest plugin (entry point ``opdecide``): options, markers and fixtures only.

Everything it offers is plain library code underneath; importing this module stays cheap.
"""

from __future__ import annotations

import os

import pytest

LIVE_ENV = "OPDECIDE_LIVE_URL"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "opdecide_live: needs the local real model server; runs only when the "
        f"{LIVE_ENV} environment variable names its base URL",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(LIVE_ENV):
        return
    skip = pytest.mark.skip(reason=f"live test: set {LIVE_ENV}=http://127.0.0.1:PORT/v1 to run")
    for item in items:
        if item.get_closest_marker("opdecide_live") is not None:
            item.add_marker(skip)
