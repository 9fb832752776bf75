"""``-p no:opdecide`` turns the plugin off entirely: nothing imported, patched or registered."""

from __future__ import annotations

import pytest


def test_the_plugin_can_be_disabled(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_plain="""
        import socket
        import sys


        def test_nothing_of_the_plugin_is_loaded():
            assert not [name for name in sys.modules if name.startswith("pytest_opdecide")]
            # The guard did not patch sockets (the test suite's own network jail may have).
            assert not getattr(socket.socket.connect, "__opdecide_guard__", False)


        def test_no_fixture(request):
            assert "runtime" not in request.fixturenames
        """,
        test_fixture="""
        def test_runtime(runtime):
            pass
        """,
    )
    result = project.runpytest_subprocess("-p", "no:opdecide")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*fixture 'runtime' not found*"])
    assert "opdecide" not in "\n".join(line for line in result.outlines if "plugins:" in line)


def test_its_options_and_markers_are_gone(project: pytest.Pytester) -> None:
    result = project.runpytest("-p", "no:opdecide", "--help")
    assert "--opdecide-" not in result.stdout.str()
    result = project.runpytest("-p", "no:opdecide", "--markers")
    assert "opdecide" not in result.stdout.str()
    result = project.runpytest("-p", "no:opdecide", "--opdecide-seed=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert any("unrecognized arguments: --opdecide-seed=1" in line for line in result.errlines)
