"""A test's settings are resolved once per distinct marker, not once per test."""

from __future__ import annotations

import pytest

from pytest_opdecide.plugin import _markers


def test_the_same_marker_settings_are_resolved_once(request: pytest.FixtureRequest) -> None:
    config = request.config
    first = _markers.settings_for(config, {}, {})
    # Data keys are no settings.
    assert _markers.settings_for(config, {"script": ["a"]}, {}) is first
    strict = _markers.settings_for(config, {"strict": False}, {})
    assert strict.strict is False
    assert _markers.settings_for(config, {"strict": False}, {}) is strict
    assert _markers.settings_for(config, {"strict": 0}, {}) is not strict  # another value's type
    assert _markers.settings_for(config, {}, {"strict": False}).strict is False  # a fixture's


def test_a_bad_marker_value_is_refused_every_time(request: pytest.FixtureRequest) -> None:
    for _ in range(2):
        with pytest.raises(ValueError, match="bad value"):
            _markers.settings_for(request.config, {"runs": "many"}, {})
