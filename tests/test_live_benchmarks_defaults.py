"""The live benchmarks measure what users get: the runtime's and the provider's defaults, or
they say where they do not."""

from __future__ import annotations

import pytest
from _openai_server import OpenAIServer

from benchmarks import label_mass, live_decisions
from pytest_opdecide.questions import OpenAICompatibleDecisionProvider


def test_label_mass_builds_the_provider_as_a_user_does() -> None:
    provider, changed = label_mass.provider_for(label_mass.arguments().parse_args([]))
    default = OpenAICompatibleDecisionProvider()
    assert changed == []
    assert provider.timeout == default.timeout == 60_000
    assert provider.tokenizer is None
    assert provider.examples == default.examples


def test_label_mass_says_what_it_changes() -> None:
    args = label_mass.arguments().parse_args(["--timeout-ms", "300000", "--tokenizer-auto"])
    provider, changed = label_mass.provider_for(args)
    assert provider.timeout == 300_000
    assert changed == ["timeout=300000.0", "tokenizer='auto'"]


def test_live_decisions_runs_with_the_runtimes_default_timeout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with OpenAIServer() as server:
        name = live_decisions.PROMPTS[0].name
        argv = ["--base-url", server.url, "--only", name, "--modes", "text"]
        assert live_decisions.main(argv) == 0
        assert live_decisions.main([*argv, "--timeout", "300"]) == 0
    out = capsys.readouterr().out
    assert "timeout 60.0 s (the runtime's default)" in out
    assert "timeout 300.0 s (--timeout)" in out
