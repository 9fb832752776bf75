"""``Agent``, ``agent()`` and the context-variable binding of the enclosing call's runtime."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any, ClassVar

import pytest

from pytest_opdecide import (
    Agent,
    ModelReply,
    Runtime,
    ToolCall,
    agent,
    agent_async,
    current_runtime,
    decision,
    use_runtime,
)

from ._support import FixedRuntime, pick

NO_RUNTIME = "no runtime available — call this inside an Agent method, or pass runtime= explicitly."


class Probe(Agent):
    """Reports the runtime bound while its methods run."""

    def who(self) -> Runtime | None:
        return current_runtime()

    async def who_async(self) -> Runtime | None:
        await asyncio.sleep(0)
        return current_runtime()

    def route(self, msg: str) -> Any:
        return decision.make(f"Route: {msg}", {"done": "DONE", "more": "MORE"})

    def work(self, task: str, **kwargs: Any) -> Any:
        return agent(f"Do: {task}", **kwargs)


class Desk(Agent):
    """The reference page's example: a tool method, and methods as decision options."""

    method_options: ClassVar[dict[str, dict[str, Any]]] = {
        "lookup": {"tool": True},
        "handle": {"tool": True},
    }

    def __init__(self, runtime: Runtime | None = None) -> None:
        super().__init__(runtime)
        self.looked_up: list[tuple[str, Runtime | None]] = []

    def lookup(self, key: str) -> str:
        """Look a key up in the knowledge base."""
        self.looked_up.append((key, current_runtime()))
        return f"kb[{key}]"

    def handle(self, ticket: str) -> Any:
        """Read the ticket, look things up, then decide."""
        return agent(
            f"Handle this ticket: {ticket}",
            choices={"refund": self.refund, "close": {"status": "closed"}},
        )

    def refund(self, amount: float) -> dict[str, Any]:
        """Refund the customer."""
        return {"refunded": amount, "runtime": current_runtime()}

    def route(self) -> Any:
        return decision.make("Route it.", [self.lookup, self.refund])


class TestBinding:
    def test_method_call_binds_the_agents_runtime_for_its_duration(self) -> None:
        rt = FixedRuntime()
        probe = Probe(runtime=rt)
        assert probe.who() is rt
        assert current_runtime() is None

    def test_agent_without_runtime_uses_the_callers(self) -> None:
        rt = FixedRuntime()
        with use_runtime(rt):
            assert Probe().who() is rt
        assert Probe().who() is None

    def test_agents_own_runtime_beats_the_callers(self) -> None:
        own, callers = FixedRuntime(), FixedRuntime()
        with use_runtime(callers):
            assert Probe(runtime=own).who() is own

    def test_nested_agent_without_runtime_inherits_the_outer_method_runtime(self) -> None:
        rt = FixedRuntime()

        class Outer(Agent):
            def run(self) -> tuple[Any, Any, Any]:
                before = current_runtime()
                inner = Probe().who()
                inner_own = Probe(runtime=other).who()
                return before, inner, inner_own

        other = FixedRuntime()
        assert Outer(runtime=rt).run() == (rt, rt, other)

    def test_binding_is_restored_after_an_exception(self) -> None:
        class Failing(Agent):
            def fail(self) -> None:
                raise KeyError("boom")

        rt = FixedRuntime()
        with pytest.raises(KeyError):
            Failing(runtime=rt).fail()
        assert current_runtime() is None

    async def test_async_methods_bind_too(self) -> None:
        rt = FixedRuntime()
        assert await Probe(runtime=rt).who_async() is rt
        assert current_runtime() is None

    def test_decision_make_inside_a_method_needs_no_runtime(self) -> None:
        rt = FixedRuntime(pick("more"))
        assert Probe(runtime=rt).route("hi") == "MORE"
        assert rt.requests[0].prompt.startswith("Route: hi\n\n")

    def test_agent_inside_a_method_needs_no_runtime(self) -> None:
        rt = FixedRuntime("done it")
        assert Probe(runtime=rt).work("x") == "done it"

    def test_explicit_runtime_argument_beats_the_bound_one(self) -> None:
        bound, explicit = FixedRuntime(), FixedRuntime("from explicit")
        assert Probe(runtime=bound).work("x", runtime=explicit) == "from explicit"
        assert bound.requests == []

    def test_methods_keep_name_and_doc(self) -> None:
        assert Desk.lookup.__name__ == "lookup"
        assert Desk.lookup.__doc__ == "Look a key up in the knowledge base."

    def test_runtime_must_be_a_runtime(self) -> None:
        with pytest.raises(TypeError) as info:
            Probe(runtime="gpt")
        assert str(info.value) == (
            "Agent(runtime=...) got str 'gpt', which is not a runtime. A runtime makes the model "
            "calls; there are two ways to get one: subclass pytest_opdecide.Runtime and implement "
            "call_model(request), or pass any object with an exec(content=[...], **kwargs) method "
            "that returns the reply text (async: an async exec, exec_async or async_exec), which "
            "is wrapped with pytest_opdecide.as_runtime. A model name is not a runtime: build one "
            "that calls the model, e.g. OpenAICompatibleRuntime(base_url, model='gpt') from "
            "pytest_opdecide.runtimes."
        )

    def test_configured_runtime_is_used_whatever_its_truthiness(self) -> None:
        class Sized(FixedRuntime):
            def __len__(self) -> int:
                return len(self.replies)

        rt = Sized()
        assert Probe(runtime=rt).who() is rt

    def test_dunder_call_binds_too(self) -> None:
        class Router(Agent):
            def __call__(self, msg: str) -> Any:
                return decision.make(f"Route: {msg}", {"done": "DONE"})

        rt = FixedRuntime(pick("done"))
        assert Router(runtime=rt)("hi") == "DONE"

    def test_private_helpers_run_inside_the_public_methods_binding(self) -> None:
        class Helper(Agent):
            def run(self) -> Any:
                return self._inner()

            def _inner(self) -> Any:
                return current_runtime()

        rt = FixedRuntime()
        assert Helper(runtime=rt).run() is rt


