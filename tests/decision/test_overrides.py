"""Agents built with a runtime of their own, overridden; every kind of Agent method bound.

``use_runtime(rt, override=True)`` replaces the runtime of every Agent in its block (the test's
``runtime`` fixture does the same, see ``tests/plugin/test_agent_runtimes.py``); plain, async,
generator and async-generator methods all bind their runtime, for each resume.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from pytest_opdecide import Agent, Runtime, agent, current_runtime, decision, use_runtime

from ._support import FixedRuntime, pick


class Router(Agent):
    def route(self, msg: str) -> Any:
        return decision.make(f"Route: {msg}", {"done": "DONE", "more": "MORE"})

    def who(self) -> Runtime | None:
        return current_runtime()

    async def who_async(self) -> Runtime | None:
        await asyncio.sleep(0)
        return current_runtime()

    def steps(self) -> Iterator[Any]:
        yield current_runtime()
        yield current_runtime()

    async def steps_async(self) -> AsyncIterator[Any]:
        yield current_runtime()
        await asyncio.sleep(0)
        yield current_runtime()


class Planner(Agent):
    """Calls another Agent, built with a runtime of its own, from inside its method."""

    def __init__(self, router: Router, runtime: Any = None) -> None:
        super().__init__(runtime)
        self.router = router

    def plan(self) -> Any:
        return self.router.route("nested")


class TestOverride:
    def test_override_replaces_the_agents_own_runtime(self) -> None:
        own, test = FixedRuntime(pick("more")), FixedRuntime(pick("done"))
        router = Router(runtime=own)
        with use_runtime(test, override=True):
            assert router.route("hi") == "DONE"
        assert own.requests == []
        assert len(test.requests) == 1
        assert router.route("hi") == "MORE"  # the override ends with its block

    def test_plain_use_runtime_keeps_the_agents_own(self) -> None:
        own, other = FixedRuntime(pick("more")), FixedRuntime()
        with use_runtime(other):
            assert Router(runtime=own).route("hi") == "MORE"
        assert other.requests == []

    def test_override_reaches_agents_nested_in_other_agents(self) -> None:
        test = FixedRuntime(pick("done"))
        planner = Planner(Router(runtime=FixedRuntime()), runtime=FixedRuntime())
        with use_runtime(test, override=True):
            assert planner.plan() == "DONE"
        assert len(test.requests) == 1

    def test_a_plain_binding_inside_an_override_keeps_the_override(self) -> None:
        test, inner = FixedRuntime(), FixedRuntime()
        configured = Router(runtime=FixedRuntime())
        with use_runtime(test, override=True), use_runtime(inner):
            assert configured.who() is test
            assert Router().who() is inner  # an Agent without its own takes the nearest

    def test_every_method_kind_is_overridden(self) -> None:
        test = FixedRuntime()
        router = Router(runtime=FixedRuntime())
        with use_runtime(test, override=True):
            assert router.who() is test
            assert asyncio.run(router.who_async()) is test
            assert list(router.steps()) == [test, test]

            async def collect() -> list[Any]:
                return [item async for item in router.steps_async()]

            assert asyncio.run(collect()) == [test, test]

    def test_override_needs_a_runtime(self) -> None:
        with (
            pytest.raises(TypeError, match=r"use_runtime\(None, override=True\)"),
            use_runtime(None, override=True),
        ):
            pass
        with (
            pytest.raises(TypeError, match="must be True or False"),
            use_runtime(FixedRuntime(), override="yes"),  # type: ignore[arg-type]
        ):
            pass

    def test_override_is_per_thread(self) -> None:
        test, own = FixedRuntime(), FixedRuntime()
        router = Router(runtime=own)
        seen: dict[str, Any] = {}
        with use_runtime(test, override=True):
            fresh = threading.Thread(target=lambda: seen.update(fresh=router.who()))
            copied = contextvars.copy_context()
            carried = threading.Thread(
                target=lambda: copied.run(lambda: seen.update(c=router.who()))
            )
            for thread in (fresh, carried):
                thread.start()
                thread.join()
        assert seen == {"fresh": own, "c": test}

    def test_override_is_per_task(self) -> None:
        test, own = FixedRuntime(), FixedRuntime()
        router = Router(runtime=own)

        async def overridden() -> Any:
            with use_runtime(test, override=True):
                await asyncio.sleep(0)
                return await router.who_async()

        async def plain() -> Any:
            await asyncio.sleep(0)
            return await router.who_async()

        async def both() -> list[Any]:
            return list(await asyncio.gather(overridden(), plain(), overridden()))

        assert asyncio.run(both()) == [test, own, test]

    def test_explicit_runtime_argument_still_wins(self) -> None:
        test, given = FixedRuntime(), FixedRuntime("from given")
        with use_runtime(test, override=True):
            assert agent("Hi.", runtime=given) == "from given"
        assert test.requests == []


class TestGeneratorMethods:
    def test_a_generator_uses_its_agents_runtime(self) -> None:
        mine, callers = FixedRuntime(), FixedRuntime()
        router = Router(runtime=mine)
        with use_runtime(callers):
            assert list(router.steps()) == [mine, mine]

    def test_a_generator_resumed_after_the_callers_binding_changed(self) -> None:
        first, second = FixedRuntime(), FixedRuntime()
        router = Router()
        with use_runtime(first):
            steps = router.steps()
            assert next(steps) is first
        with use_runtime(second):
            assert next(steps) is first  # the runtime of the call, not of the resume
            assert current_runtime() is second
        assert current_runtime() is None

    def test_nothing_is_bound_while_a_generator_is_paused(self) -> None:
        router = Router(runtime=FixedRuntime())
        steps = router.steps()
        next(steps)
        assert current_runtime() is None
        steps.close()

    def test_send_throw_close_and_return_reach_the_method(self) -> None:
        seen: list[Any] = []

        class Echo(Agent):
            def talk(self) -> Iterator[Any]:
                try:
                    while True:
                        got = yield current_runtime()
                        seen.append(got)
                        if got == "stop":
                            return "done"
                except KeyError as error:
                    seen.append(("thrown", error.args, current_runtime()))
                    yield "after throw"
                finally:
                    seen.append(("closed", current_runtime()))

        mine = FixedRuntime()
        talk = Echo(runtime=mine).talk()
        assert next(talk) is mine
        assert talk.send("a") is mine
        with pytest.raises(StopIteration) as stop:
            talk.send("stop")
        assert stop.value.value == "done"
        assert seen == ["a", "stop", ("closed", mine)]
        seen.clear()
        other = Echo(runtime=mine).talk()
        next(other)
        assert other.throw(KeyError("k")) == "after throw"
        other.close()
        assert seen == [("thrown", ("k",), mine), ("closed", mine)]

    def test_an_async_generator_resumed_after_the_callers_binding_changed(self) -> None:
        first, second = FixedRuntime(), FixedRuntime()
        router = Router()

        async def run() -> list[Any]:
            with use_runtime(first):
                steps = router.steps_async()
                got = [await anext(steps)]
            with use_runtime(second):
                got.append(await anext(steps))
                assert current_runtime() is second
            await steps.aclose()
            return got

        assert asyncio.run(run()) == [first, first]

    def test_a_generator_makes_its_decisions_on_its_agents_runtime(self) -> None:
        class Stepper(Agent):
            def decide_twice(self) -> Iterator[Any]:
                yield decision.make("One.", ["a", "b"])
                yield decision.make("Two.", ["a", "b"])

        mine = FixedRuntime(pick("a"), pick("b"))
        with use_runtime(FixedRuntime()):
            assert list(Stepper(runtime=mine).decide_twice()) == ["a", "b"]
        assert len(mine.requests) == 2
