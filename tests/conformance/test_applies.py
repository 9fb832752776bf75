"""A check that does not apply to a provider is skipped, whether the provider is correct or not:
a bug shows in the checks about it, not in every check."""

from __future__ import annotations

import importlib.util

import pytest

from pytest_opdecide import conformance

PRELOADED = conformance.DecisionProviderTests

PYTEST_ARGS = ["-p", "no:cacheprovider", "-rs"]
if importlib.util.find_spec("pytest_asyncio") is not None:
    PYTEST_ARGS += ["-o", "asyncio_default_fixture_loop_scope=function"]

#: Checks about what a provider sends its backend: a provider that sends nothing skips them.
ABOUT_THE_BACKEND = (
    "test_requests_go_through_the_transport_override",
    "test_structure_reaches_the_backend_intact",
    "test_the_requested_model_is_sent",
    "test_usage_is_never_invented",
    "test_no_credential_is_sent_that_the_config_does_not_hold",
)


@pytest.mark.parametrize("needs_backend", ["None", "False"])
def test_a_broken_provider_that_sends_nothing_fails_only_the_checks_about_its_answers(
    pytester: pytest.Pytester, needs_backend: str
) -> None:
    pytester.makepyfile(
        test_local=f"""
        from fake_runtimes import FakeDecisionProvider
        from pytest_opdecide.conformance import DecisionProviderTests


        class Broken(FakeDecisionProvider):
            async def decide_validated(self, request):
                raise RuntimeError("a bug in the provider")


        class TestBroken(DecisionProviderTests):
            provider_factory = staticmethod(lambda config: Broken())
            needs_backend = {needs_backend}
        """
    )
    recorder = pytester.inline_run(*PYTEST_ARGS, "-k", " or ".join([*ABOUT_THE_BACKEND, "choice"]))
    outcomes = {
        report.nodeid.split("::")[-1]: report.outcome
        for report in recorder.getreports("pytest_runtest_logreport")
        if report.when == "call" or report.outcome != "passed"
    }
    assert outcomes["test_choice_answers"] == "failed"
    for check in ABOUT_THE_BACKEND:
        assert outcomes[check] == "skipped", (check, outcomes)
    reasons = [
        str(report.longrepr)
        for report in recorder.getreports("pytest_runtest_logreport")
        if report.skipped
    ]
    expected = (
        "decide() raised RuntimeError before sending anything, so there is nothing to check "
        "here (the checks of the answers report it)"
        if needs_backend == "None"
        else "needs_backend = False: the provider makes no backend call to check"
    )
    assert any(expected in reason for reason in reasons), reasons


def test_a_documented_model_mapping_is_followed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_mapped="""
        from conformance.broken_providers import HonestProvider
        from pytest_opdecide.conformance import DecisionProviderTests


        class Mapped(HonestProvider):
            sent_models = {"conformance-model": "house-model-v3"}

            def model_for(self, request):
                return self.sent_models.get(request.model, request.model)


        class Unmapped(Mapped):
            sent_models = {}

            def model_for(self, request):
                return "house-model-v3"


        class TestMapped(DecisionProviderTests):
            provider_factory = Mapped


        class TestUnmapped(DecisionProviderTests):
            provider_factory = Unmapped
        """
    )
    recorder = pytester.inline_run(*PYTEST_ARGS, "-k", "requested_model")
    outcomes = {
        report.nodeid.split("::")[-2]: (report.outcome, report.longreprtext)
        for report in recorder.getreports("pytest_runtest_logreport")
        if report.when == "call"
    }
    assert outcomes["TestMapped"][0] == "passed"
    assert outcomes["TestUnmapped"][0] == "failed"
    assert (
        "model.requested: the request asked for model 'conformance-model', but the provider sent "
        "'house-model-v3' to the backend instead of 'conformance-model'"
    ) in outcomes["TestUnmapped"][1]
