"""pytest-recording and pytest-opdecide loaded together: no clash of options, markers, fixtures.

Skipped where pytest-recording is not installed.
"""

from __future__ import annotations

import pytest

from pytest_opdecide.plugin._settings import SETTINGS

pytest.importorskip("pytest_recording")


def test_both_plugins_load_with_their_own_options(project: pytest.Pytester) -> None:
    config = project.parseconfigure("--record-mode=none", "--opdecide-record=once")
    names = {name for name, _ in config.pluginmanager.list_name_plugin()}
    assert {"opdecide", "recording"} <= names
    assert config.getoption("record_mode") == "none"
    assert config.getoption("opdecide_record") == "once"
    options = [
        option
        for group in config._parser._groups  # every option of every group, plugins' included
        for option in group.options
    ]
    ours = [option for option in options if option.names()[0].startswith("--opdecide-")]
    assert len(ours) == len([setting for setting in SETTINGS if setting.cli])
    dests = [option.dest for option in options]
    flags = [name for option in options for name in option.names()]
    for option in ours:
        assert dests.count(option.dest) == 1, option.dest
        assert option.dest.startswith("opdecide_")
        assert all(flags.count(name) == 1 for name in option.names())
    markers = [line.split("(")[0].split(":")[0] for line in config.getini("markers")]
    assert {"vcr", "opdecide", "opdecide_live"} <= set(markers)
    assert len(markers) == len(set(markers))


def test_tests_use_both_plugins(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest
        from fake_runtimes import pick
        from pytest_opdecide import decision


        @pytest.mark.vcr
        @pytest.mark.opdecide(script=[pick("close")])
        def test_both_markers(runtime, vcr, vcr_config):
            assert decision.make("Route.", {"refund": "R", "close": "C"}) == "C"
            assert vcr_config == {}


        @pytest.mark.opdecide(seed=3)
        def test_ours(opdecide_settings, record_mode):
            assert opdecide_settings.record == "once"
            assert record_mode == "none"
        """
    )
    result = project.runpytest("--record-mode=none", "--opdecide-record=once")
    result.assert_outcomes(passed=2)


def test_block_network_and_the_guard_together(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import socket

        import pytest
        from pytest_opdecide.plugin._guard import RealCallBlocked


        def test_blocked():
            with socket.socket() as sock, pytest.raises((RealCallBlocked, RuntimeError)):
                sock.connect(("192.0.2.1", 80))
        """
    )
    project.runpytest_subprocess("--block-network").assert_outcomes(passed=1)
