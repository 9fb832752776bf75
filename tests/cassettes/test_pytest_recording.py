"""pytest-recording installed in the same environment: no clash of options or markers."""

from __future__ import annotations

import re

import pytest
from _openai_server import OpenAIServer

from ._support import cassette, dedent

pytest.importorskip("pytest_recording")


def test_both_plugins_are_loaded_with_their_own_options(project: pytest.Pytester) -> None:
    result = project.runpytest("--help")
    assert result.ret == 0
    text = result.stdout.str()
    assert "--record-mode=" in text  # pytest-recording's
    assert "--block-network" in text
    assert "--opdecide-record=" in text  # ours
    ours = set(re.findall(r"--opdecide-[a-z-]+", text))
    assert "--opdecide-live" in ours
    theirs = {"--record-mode", "--block-network", "--allowed-hosts", "--disable-recording"}
    assert not ours & theirs

    markers = project.runpytest("--markers").stdout.str()
    assert "@pytest.mark.vcr" in markers
    assert "@pytest.mark.opdecide(" in markers


def test_both_markers_in_one_run(project: pytest.Pytester, server: OpenAIServer) -> None:
    project.makepyfile(
        test_both=dedent(
            f"""
            import httpx
            import pytest
            from pytest_opdecide import decision

            @pytest.mark.opdecide(cassette=True)
            def test_ours(runtime):
                assert decision.make("Pick.", {{"alpha": "A", "beta": "B"}}) == "A"

            @pytest.mark.vcr
            def test_theirs():
                with httpx.Client() as client:
                    assert client.get("{server.url}/models").status_code == 200
            """
        )
    )
    # Each plugin's record mode comes from its own option.
    project.runpytest("--opdecide-record=once", "--record-mode=once").assert_outcomes(passed=2)
    assert cassette(project, "test_both", "test_ours").is_file()
    theirs = project.path / "cassettes" / "test_both" / "test_theirs.yaml"
    assert theirs.is_file()  # pytest-recording's default place, next to ours: no collision
    assert "opdecide" not in theirs.read_text()
    server.stop()
    project.runpytest().assert_outcomes(passed=2)  # both replay, each from its own file
    project.runpytest("--block-network").assert_outcomes(passed=2)
