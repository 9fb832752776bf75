"""What issue 20 adds to a scripted test costs nothing measurable (each figure against a
baseline measured in the same run, rounds alternated so both see the same machine load):

- **Override**: a decision through an Agent built with a runtime of its own, under the
  override the ``runtime`` fixture sets (``bind_runtime(fake, override=True)``), against the
  same decision through an Agent without one under a plain binding (the path every scripted
  test took before). Target: at most 1.10 times the baseline.
- **Tool turn**: a scripted ``agent(tools=..., choices=...)`` turn (a fresh ``ScriptedRuntime``
  per turn, as per test: one tool call, then the closing pick) with tool failures reported back
  to the model (the default), against the same turn with ``tool_errors="raise"``. Target: at
  most 1.10 times the baseline.
- **Seeded tool calls**: the same turn through ``SeededRuntime`` (which now calls the offered
  tool with generated arguments first), against the scripted turn: reported, not a target a
  scripted test pays (its runtime is not seeded), at most 5 times.
"""

from __future__ import annotations

from typing import Any

from benchmarks import Measurement, median_seconds
from fake_runtimes import ScriptedRuntime, SeededRuntime, pick, tool_call
from pytest_opdecide import Agent, ModelReply, ModelRequest, Runtime, agent, decision
from pytest_opdecide._nextstep._binding import bind_runtime

OPTIONS: dict[str, Any] = {"refund": "REFUNDED", "close": "CLOSED", "escalate": "ESCALATED"}
REPLY = ModelReply(text='{"call": "close"}')


class FixedRuntime(Runtime):
    def call_model(self, request: ModelRequest) -> ModelReply:
        return REPLY


class Router(Agent):
    def route(self) -> Any:
        return decision.make("Route the ticket.", OPTIONS)


def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return "shipped"


def _middle(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def _turn(tool_errors: Any) -> Any:
    fake = ScriptedRuntime(tool_call("lookup_order", order_id="A1"), pick("close"))
    return agent(
        "Handle it.", tools=[lookup_order], choices=OPTIONS, runtime=fake, tool_errors=tool_errors
    )


def _seeded() -> Any:
    return agent("Handle it.", tools=[lookup_order], choices=OPTIONS, runtime=SeededRuntime(1))


def run() -> list[Measurement]:
    fake = FixedRuntime()
    configured = Router(runtime=FixedRuntime())
    plain = Router()

    def overridden() -> Any:
        with bind_runtime(fake, override=True):
            return configured.route()

    def baseline() -> Any:
        with bind_runtime(fake):
            return plain.route()

    assert overridden() == baseline() == "CLOSED"
    assert _turn("report") == _turn("raise") == "CLOSED"
    assert _seeded() in OPTIONS.values()
    over, base = [], []
    for _ in range(5):
        fake.trace.clear()
        over.append(median_seconds(overridden, repeat=3, number=1000))
        fake.trace.clear()
        base.append(median_seconds(baseline, repeat=3, number=1000))
    reported, raised, seeded = [], [], []
    for _ in range(5):
        reported.append(median_seconds(lambda: _turn("report"), repeat=3, number=200))
        raised.append(median_seconds(lambda: _turn("raise"), repeat=3, number=200))
        seeded.append(median_seconds(_seeded, repeat=3, number=200))
    o, b = _middle(over), _middle(base)
    r, x, s = _middle(reported), _middle(raised), _middle(seeded)
    return [
        Measurement(
            "decision via an Agent with its own runtime, overridden / plain binding",
            o / b,
            "x",
            1.10,
            baseline=1.0,
            note=f"overridden {o * 1e6:.2f} µs, plain {b * 1e6:.2f} µs (same run)",
        ),
        Measurement(
            "scripted tool turn, tool errors reported / tool_errors='raise'",
            r / x,
            "x",
            1.10,
            baseline=1.0,
            note=f"reported {r * 1e6:.2f} µs, raise {x * 1e6:.2f} µs (same run)",
        ),
        Measurement(
            "seeded tool turn (tool called first) / scripted tool turn",
            s / r,
            "x",
            5.0,
            baseline=1.0,
            note=f"seeded {s * 1e6:.2f} µs, scripted {r * 1e6:.2f} µs (same run)",
        ),
    ]
