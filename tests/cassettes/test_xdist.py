"""Recording under pytest-xdist: each worker writes its own tests' cassettes, whole."""

from __future__ import annotations

import pytest
from _openai_server import OpenAIServer

from ._support import cassette, dedent, interactions

TESTS = dedent(
    """
    import time

    import pytest
    from pytest_opdecide import decision

    OPTIONS = {"alpha": "A", "beta": "B"}

    @pytest.mark.opdecide(cassette=True)
    @pytest.mark.parametrize("ticket", ["one", "two"])
    def test_ticket(runtime, ticket):
        for step in range(3):
            assert decision.make(f"Ticket {ticket}, step {step}.", OPTIONS) == "A"
            time.sleep(0.05)  # let the other worker record at the same time
    """
)


def test_two_workers_record_in_parallel(project: pytest.Pytester, server: OpenAIServer) -> None:
    project.makepyfile(test_parallel=TESTS)
    result = project.runpytest_subprocess("-n", "2", "--opdecide-record=once", "-v")
    result.assert_outcomes(passed=2)
    workers = {line.split()[0] for line in result.outlines if "PASSED test_parallel" in line}
    assert workers == {"[gw0]", "[gw1]"}
    assert len(server.completions) == 6
    for ticket in ("one", "two"):
        path = cassette(project, "test_parallel", "test_ticket")
        folder = path.parent
        (found,) = [p for p in folder.iterdir() if f"-{ticket}-" in p.name]
        prompts = [
            i["request"]["body"]["json"]["messages"][0]["content"] for i in interactions(found)
        ]
        assert [p.split("\n")[0] for p in prompts] == [
            f"Ticket {ticket}, step {i}." for i in range(3)
        ]
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    # ...and they replay in parallel too, with no server.
    server.stop()
    project.runpytest_subprocess("-n", "2").assert_outcomes(passed=2)


SAME_NAME = dedent(
    """
    import time

    import pytest
    from pytest_opdecide import decision

    OPTIONS = {"alpha": "A", "beta": "B"}

    @pytest.mark.opdecide(cassette=True)
    @pytest.mark.parametrize("ticket", range(4))
    def test_ticket(runtime, ticket):
        assert decision.make(f"{FOLDER} ticket {ticket}.", OPTIONS) == "A"
        time.sleep(0.05)  # let the other workers record at the same time
    """
)


def test_same_named_modules_never_share_a_cassette_under_four_workers(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    """``orders/test_flow.py`` and ``refunds/test_flow.py`` hold tests of the same names: under
    ``-n 4`` each test writes a file of its own, and replays it."""
    folders = ("orders", "refunds")
    for folder in folders:
        (project.path / folder).mkdir()
        (project.path / folder / "__init__.py").write_text("", encoding="utf-8")
        (project.path / folder / "test_flow.py").write_text(
            SAME_NAME.replace("{FOLDER}", folder), encoding="utf-8"
        )
    result = project.runpytest_subprocess("-n", "4", "--opdecide-record=once", "-v")
    result.assert_outcomes(passed=8)
    workers = {line.split()[0] for line in result.outlines if " PASSED " in line}
    assert len(workers) > 1, workers  # the two modules really ran side by side
    assert len(server.completions) == 8
    written = sorted(p.relative_to(project.path) for p in project.path.rglob("*.yaml"))
    assert len(written) == 8
    for path in written:
        folder, module = path.parts[1], path.parts[2]
        assert (folder, module) in {("orders", "test_flow"), ("refunds", "test_flow")}
        ticket = path.stem.split("-")[1]
        (interaction,) = interactions(project.path / path)
        prompt = interaction["request"]["body"]["json"]["messages"][0]["content"]
        assert prompt.startswith(f"{folder} ticket {ticket}."), (path, prompt)
    # ...and each replays its own, in parallel, with no server.
    server.stop()
    project.runpytest_subprocess("-n", "4", "-v").assert_outcomes(passed=8)
