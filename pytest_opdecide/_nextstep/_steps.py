"""The requests a decision procedure yields to its driver (sans-IO).

The decision procedures and the tool loop are generators: they yield a :class:`ModelStep` when
they need a model reply and an :class:`InvokeStep` when they need a function run, and receive
the result. One sync and one async driver run them, so the logic exists once for both APIs.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from pytest_opdecide._nextstep._messages import ModelRequest

__all__ = ["InvokeStep", "ModelStep", "Procedure", "Raised", "Step"]

T = TypeVar("T")


@dataclass(slots=True)
class ModelStep:
    """Make one model call; the driver sends back its :class:`~pytest_opdecide.CallRecord`."""

    request: ModelRequest
    parent: int | None


@dataclass(slots=True)
class InvokeStep:
    """Run a function (awaiting it on the async path); the driver sends back its result.

    Model calls made inside the function become children of ``parent`` in the trace. With
    ``catch``, an ``Exception`` the function raises is sent back wrapped in :class:`Raised`
    instead of propagating (a tool's failure, reported to the model).
    """

    function: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    parent: int | None
    catch: bool = False


@dataclass(frozen=True, slots=True)
class Raised:
    """What the driver sends back for an :class:`InvokeStep` with ``catch`` whose function
    raised."""

    error: Exception


Step = ModelStep | InvokeStep
Procedure = Generator[Step, Any, T]
