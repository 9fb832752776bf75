"""``AnswerChecks``: the provider checks of the answers and the result.

A mixin of :class:`~pytest_opdecide.conformance.DecisionProviderTests` (see
:mod:`._provider_tests`), built on :class:`~._provider_verdicts.ProviderVerdicts`, whose
``_answered()`` and ``_compared()`` do the checking. Its checks, in the order they run:

* each question type gets answers of its type, by every rule (``test_choice_answers``,
  ``test_score_answers``, ``test_boolean_answers``), and a mixed request one answer per
  question (``test_answers_key_every_question``);
* the answers are the backend's, as computed and question by question: distributions complete
  and never renormalised, scores the weighted mean on every scale length, booleans never
  thresholded, each answer from its own prompt, ids and names kept exactly;
* confidence when declared (``test_confidence_is_reported``);
* the result as a whole: usage added up and the answering model named
  (``test_usage_and_model``), the requested model sent (``test_the_requested_model_is_sent``),
  usage never invented (``test_usage_is_never_invented``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from pytest_opdecide.conformance._failures import ConformanceRule, fail
from pytest_opdecide.conformance._provider_verdicts import ProviderVerdicts
from pytest_opdecide.conformance._requests import (
    exact_names_questions,
    look_alike_questions,
    standard_questions,
)
from pytest_opdecide.conformance._transport import RecordingTransport
from pytest_opdecide.questions import (
    BooleanAnswer,
    BooleanQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionQuestion,
    DecisionRequest,
    DecisionResult,
    ScoreAnswer,
    ScoreQuestion,
)

__all__ = ["AnswerChecks"]


class AnswerChecks(ProviderVerdicts):
    """The checks of the answers, and of the result as a whole (usage, model)."""

    def _answer_type(
        self,
        provider: Any,
        transport: RecordingTransport,
        kind: str,
        extra: Mapping[str, DecisionQuestion] | None = None,
    ) -> list[tuple[DecisionRequest, DecisionResult]]:
        caps = self.capabilities(provider)
        if kind not in caps.question_types:
            pytest.skip(f"{kind} questions are not in supported_question_types")
        questions = {**self._questions(caps), **(extra or {})}
        chosen = {qid: q for qid, q in questions.items() if q.type == kind}
        answered = []
        for request in self._requests(caps, chosen):
            result = self._answered(provider, transport, request, f"a request of {kind} questions")
            answered.append((request, result))
        return answered

    def test_choice_answers(self, provider: Any, recording_transport: RecordingTransport) -> None:
        """Choice questions get choice answers: ``choice`` is one of the options,
        ``probabilities`` has exactly the option names, each a finite float in [0, 1], summing
        to 1 within ``probability_tolerance``.

        Fix: key the distribution by the option names as given (not labels or indices), and
        include every option (0 for those the model never named).
        """
        self._answer_type(provider, recording_transport, "choice")

    def test_score_answers(self, provider: Any, recording_transport: RecordingTransport) -> None:
        """Score questions get score answers: ``probabilities`` keyed ``"0"``..``"L-1"``,
        ``score`` equal to their weighted mean, within ``[0, L-1]``, and a ``legend`` mapping
        every index to its level exactly as asked.

        Fix: compute ``score = sum(i * p_i)`` over the reported probabilities and copy the levels
        into the legend unchanged.
        """
        self._answer_type(provider, recording_transport, "score")

    def test_boolean_answers(self, provider: Any, recording_transport: RecordingTransport) -> None:
        """Boolean questions get boolean answers whose ``probability`` is P(true), a float in
        [0, 1].

        Fix: return ``BooleanAnswer(probability=p_true)`` with a float.
        """
        self._answer_type(provider, recording_transport, "boolean")

    def test_answers_key_every_question(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """A request mixing question types gets exactly one answer per question id, no more,
        each of its question's type.

        Fix: key the answers by the request's question ids, as given.
        """
        caps = self.capabilities(provider)
        for request in self._requests(caps, self._questions(caps)):
            self._answered(provider, recording_transport, request, "a request of mixed questions")

    def test_probabilities_are_complete_and_not_renormalised(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Distributions are complete and reported as computed: every probability equals what
        the backend's answer gives (or a rounding of it), so nothing is renormalised after
        rounding, and no label mass is lost or invented.

        Fix: renormalise over the labels once, then report; if you round, report the rounded
        values as they are and note it in ``metadata``.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        if "choice" not in caps.question_types and "score" not in caps.question_types:
            pytest.skip("neither choice nor score questions are supported")
        questions = {
            qid: q for qid, q in self._questions(caps).items() if q.type in ("choice", "score")
        }
        self._compared_question_by_question(
            provider, recording_transport, caps, questions, "choice and score questions"
        )

    def test_score_is_the_probability_weighted_mean(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """On scales of every length up to ``max_levels``, ``score == sum(i * p_i)``, inside
        ``[0, L-1]``.

        Fix: compute the score from the reported probabilities, with zero-based level indices.
        """
        caps = self.capabilities(provider)
        if "score" not in caps.question_types:
            pytest.skip("score questions are not in supported_question_types")
        top = min(caps.max_levels or 10, 10)
        questions: dict[str, DecisionQuestion] = {
            f"scale_{count}": ScoreQuestion(
                instructions=f"Rate the customer's patience on a {count}-level scale.",
                levels=[f"patience {i} of {count - 1}" for i in range(count)],
            )
            for count in sorted({2, 3, (2 + top) // 2, top})
        }
        for request in self._requests(caps, questions):
            self._answered(provider, recording_transport, request, "score questions")

    def test_boolean_is_a_probability_not_a_verdict(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """A boolean answer's ``probability`` is never a ``bool`` and never thresholded to 0 or
        1: it is P(true) as the backend's answer gives it.

        Fix: return the float P(true); leave thresholds (``p > 0.5``) to the caller.
        """
        caps = self.capabilities(provider)
        if "boolean" not in caps.question_types:
            pytest.skip("boolean questions are not in supported_question_types")
        questions: dict[str, DecisionQuestion] = {
            "refund": standard_questions()["refund"],
            "repeat": standard_questions()["repeat"],
            "angry": BooleanQuestion(instructions="Is the customer angry?"),
        }
        reported: list[float] = []
        for request in self._requests(caps, questions):
            recording_transport.clear()
            result, _ = self._compared(provider, recording_transport, request, "boolean questions")
            reported += [
                answer.probability
                for answer in result.answers.values()
                if isinstance(answer, BooleanAnswer)
            ]
        if all(p in (0.0, 1.0) for p in reported):
            fail(
                ConformanceRule.BOOLEAN_THRESHOLD,
                "every boolean probability is exactly 0 or 1: a threshold looks applied",
                value=reported,
                fix="report P(true) itself; if your backend really is certain every time, "
                "override this check with @pytest.mark.xfail(reason=...)",
            )

    def test_each_question_is_answered_from_its_own_prompt(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Each answer is the backend's answer to that question's own prompt: one that carries
        the request's context, the question's own instructions and each option, level or
        criterion next to the label that stands for it. The questions come in pairs that look
        alike (same option names, as many levels, criteria on both sides): answers swapped
        between two questions, parts given to the other question or to another label (rotated
        options, reversed levels, swapped criteria), a part or the context left out, all
        change the backend's answer.

        Fix: render each question from its own parts, in the order given, with the context;
        read each label back as the outcome it stood next to; key each answer by its own id.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        questions = self._questions(caps, source=look_alike_questions())
        self._compared_question_by_question(
            provider, recording_transport, caps, questions, "questions that look alike"
        )

    def test_question_ids_and_option_names_are_kept_exactly(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Question ids and option names come back exactly as given: spaces around and inside
        kept, letter case kept, composed and decomposed accents told apart (``"café"`` and
        ``"cafe\\u0301"``), emoji and punctuation kept, names that look like labels (``"A"``,
        ``"0"``) or JSON (``"true"``) taken as names.

        Fix: key answers and probabilities by the ids and names of the request, unchanged: no
        ``strip()``, ``lower()``, Unicode normalisation or re-encoding.
        """
        caps = self.capabilities(provider)
        questions = self._questions(caps, source=exact_names_questions())
        if caps.max_options is not None and caps.max_options < 4:
            questions = {q: v for q, v in questions.items() if not isinstance(v, ChoiceQuestion)}
        if not questions:
            pytest.skip("none of the questions fits the declared capabilities")
        for request in self._requests(caps, questions):
            recording_transport.clear()
            self._compared(provider, recording_transport, request, "odd question ids and names")

    def test_confidence_is_reported(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """A provider declaring ``reports_confidence = True`` gives choice and score answers a
        ``confidence`` in [0, 1].

        Fix: fill ``confidence``, or declare ``reports_confidence = False``.
        """
        caps = self.capabilities(provider)
        if not caps.reports_confidence:
            pytest.skip("reports_confidence = False (every answer check range-checks a confidence)")
        questions = {
            qid: q for qid, q in self._questions(caps).items() if q.type in ("choice", "score")
        }
        if not questions:
            pytest.skip("neither choice nor score questions are supported")
        for request in self._requests(caps, questions):
            result = self._answered(provider, recording_transport, request, "the standard request")
            for question_id, answer in result.answers.items():
                if isinstance(answer, ChoiceAnswer | ScoreAnswer) and answer.confidence is None:
                    fail(
                        ConformanceRule.CONFIDENCE,
                        "reports_confidence = True, but the answer has no confidence",
                        question=question_id,
                        value=answer.confidence,
                        fix="fill ChoiceAnswer.confidence and ScoreAnswer.confidence, or declare "
                        "reports_confidence = False",
                    )

    def test_usage_and_model(self, provider: Any, recording_transport: RecordingTransport) -> None:
        """``usage`` has integer counts adding up what the backend reported (zeros only when it
        reported nothing; never invented), and ``model`` names the model the backend said
        answered (the resolved version, not the alias that was asked for).

        Fix: sum ``prompt_tokens``, ``completion_tokens`` and ``total_tokens`` over every
        response of the decision; take ``model`` from the responses.
        """
        caps = self.capabilities(provider)
        for request in self._requests(caps, self._questions(caps)):
            recording_transport.clear()
            result = self._result_level(
                request,
                self._decided_if_sent(
                    provider, recording_transport, caps, request, "the standard request"
                ),
            )
            responses = [
                r.response_json
                for r in recording_transport.requests
                if isinstance(r.response_json, dict)
            ]
            usages = [r["usage"] for r in responses if isinstance(r.get("usage"), dict)]
            for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
                counts = [u.get(name) for u in usages]
                if not counts or not all(type(c) is int for c in counts):
                    continue
                reported = getattr(result.usage, name)
                if reported != sum(counts):
                    fail(
                        ConformanceRule.USAGE,
                        f"usage.{name} is {reported}, but the backend reported {sum(counts)} "
                        f"over {len(counts)} response(s)",
                        value=reported,
                        fix=f"add up usage.{name} of every response of the decision",
                    )
            models = {r["model"] for r in responses if isinstance(r.get("model"), str)}
            if models and result.model not in models:
                fail(
                    ConformanceRule.MODEL,
                    f"the backend said {sorted(models)} answered, but the result names "
                    f"{result.model!r}",
                    value=result.model,
                    fix="report the model named by the backend's responses (the resolved "
                    "version when the request used an alias)",
                )

    def test_the_requested_model_is_sent(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Every request to the backend that names a model (a JSON body with a ``"model"``
        field) names the request's model, or the one ``sent_models`` maps it to: the provider
        never sends a fixed model whatever the request asks for.

        Fix: send ``request.model`` (your default model only when it is empty); declare a
        documented alias table as ``sent_models``.
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        asked = self.request_model
        if not asked and "" not in caps.sent_models:
            pytest.skip("request_model is empty: the provider's default model may be sent")
        wanted = caps.sent_models.get(asked, asked)
        sent: list[str] = []
        for request in self._requests(caps, self._questions(caps)):
            recording_transport.clear()
            self._expect(recording_transport, request)
            outcome = self._attempt(provider, request)
            self._uses_backend(caps, recording_transport, "the standard request", outcome.error)
            for recorded in recording_transport.requests:
                body = recorded.json
                if isinstance(body, dict) and "model" in body:
                    sent.append(body["model"])
        if not sent:
            pytest.skip("no request body names a model (another protocol): nothing to compare")
        wrong = sorted({repr(model) for model in sent if model != wanted})
        if wrong:
            mapped = f" (mapped by sent_models from {asked!r})" if wanted != asked else ""
            fail(
                ConformanceRule.MODEL_REQUESTED,
                f"the request asked for model {asked!r}, but the provider sent "
                f"{', '.join(wrong)} to the backend instead of {wanted!r}{mapped}",
                value=sent,
                fix="send the request's model; if your provider maps model names, declare the "
                "mapping as sent_models = {'requested': 'sent'}",
            )

    def test_usage_is_never_invented(
        self, provider: Any, recording_transport: RecordingTransport
    ) -> None:
        """Usage the backend does not report is not made up. When no response reports usage,
        the counts are zeros and there is no cost; when some do, the counts add up those that
        do (never an estimate for the others) and there is no cost (it would understate what
        was used). Nothing is reported for cached or reasoning tokens the backend never
        mentioned.

        Fix: add up what the responses report, nothing more; leave ``cost`` as ``None`` unless
        every response reported its usage (``ProviderUsage.combined`` does both).
        """
        caps = self.capabilities(provider)
        self._skip_without_backend(caps)
        request = self._requests(caps, self._questions(caps))[0]
        for keep in (0, 1):
            recording_transport.clear()
            seen = [0]

            def without_usage(body: Any, keep: int = keep, seen: list[int] = seen) -> Any:
                if isinstance(body, dict) and "usage" in body:
                    seen[0] += 1
                    if seen[0] > keep:
                        body = {k: v for k, v in body.items() if k != "usage"}
                return body

            with recording_transport.rewriting(without_usage):
                result = self._result_level(
                    request,
                    self._decided_if_sent(
                        provider, recording_transport, caps, request, "the standard request"
                    ),
                )
            self._uses_backend(caps, recording_transport, "the standard request")
            responses = [r.response_json for r in recording_transport.requests]
            reported = [r["usage"] for r in responses if isinstance(r, dict) and "usage" in r]
            if len(reported) == len(responses):
                pytest.skip("the backend's responses carry no usage to leave out")
            usage = result.usage
            for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
                total = sum(u.get(name, 0) for u in reported if isinstance(u, dict))
                if getattr(usage, name) != total:
                    fail(
                        ConformanceRule.USAGE_INVENTED,
                        f"usage.{name} is {getattr(usage, name)}, but the backend reported "
                        f"{total} ({len(responses) - len(reported)} of {len(responses)} "
                        "response(s) reported no usage): counts were made up",
                        value=usage,
                        fix="add up the usage the responses report; zeros when none does",
                    )
            for name in ("cached_tokens", "reasoning_tokens"):
                if getattr(usage, name):
                    fail(
                        ConformanceRule.USAGE_INVENTED,
                        f"usage.{name} is {getattr(usage, name)}, but the backend never "
                        "mentioned them",
                        value=usage,
                        fix="report cached and reasoning tokens only when the backend reports them",
                    )
            if usage.cost is not None:
                fail(
                    ConformanceRule.USAGE_INVENTED,
                    f"usage.cost is {usage.cost!r}, but {len(responses) - len(reported)} of "
                    f"{len(responses)} response(s) reported no usage: the cost is unknown",
                    value=usage,
                    fix="leave cost as None unless every response reported its usage "
                    "(ProviderUsage.combined(reports, pricing=...))",
                )
