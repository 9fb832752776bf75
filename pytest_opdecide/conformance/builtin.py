"""Factories of the project's own decision providers, ready for the conformance checks.

``opdecide check`` and :func:`~pytest_opdecide.conformance.run_checks` take a factory
(``MODULE:FACTORY``, a callable taking a ``ProviderFactoryConfig``). These build the fakes the
project ships, configured to answer any request the checks send:

* ``pytest_opdecide.conformance.builtin:fake_provider``: a ``FakeDecisionProvider`` (seeded
  answers; ``seed`` and ``model`` config values are read);
* ``pytest_opdecide.conformance.builtin:runtime_provider``: a ``RuntimeDecisionProvider`` over a
  fake runtime whose model states a seeded distribution over whatever labels it is offered.

The real provider needs no wrapper: ``pytest_opdecide.questions:openai_compatible``.

Example:
    ``opdecide check pytest_opdecide.conformance.builtin:runtime_provider``
"""

from __future__ import annotations

import random

from fake_runtimes import FakeCall, FakeDecisionProvider, FunctionRuntime, Pick, pick
from pytest_opdecide._nextstep._field_types import ObjectSpec
from pytest_opdecide._nextstep._options import Menu
from pytest_opdecide.questions import ProviderFactoryConfig, RuntimeDecisionProvider

__all__ = ["DEFAULT_MODEL", "fake_provider", "runtime_provider", "stated_distribution"]

DEFAULT_MODEL = "conformance-model"
"""The model of the built providers when the config names none (the checks' request model)."""


def _model(config: ProviderFactoryConfig) -> str:
    model = config.options.get("model")
    return model if isinstance(model, str) and model else DEFAULT_MODEL


def fake_provider(config: ProviderFactoryConfig) -> FakeDecisionProvider:
    """A ``FakeDecisionProvider`` answering every question from its seed.

    Config values: ``seed`` (a whole number, default 0) and ``model``.
    """
    seed = config.options.get("seed", 0)
    return FakeDecisionProvider(seed=int(str(seed)), model=_model(config))


def stated_distribution(call: FakeCall) -> Pick:
    """The fake model of :func:`runtime_provider`: it picks the provider's ``answer`` option
    with a probability for every label it is offered, seeded by the prompt, summing to 1."""
    menu = call.request.choices
    if not isinstance(menu, Menu) or len(menu.options) != 1 or len(menu.options[0].fields) != 1:
        raise TypeError(f"expected the question-decision menu of one option, got {call.menu!r}")
    (option,) = menu.options
    (field,) = option.fields
    if not isinstance(field.type, ObjectSpec):
        raise TypeError(f"expected an object of label probabilities, got {field.type.label}")
    labels = [label.name for label in field.type.fields]
    rng = random.Random(call.prompt)
    weights = [rng.randint(1, 100) for _ in labels]
    total = sum(weights)
    return pick(
        option.name,
        **{field.name: {label: w / total for label, w in zip(labels, weights, strict=True)}},
    )


def runtime_provider(config: ProviderFactoryConfig) -> RuntimeDecisionProvider:
    """A ``RuntimeDecisionProvider`` over a fake runtime stating seeded distributions.

    Config value: ``model`` (the runtime's model; requests must name it or leave it empty).
    """
    return RuntimeDecisionProvider(FunctionRuntime(stated_distribution, model=_model(config)))
