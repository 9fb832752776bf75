"""The fixtures ``runtime``, ``opdecide_config`` and ``opdecide_settings``, run as users run them.

``decision_provider`` has its own module; ``menu_snapshot`` is in ``test_snapshots.py``.
"""

from __future__ import annotations

import pytest


def test_runtime_replies_with_the_markers_script(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest
        from fake_runtimes import ScriptedRuntime, pick
        from pytest_opdecide import decision


        def issue_refund(amount: int) -> str:
            return f"refunded {amount}"


        @pytest.mark.opdecide(script=[pick("refund", amount=30)])
        def test_router_refunds(runtime):
            assert isinstance(runtime, ScriptedRuntime)
            options = {"refund": issue_refund, "close": "CLOSED"}
            assert decision.make("Route this.", options, runtime=runtime) == "refunded 30"
            assert runtime.last_call.options == ["refund", "close"]
            assert runtime.remaining == []


        @pytest.mark.opdecide(script=["first", "second"])
        def test_steps_in_order(runtime):
            assert runtime.exec("one") == "first"
            assert runtime.exec("two") == "second"
            assert [call.prompt for call in runtime.calls] == ["one", "two"]
        """
    )
    project.runpytest().assert_outcomes(passed=2)


def test_runtime_is_bound_for_the_test(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest
        from fake_runtimes import pick
        from pytest_opdecide import Agent, agent, current_runtime, decision


        class Router(Agent):
            def route(self, message: str) -> str:
                return decision.make(f"Route: {message}", {"refund": "R", "close": "C"})

            def summary(self) -> str:
                return agent("Summarise the ticket.")


        @pytest.mark.opdecide(script=[pick("close"), "A short summary."])
        def test_agent_methods_use_the_fixture(runtime):
            router = Router()
            assert router.route("thanks, all good") == "C"
            assert router.summary() == "A short summary."
            assert len(runtime.calls) == 2


        @pytest.mark.opdecide(script=["plain reply", pick("decided")])
        def test_agent_and_decision_without_a_runtime(runtime):
            assert current_runtime() is runtime
            assert agent("Hello?") == "plain reply"
            assert decision.make("Pick.", ["decided", "other"]) == "decided"


        def test_no_runtime_outside_the_fixture():
            assert current_runtime() is None
            with pytest.raises(RuntimeError, match="no runtime available"):
                agent("Hello?")
        """
    )
    project.runpytest().assert_outcomes(passed=3)


def test_every_test_gets_a_fresh_runtime(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest

        seen = []


        @pytest.mark.parametrize("round", [1, 2])
        @pytest.mark.opdecide(script=["hi"])
        def test_fresh(runtime, round):
            assert runtime.calls == []
            assert runtime not in seen
            seen.append(runtime)
            runtime.exec("hello")
        """
    )
    project.runpytest().assert_outcomes(passed=2)


def test_runtime_without_a_script_is_empty_and_strict(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest
        from fake_runtimes import ScriptExhausted


        def test_empty(runtime):
            assert runtime.steps == []
            assert runtime.strict is True
            with pytest.raises(ScriptExhausted):
                runtime.exec("Anyone there?")
        """
    )
    project.runpytest().assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (
            '"pick refund"',
            "@pytest.mark.opdecide(script=...) must be a list of steps, got str",
        ),
        ("{'refund': 1}", "@pytest.mark.opdecide(script=...) must be a list of steps, got dict"),
        (
            "[pick('refund'), 42]",
            "@pytest.mark.opdecide(script=...): step 1 is int 42: a step is a reply string, "
            "pick(...), tool_call(...) (or a list of them), error(...), a ModelReply, or a "
            "callable that builds one of those from the call",
        ),
    ],
    ids=["string", "dict", "bad-step"],
)
def test_a_bad_script_fails_the_test_with_the_reason(
    project: pytest.Pytester, script: str, message: str
) -> None:
    project.makepyfile(
        f"""
        import pytest
        from fake_runtimes import pick


        @pytest.mark.opdecide(script={script})
        def test_bad(runtime):
            pass
        """
    )
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    assert message in result.stdout.str().replace("\n", " ")


