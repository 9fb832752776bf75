"""The guard stops the official ``openai`` client, which sends through ``httpx2``.

``openai`` wraps only its HTTP stack's errors (in ``APIConnectionError``, after retries): the
guard's ``RealCallBlocked`` reaches the test as it is, at once. It is raised before the host
name is looked up: under the suite's network jail, a lookup fails with the jail's error, which
``openai`` does wrap, as the last test shows.
"""

from __future__ import annotations

import pytest


def test_the_guard_stops_an_openai_client_in_a_guarded_test(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_openai="""
        import openai
        import pytest

        from pytest_opdecide import RealCallBlocked

        pytestmark = pytest.mark.opdecide()
        MESSAGES = [{"role": "user", "content": "Hello?"}]


        def blocked(test):
            return pytest.raises(
                RealCallBlocked,
                match=(
                    "^pytest-opdecide blocked a real call to "
                    f"https://api.example.com/v1/chat/completions in test_openai.py::{test}: "
                ),
            )


        def client():
            return openai.OpenAI(base_url="https://api.example.com/v1", api_key="sk-test")


        def test_sync():
            with blocked("test_sync"):
                client().chat.completions.create(model="m", messages=MESSAGES)


        def test_streamed():
            with blocked("test_streamed"):
                client().chat.completions.create(model="m", messages=MESSAGES, stream=True)


        async def test_async():
            async_client = openai.AsyncOpenAI(
                base_url="https://api.example.com/v1", api_key="sk-test"
            )
            async with async_client:
                with blocked("test_async"):
                    await async_client.chat.completions.create(model="m", messages=MESSAGES)


        async def test_async_streamed():
            async with openai.AsyncOpenAI(
                base_url="https://api.example.com/v1", api_key="sk-test"
            ) as async_client:
                with blocked("test_async_streamed"):
                    await async_client.chat.completions.create(
                        model="m", messages=MESSAGES, stream=True
                    )


        @pytest.mark.opdecide(guard=False)
        def test_allowed_it_reaches_the_network():
            no_retries = openai.OpenAI(
                base_url="https://api.example.com/v1", api_key="sk-test", max_retries=0
            )
            with pytest.raises(openai.APIConnectionError) as caught:
                no_retries.chat.completions.create(model="m", messages=MESSAGES)
            assert "network jail" in str(caught.value.__cause__)
        """
    )
    project.runpytest_subprocess().assert_outcomes(passed=5)
