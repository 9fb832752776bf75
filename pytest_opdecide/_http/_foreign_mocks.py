"""HTTP mocks that answer a request in place of the server, told from the error they raised.

pytest-httpx answers a request it has no response for with ``httpx.TimeoutException``, respx
with its own assertion errors: read as the server's failure, either would say "the model took
too long". The runtimes' and the question providers' error mappings ask :func:`interceptor`
first, and name the mock and the fix instead.
"""

from __future__ import annotations

__all__ = ["INTERCEPTORS", "interceptor"]

INTERCEPTORS = {
    "pytest_httpx": (
        "pytest-httpx's httpx_mock",
        "let the model's requests through, e.g. @pytest.mark.httpx_mock(should_mock=lambda "
        "request: request.url.host != '127.0.0.1') for a model server on this machine, or "
        "add a response for them",
    ),
    "respx": (
        "respx",
        "let the model's requests through with a pass-through route, e.g. "
        "respx.route(host='127.0.0.1').pass_through()",
    ),
}
"""HTTP mocking libraries that answer requests in place of the server: module -> (name, fix)."""


def interceptor(error: BaseException) -> tuple[str, str] | None:
    """The mocking library that raised ``error`` instead of a server answering, if any: the
    module of a frame of its traceback (a Python traceback object, walked as it is)."""
    tb = error.__traceback__
    while tb is not None:
        module = str(tb.tb_frame.f_globals.get("__name__", ""))
        found = INTERCEPTORS.get(module.split(".")[0])
        if found is not None:
            return found
        tb = tb.tb_next
    return None
