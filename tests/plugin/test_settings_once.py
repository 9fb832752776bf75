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


def test_the_one_walk_over_a_tests_markers_finds_what_iter_markers_finds(
    project: pytest.Pytester,
) -> None:
    # marks_of replaces iter_markers on every test's path: the same marks, closest first,
    # from the function, its class, its module and a conftest hook, and the live mark.
    project.makeconftest(
        """
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        if "hooked" in item.name:
            item.add_marker(pytest.mark.opdecide(strict=False, seed=9))
"""
    )
    project.makepyfile(
        test_marks="""
import pytest
from pytest_opdecide.plugin._markers import marks_of

pytestmark = [pytest.mark.opdecide(seed=1), pytest.mark.filterwarnings("default")]


def check(request):
    ours, live = marks_of(request.node)
    assert ours == list(request.node.iter_markers("opdecide"))
    assert live == (request.node.get_closest_marker("opdecide_live") is not None)
    return ours, live


@pytest.mark.opdecide(seed=3)
class TestGrouped:
    @pytest.mark.opdecide(seed=4)
    @pytest.mark.opdecide(strict=True)
    def test_closest_first(self, request):
        ours, live = check(request)
        assert [m.kwargs for m in ours] == [{"strict": True}, {"seed": 4}, {"seed": 3}, {"seed": 1}]
        assert not live

    def test_hooked(self, request):
        ours, _ = check(request)
        assert ours[0].kwargs == {"strict": False, "seed": 9}


def test_module_only(request):
    ours, _ = check(request)
    assert [m.kwargs for m in ours] == [{"seed": 1}]


@pytest.mark.opdecide_live
def test_live(request):
    assert check(request)[1]
"""
    )
    result = project.runpytest("--opdecide-live")
    result.assert_outcomes(passed=4)
