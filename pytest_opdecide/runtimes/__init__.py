"""Real runtimes: model calls over the network.

:class:`OpenAICompatibleRuntime` speaks the OpenAI chat-completions protocol (OpenAI, llama.cpp,
llama-cpp-python, vLLM, Ollama...), sync and async, with native tool calls and streamed replies.
Its failures raise the :class:`RuntimeCallError` tree (drawn in ``_errors.py``).
"""

from pytest_opdecide.runtimes._openai_runtime import OpenAICompatibleRuntime
from pytest_opdecide.runtimes._runtime_errors import (
    AuthenticationError,
    BadRequestError,
    CallTimeoutError,
    ConnectionFailedError,
    MalformedResponseError,
    NotFoundError,
    RateLimitError,
    ResponseStatusError,
    RuntimeCallError,
    ServerError,
)

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "CallTimeoutError",
    "ConnectionFailedError",
    "MalformedResponseError",
    "NotFoundError",
    "OpenAICompatibleRuntime",
    "RateLimitError",
    "ResponseStatusError",
    "RuntimeCallError",
    "ServerError",
]
