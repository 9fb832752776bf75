"""``fake_context``: realistic, reproducible contexts built on faker."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import json
import re
from typing import Any

import pytest

from fake_runtimes import CONTEXT_KINDS, fake_context

from ._fresh_process import json_from_fresh_process

SEEDS = range(25)
TIMESTAMP = re.compile(r"^2024-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
EMAIL = re.compile(r"^[a-z.\-]+@example\.(com|net|org)$")


def moment(text: str) -> dt.datetime:
    assert TIMESTAMP.match(text), text
    return dt.datetime.fromisoformat(text)


def test_the_kinds() -> None:
    assert CONTEXT_KINDS == ("chat_transcript", "product_review", "support_ticket")


@pytest.mark.parametrize("kind", CONTEXT_KINDS)
class TestEveryKind:
    def test_the_same_seed_gives_the_same_context(self, kind: str) -> None:
        assert fake_context(kind, seed=3) == fake_context(kind, seed=3)

    def test_the_seed_defaults_to_0(self, kind: str) -> None:
        assert fake_context(kind) == fake_context(kind, 0)

    def test_other_seeds_give_other_contexts(self, kind: str) -> None:
        texts = {json.dumps(fake_context(kind, seed)) for seed in SEEDS}
        assert len(texts) == len(SEEDS)

    def test_is_plain_json(self, kind: str) -> None:
        for seed in SEEDS:
            context = fake_context(kind, seed)
            assert json.loads(json.dumps(context)) == context

    def test_the_result_is_a_fresh_copy(self, kind: str) -> None:
        first = fake_context(kind, 1)
        first.clear()
        assert fake_context(kind, 1)


def test_every_kind_is_the_same_in_a_fresh_process() -> None:
    code = """
        import json
        from fake_runtimes import CONTEXT_KINDS, fake_context
        print(json.dumps([fake_context(kind, seed) for kind in CONTEXT_KINDS for seed in (0, 1)]))
    """
    expected = [fake_context(kind, seed) for kind in CONTEXT_KINDS for seed in (0, 1)]
    assert json_from_fresh_process(code, hash_seed="4242") == expected


def test_a_context_is_the_same_whatever_was_drawn_before_and_on_any_thread() -> None:
    # Each thread reuses one Faker, seeded anew for every context.
    wanted = [(kind, seed) for kind in CONTEXT_KINDS for seed in (0, 1, 2)]
    in_order = [fake_context(kind, seed) for kind, seed in wanted]
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        reversed_on_threads = list(pool.map(lambda ks: fake_context(*ks), wanted[::-1]))
    assert reversed_on_threads[::-1] == in_order


def test_kinds_with_the_same_seed_do_not_share_people() -> None:
    ticket = fake_context("support_ticket", 0)
    chat = fake_context("chat_transcript", 0)
    assert ticket["customer"]["name"] != chat[0]["name"]


class TestSupportTicket:
    @pytest.mark.parametrize("seed", SEEDS)
    def test_shape(self, seed: int) -> None:
        ticket = fake_context("support_ticket", seed)
        assert list(ticket) == [
            "id",
            "customer",
            "subject",
            "body",
            "order_id",
            "channel",
            "created_at",
        ]
        assert re.match(r"^TCK-\d{5}$", ticket["id"])
        assert re.match(r"^ORD-\d{6}$", ticket["order_id"])
        assert list(ticket["customer"]) == ["name", "email"]
        first = ticket["customer"]["name"].split()[0]
        assert EMAIL.match(ticket["customer"]["email"])
        assert ticket["customer"]["email"].startswith(first.lower())
        assert ticket["channel"] in ("email", "web_form", "chat")
        moment(ticket["created_at"])

    @pytest.mark.parametrize("seed", SEEDS)
    def test_the_text_reads_like_a_ticket(self, seed: int) -> None:
        ticket = fake_context("support_ticket", seed)
        first_name = ticket["customer"]["name"].split()[0]
        assert ticket["body"].startswith(("Hi,", "Hello,", "Hi there,"))
        assert ticket["body"].endswith(f"\n{first_name}")
        assert "{" not in ticket["body"] + ticket["subject"]
        assert ticket["subject"]


class TestChatTranscript:
    @pytest.mark.parametrize("seed", SEEDS)
    def test_shape(self, seed: int) -> None:
        chat = fake_context("chat_transcript", seed)
        assert isinstance(chat, list)
        assert 5 <= len(chat) <= 6
        for message in chat:
            assert list(message) == ["role", "name", "text", "sent_at"]
            assert message["role"] in ("customer", "agent")
            assert message["text"]
            assert "{" not in message["text"]

    @pytest.mark.parametrize("seed", SEEDS)
    def test_a_conversation_in_time_order(self, seed: int) -> None:
        chat = fake_context("chat_transcript", seed)
        times = [moment(message["sent_at"]) for message in chat]
        assert times == sorted(times)
        assert len(set(times)) == len(times)
        assert chat[0]["role"] == "customer"
        customers = {m["name"] for m in chat if m["role"] == "customer"}
        agents = {m["name"] for m in chat if m["role"] == "agent"}
        assert len(customers) == len(agents) == 1
        assert chat[1]["text"].startswith(f"Hi {next(iter(customers)).split()[0]}, I'm ")


class TestProductReview:
    @pytest.mark.parametrize("seed", SEEDS)
    def test_shape(self, seed: int) -> None:
        review = fake_context("product_review", seed)
        assert list(review) == [
            "id",
            "product",
            "rating",
            "title",
            "body",
            "author",
            "helpful_votes",
            "created_at",
        ]
        assert re.match(r"^REV-\d{6}$", review["id"])
        assert list(review["product"]) == ["sku", "name", "category"]
        assert re.match(r"^SKU-[A-Z]{3}-\d{4}$", review["product"]["sku"])
        assert review["product"]["category"] in ("kitchen", "electronics", "outdoors", "home")
        assert review["rating"] in (1, 2, 3, 4, 5)
        assert type(review["author"]["verified_purchase"]) is bool
        assert type(review["helpful_votes"]) is int
        moment(review["created_at"])

    def test_the_tone_follows_the_rating(self) -> None:
        titles: dict[str, set[str]] = {"low": set(), "mid": set(), "high": set()}
        for seed in range(80):
            review = fake_context("product_review", seed)
            band = "low" if review["rating"] <= 2 else "mid" if review["rating"] == 3 else "high"
            titles[band].add(review["title"])
        assert titles["low"] <= {"Broke after a week", "Not worth the money", "Disappointed"}
        assert titles["mid"] <= {"It's okay", "Good, with some flaws", "Does the job"}
        assert titles["high"] <= {"Love it!", "Exactly what I needed", "Great quality"}
        assert all(titles.values())

    def test_the_body_names_the_item_as_in_a_sentence(self) -> None:
        bodies = [fake_context("product_review", seed)["body"] for seed in range(80)]
        assert not any("usb-c" in body for body in bodies)


class TestMistakes:
    def test_an_unknown_kind_lists_the_kinds(self) -> None:
        with pytest.raises(ValueError, match=r"^Unknown context kind") as caught:
            fake_context("email_thread")
        assert str(caught.value) == (
            "Unknown context kind 'email_thread'; the kinds are "
            "['chat_transcript', 'product_review', 'support_ticket']"
        )

    @pytest.mark.parametrize("kind", [None, 3, ["support_ticket"]])
    def test_a_kind_that_is_not_a_string(self, kind: Any) -> None:
        with pytest.raises(ValueError, match=r"^Unknown context kind "):
            fake_context(kind)

    @pytest.mark.parametrize("seed", ["1", 1.5, True, None])
    def test_a_seed_that_is_not_an_int(self, seed: Any) -> None:
        with pytest.raises(TypeError) as caught:
            fake_context("support_ticket", seed)
        assert str(caught.value) == f"seed must be an int, got {type(seed).__name__}"