@pytest.mark.usefixtures("outside_pytest")
class TestNoRuntime:
    def test_agent_outside_any_agent_call(self) -> None:
        with pytest.raises(RuntimeError) as info:
            agent("Do it.")
        assert str(info.value) == NO_RUNTIME
        assert type(info.value) is RuntimeError

    async def test_agent_async_outside_any_agent_call(self) -> None:
        with pytest.raises(RuntimeError) as info:
            await agent_async("Do it.")
        assert str(info.value) == NO_RUNTIME

    def test_inside_a_method_of_an_agent_without_runtime(self) -> None:
        with pytest.raises(RuntimeError) as info:
            Probe().work("x")
        assert str(info.value) == NO_RUNTIME
        with pytest.raises(RuntimeError) as info:
            Probe().route("x")
        assert str(info.value) == NO_RUNTIME


class TestMethodOptions:
    def test_tool_methods_are_offered_as_native_tools(self) -> None:
        rt = FixedRuntime(
            ModelReply(tool_calls=(ToolCall("lookup", {"key": "refund policy"}, "c1"),)),
            pick("close"),
        )
        desk = Desk(runtime=rt)
        assert desk.handle("broken toaster") == {"status": "closed"}
        assert rt.requests[0].tool_names == ["lookup", "handle"]
        assert desk.looked_up == [("refund policy", rt)]
        assert rt.requests[1].prompt == "kb[refund policy]"

    def test_tool_method_schema(self) -> None:
        rt = FixedRuntime("ok")
        desk = Desk(runtime=rt)

        class Caller(Agent):
            def go(self) -> Any:
                return agent("x")

        # The tool methods are those of the agent whose method is running.
        Caller(runtime=rt).go()
        assert rt.requests[0].tools == ()
        rt.replies.append(pick("close"))
        desk.handle("t")
        lookup_spec = rt.requests[1].tools[0]
        assert lookup_spec.name == "lookup"
        assert lookup_spec.description == "Look a key up in the knowledge base."
        assert lookup_spec.parameters == {
            "type": "object",
            "properties": {"key": {"type": "string"}},
            "required": ["key"],
        }

    def test_toolset_none_hides_the_tool_methods(self) -> None:
        rt = FixedRuntime("ok")

        class Quiet(Desk):
            def ask(self) -> Any:
                return agent("x", toolset="none")

        Quiet(runtime=rt).ask()
        assert rt.requests[0].tools == ()

    def test_methods_as_decision_options(self) -> None:
        rt = FixedRuntime(pick("refund", amount=5))
        desk = Desk(runtime=rt)
        assert desk.route() == {"refunded": 5.0, "runtime": rt}
        menu = rt.requests[0].menu
        assert menu == (
            "lookup(key: str)\n"
            "    Look a key up in the knowledge base.\n"
            "    key\n"
            '    Call: {"call": "lookup", "args": {"key": "<str>"}}\n'
            "\n"
            "refund(amount: float)\n"
            "    Refund the customer.\n"
            "    amount\n"
            '    Call: {"call": "refund", "args": {"amount": <float>}}\n'
        )

    def test_one_method_two_call_paths(self) -> None:
        rt = FixedRuntime(
            ModelReply(tool_calls=(ToolCall("lookup", {"key": "a"}, "c1"),)),
            "text",
            pick("lookup", key="b"),
        )
        desk = Desk(runtime=rt)
        assert rt.exec("x", tools=[desk.lookup]) == "text"
        assert decision.make("Pick.", [desk.lookup], runtime=rt) == "kb[b]"
        assert desk.looked_up == [("a", rt), ("b", rt)]

    def test_bound_method_as_option_is_the_chosen_function(self) -> None:
        desk = Desk(runtime=FixedRuntime())
        chosen, kwargs = decision.parse_args(pick("lookup", key="k"), [desk.lookup])
        assert chosen == desk.lookup
        assert kwargs == {"key": "k"}

    def test_unknown_method_option_key(self) -> None:
        with pytest.raises(TypeError, match=r"method_options\['go'\] has unknown keys \['tol'\]"):

            class Typo(Agent):
                method_options: ClassVar[dict[str, dict[str, Any]]] = {"go": {"tol": True}}

                def go(self) -> None:
                    pass

    def test_method_options_naming_no_method(self) -> None:
        with pytest.raises(TypeError, match="names 'missing', which is not a method"):

            class Missing(Agent):
                method_options: ClassVar[dict[str, dict[str, Any]]] = {"missing": {"tool": True}}