def test_opdecide_settings_holds_the_defaults(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        from pytest_opdecide.plugin._settings import DEFAULT_BASE_URL, Settings


        def test_defaults(opdecide_settings):
            assert opdecide_settings == Settings(
                seed=0,
                strict=True,
                guard=True,
                guard_all=False,
                allow_hosts=(),
                record="none",
                live=False,
                override_runtimes=True,
                cassette_dir="cassettes",
                base_url=DEFAULT_BASE_URL,
                model="smollm2-135m-instruct",
                structured_decisions="auto",
                allow_unused=False,
                volatile=(),
                scrub_fields=(),
                update_snapshots=False,
                snapshot_dir="__menus__",
                runs=1,
                min_pass_rate=1.0,
                report=None,
            )
        """
    )
    project.runpytest().assert_outcomes(passed=1)


def test_base_url_defaults_to_the_environment(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPDECIDE_LIVE_URL", "http://127.0.0.1:9999/v1")
    project.makepyfile(
        """
        def test_url(opdecide_settings):
            assert opdecide_settings.base_url == "http://127.0.0.1:9999/v1"
        """
    )
    project.runpytest().assert_outcomes(passed=1)


def test_opdecide_config_sets_project_defaults(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        import pytest


        @pytest.fixture
        def opdecide_config():
            return {"seed": 7, "strict": False, "model": "house-model"}
        """
    )
    project.makepyfile(
        """
        import pytest


        def test_project_defaults(opdecide_settings, runtime):
            assert opdecide_settings.seed == 7
            assert opdecide_settings.model == "house-model"
            assert runtime.strict is False


        @pytest.mark.opdecide(seed=8)
        def test_a_marker_beats_them(opdecide_settings):
            assert opdecide_settings.seed == 8
            assert opdecide_settings.model == "house-model"
        """
    )
    project.runpytest().assert_outcomes(passed=2)


def test_opdecide_config_can_differ_per_directory(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        import pytest


        @pytest.fixture
        def opdecide_config():
            return {"seed": 1}
        """
    )
    project.mkdir("slow")
    (project.path / "slow" / "conftest.py").write_text(
        "import pytest\n\n\n"
        "@pytest.fixture\n"
        "def opdecide_config(opdecide_config):\n"
        "    return {**opdecide_config, 'seed': 2, 'model': 'big'}\n"
    )
    (project.path / "slow" / "test_slow.py").write_text(
        "def test_slow(opdecide_settings):\n"
        "    assert (opdecide_settings.seed, opdecide_settings.model) == (2, 'big')\n"
    )
    project.makepyfile(
        test_fast="""
        def test_fast(opdecide_settings):
            assert opdecide_settings.seed == 1
        """
    )
    project.runpytest().assert_outcomes(passed=2)


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ("['seed', 1]", "the opdecide_config fixture must return a dict, got list"),
        (
            "{'sead': 1}",
            "opdecide_config fixture returned unknown settings ['sead']; known: ['allow_unused', "
            "'base_url', 'cassette_dir', 'guard', 'live', 'model', 'override_runtimes', 'record', "
            "'scrub_fields', 'seed', 'snapshot_dir', 'strict', 'structured_decisions', "
            "'volatile']",
        ),
        (
            "{'update_snapshots': True}",
            "opdecide_config fixture returned unknown settings ['update_snapshots']",
        ),
        ("{'seed': 'many'}", "bad value for opdecide_config()['seed']: expected a whole number"),
    ],
    ids=["not-a-dict", "unknown-key", "command-line-only", "bad-value"],
)
def test_a_bad_opdecide_config_fails_the_tests_using_it(
    project: pytest.Pytester, returned: str, message: str
) -> None:
    project.makeconftest(
        f"""
        import pytest


        @pytest.fixture
        def opdecide_config():
            return {returned}
        """
    )
    project.makepyfile(
        """
        def test_uses_it(runtime):
            pass


        def test_does_not():
            pass
        """
    )
    result = project.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    assert message in result.stdout.str().replace("\n", " ")


def test_runs_inside_a_test_share_the_binding(project: pytest.Pytester) -> None:
    # A suite that runs pytest in-process inside its tests (pytester, like the docs harness): each
    # inner run drops the modules it imported, while the package keeps handing out the Agent
    # class of the first run. The fixture must bind the runtime where that class looks.
    project.makeconftest('pytest_plugins = ["pytester"]\n')
    project.makepyfile(
        test_outer='''
        INNER = """
        import pytest
        from fake_runtimes import pick
        from pytest_opdecide import Agent, decision


        class Router(Agent):
            def route(self):
                return decision.make("Route.", {"refund": "R", "close": "C"})


        @pytest.mark.opdecide(script=[pick("close")])
        def test_inner(runtime):
            assert Router().route() == "C"
        """


        def test_two_runs(pytester):
            for name in ("test_first", "test_second"):
                pytester.makepyfile(**{name: INNER})
                result = pytester.runpytest(
                    name + ".py", "-o", "asyncio_default_fixture_loop_scope=function"
                )
                result.assert_outcomes(passed=1)
        '''
    )
    project.runpytest_subprocess().assert_outcomes(passed=1)