class TestIsolation:
    async def test_concurrent_asyncio_tasks_see_their_own_runtime(self) -> None:
        one, two = FixedRuntime(), FixedRuntime()
        both_inside = asyncio.Barrier(2)

        class Waiter(Agent):
            async def run(self) -> tuple[Any, Any]:
                before = current_runtime()
                await both_inside.wait()  # both calls are now bound at the same time
                await asyncio.sleep(0)
                return before, current_runtime()

        results = list(await asyncio.gather(Waiter(runtime=one).run(), Waiter(runtime=two).run()))
        assert results == [(one, one), (two, two)]
        assert current_runtime() is None

    async def test_tasks_under_use_runtime_do_not_leak(self) -> None:
        one, two = FixedRuntime(), FixedRuntime()
        both_inside = asyncio.Barrier(2)

        async def bound(rt: Runtime) -> Any:
            with use_runtime(rt):
                await both_inside.wait()
                return Probe().who()

        assert list(await asyncio.gather(bound(one), bound(two))) == [one, two]

    async def test_concurrent_decisions_in_tasks(self) -> None:
        one = FixedRuntime(pick("done"))
        two = FixedRuntime(pick("more"))
        both_inside = asyncio.Barrier(2)

        class Router(Agent):
            async def route(self) -> Any:
                await both_inside.wait()
                return await decision.make_async("Route.", {"done": "DONE", "more": "MORE"})

        routed = await asyncio.gather(Router(runtime=one).route(), Router(runtime=two).route())
        assert list(routed) == ["DONE", "MORE"]
        assert (len(one.requests), len(two.requests)) == (1, 1)

    def test_concurrent_threads_see_their_own_runtime(self) -> None:
        runtimes = [FixedRuntime() for _ in range(4)]
        barrier = threading.Barrier(len(runtimes))
        seen: dict[int, tuple[Any, Any]] = {}

        class Worker(Agent):
            def run(self, index: int) -> None:
                before = current_runtime()
                barrier.wait(timeout=10)  # every thread is inside its call now
                seen[index] = (before, current_runtime())

        threads = [
            threading.Thread(target=Worker(runtime=rt).run, args=(i,))
            for i, rt in enumerate(runtimes)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert seen == {i: (rt, rt) for i, rt in enumerate(runtimes)}

    def test_threads_making_decisions_concurrently(self) -> None:
        names = ["done", "more", "done", "more"]
        runtimes = [FixedRuntime(pick(n)) for n in names]
        barrier = threading.Barrier(len(runtimes))
        results: dict[int, Any] = {}

        class Router(Agent):
            def route(self, index: int) -> None:
                barrier.wait(timeout=10)
                results[index] = decision.make("Route.", {"done": "DONE", "more": "MORE"})

        threads = [
            threading.Thread(target=Router(runtime=rt).route, args=(i,))
            for i, rt in enumerate(runtimes)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == {0: "DONE", 1: "MORE", 2: "DONE", 3: "MORE"}
        assert all(len(rt.requests) == 1 for rt in runtimes)

    def test_a_new_thread_starts_unbound(self) -> None:
        rt = FixedRuntime()
        seen: list[Any] = []

        class Spawner(Agent):
            def spawn(self) -> None:
                t = threading.Thread(target=lambda: seen.append(current_runtime()))
                t.start()
                t.join()
                ctx = contextvars.copy_context()
                t = threading.Thread(target=ctx.run, args=(lambda: seen.append(current_runtime()),))
                t.start()
                t.join()

        Spawner(runtime=rt).spawn()
        assert seen == [None, rt]
