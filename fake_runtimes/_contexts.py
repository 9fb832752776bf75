"""Realistic, reproducible contexts to decide about: support tickets, chats, product reviews.

Built on faker (a seeded ``en_US`` instance per call; the optional extra
``pytest-opdecide[contexts]``, imported on the first call, never at import) and a small set of
hand-written phrases, so that the texts read like the real thing and the same ``(kind, seed)``
gives the same context in every process. Dates are drawn from a fixed window (never from the clock).
"""

from __future__ import annotations

import datetime as dt
import random
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, overload

from pytest_opdecide import MissingExtra

if TYPE_CHECKING:
    from faker import Faker

__all__ = ["CONTEXT_KINDS", "fake_context"]

CONTEXT_KINDS = ("chat_transcript", "product_review", "support_ticket")
"""The kinds :func:`fake_context` knows, sorted."""

_WINDOW_START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
_WINDOW_SECONDS = 366 * 24 * 3600

# --- shared pieces -----------------------------------------------------------------------------

_PRODUCTS = {
    "kitchen": ("Cutting Board", "Chef's Knife", "French Press", "Cast Iron Skillet", "Kettle"),
    "electronics": ("Wireless Earbuds", "Phone Charger", "Bluetooth Speaker", "USB-C Hub"),
    "outdoors": ("Camping Lantern", "Hiking Backpack", "Insulated Water Bottle", "Tent Stakes"),
    "home": ("Desk Lamp", "Throw Blanket", "Storage Bin", "Wall Clock", "Bath Towel Set"),
}

_BRANDS = (
    "Northwind", "Brightline", "Kestrel", "Oakridge", "Lumen", "Trailhead", "Copperleaf",
    "Bluefin", "Harbor & Pine", "Everstead", "Summit Co.", "Maple Lane",
)  # fmt: skip

_TOPICS: dict[str, dict[str, tuple[str, ...]]] = {
    "late_delivery": {
        "subject": (
            "Where is my order {order_id}?",
            "Order {order_id} still not delivered",
            "My package hasn't arrived",
        ),
        "body": (
            "I ordered the {product} on {order_date} and the tracking page still says "
            '"{status}". It was supposed to arrive by {due_date}. Can you tell me where it is?',
            "My order {order_id} ({product}) is {days} days late and nobody has updated the "
            "tracking since {order_date}. I need it this week.",
        ),
    },
    "damaged_item": {
        "subject": ("Item arrived damaged", "Broken {product} in order {order_id}"),
        "body": (
            "The {product} from order {order_id} arrived with a cracked case and the box was "
            "crushed. I have photos if you need them. I'd like a replacement.",
            "I opened my package today and the {product} is damaged: {damage}. What are my "
            "options?",
        ),
    },
    "double_charge": {
        "subject": ("Charged twice for order {order_id}", "Duplicate payment on my card"),
        "body": (
            "I was charged twice for order {order_id}: two payments of ${amount} on my card "
            "ending in {last4}. Please refund the duplicate charge.",
            "My bank statement shows ${amount} taken twice on {order_date} for the {product}. "
            "I only placed one order ({order_id}).",
        ),
    },
    "refund_request": {
        "subject": ("Refund for order {order_id}", "I want to return the {product}"),
        "body": (
            "The {product} doesn't fit what I needed. It's unused and still in the box. How do I "
            "return it and get my ${amount} back?",
            "I returned order {order_id} on {order_date} but haven't seen the refund of "
            "${amount} yet. Can you check on it?",
        ),
    },
    "login_problem": {
        "subject": ("Can't log in to my account", "Password reset email never arrives"),
        "body": (
            "I've tried to reset my password three times but the email never arrives at "
            "{email}. I need to check on order {order_id}.",
            "Your site says my account is locked after I entered the wrong password. Please "
            "unlock it, I have an open order ({order_id}).",
        ),
    },
    "wrong_item": {
        "subject": ("Wrong item in my package", "Received the wrong product for {order_id}"),
        "body": (
            "I ordered the {product} but the box contained a {other_product}. Order {order_id}. "
            "Please send the right one.",
            "Order {order_id} came with someone else's item ({other_product}) instead of my "
            "{product}.",
        ),
    },
}

_STATUSES = ("Label created", "In transit", "Out for delivery", "Held at facility")
_DAMAGE = ("the handle snapped off", "there is a deep scratch across the top", "it won't turn on")
_CHANNELS = ("email", "web_form", "chat")
_FOLLOW_UP = dt.timedelta(days=12)  # the most time between an order and the customer's message


def _timestamp(moment: dt.datetime) -> str:
    """ISO 8601 in UTC with a ``Z``, to the second: ``2024-05-24T22:53:56Z``."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_FAKERS = threading.local()
"""One ``en_US`` Faker per thread, seeded anew for every context: building a Faker sets up every
one of its providers (milliseconds), and a seeded instance draws the same values however often
it was used before (``seed_instance`` replaces its whole random state)."""


def _faker() -> Faker:
    """This thread's ``en_US`` Faker; faker is imported here, on first use, as an optional
    extra."""
    fake: Faker | None = getattr(_FAKERS, "fake", None)
    if fake is not None:
        return fake
    try:
        from faker import Faker
    except ModuleNotFoundError as exc:
        if exc.name != "faker":
            raise
        raise MissingExtra("faker", extra="contexts", feature="fake_context()") from None
    fake = _FAKERS.fake = Faker("en_US")
    return fake


class _Draw:
    """The faker instance of one context and the values its texts share."""

    def __init__(self, kind: str, seed: int) -> None:
        self.fake = _faker()
        # Salted with the kind: a ticket and a review of the same seed do not share a customer.
        self.fake.seed_instance(f"{kind}:{seed}")
        self.random: random.Random = self.fake.random

    def choice(self, items: tuple[str, ...]) -> str:
        return items[self.random.randrange(len(items))]

    def moment(self, room_after: dt.timedelta = dt.timedelta()) -> dt.datetime:
        """A second in 2024, leaving ``room_after`` before the year ends (for later events)."""
        span = _WINDOW_SECONDS - int(room_after.total_seconds())
        return _WINDOW_START + dt.timedelta(seconds=self.random.randrange(span))

    def person(self) -> dict[str, str]:
        first, last = self.fake.first_name(), self.fake.last_name()
        user = f"{first}.{last}".lower().replace("'", "").replace(" ", "")
        return {"name": f"{first} {last}", "email": f"{user}@{self.fake.safe_domain_name()}"}

    def product(self) -> dict[str, str]:
        category = self.choice(tuple(_PRODUCTS))
        item = self.choice(_PRODUCTS[category])
        brand = self.choice(_BRANDS)
        sku = f"SKU-{category[:3].upper()}-{self.random.randrange(1000, 10000)}"
        return {"sku": sku, "name": f"{brand} {item}", "category": category}

    def facts(self, topic: str, customer: dict[str, str], placed: dt.datetime) -> dict[str, str]:
        """The values a topic's phrases refer to."""
        product = self.product()["name"]
        other = self.product()["name"]
        while other == product:
            other = self.product()["name"]
        return {
            "order_id": f"ORD-{self.random.randrange(100000, 1000000)}",
            "product": product,
            "other_product": other,
            "order_date": placed.strftime("%B %d").replace(" 0", " "),
            "due_date": (placed + dt.timedelta(days=5)).strftime("%B %d").replace(" 0", " "),
            "days": str(self.random.randrange(2, 15)),
            "status": self.choice(_STATUSES),
            "damage": self.choice(_DAMAGE),
            "amount": f"{self.random.randrange(900, 25000) / 100:.2f}",
            "last4": f"{self.random.randrange(10000):04d}",
            "email": customer["email"],
        }


# --- the kinds ---------------------------------------------------------------------------------


def _support_ticket(draw: _Draw) -> dict[str, Any]:
    customer = draw.person()
    placed = draw.moment(room_after=_FOLLOW_UP)
    topic = draw.choice(tuple(_TOPICS))
    facts = draw.facts(topic, customer, placed)
    phrases = _TOPICS[topic]
    first_name = customer["name"].split()[0]
    body = (
        f"{draw.choice(('Hi,', 'Hello,', 'Hi there,'))}\n\n"
        f"{draw.choice(phrases['body']).format(**facts)}\n\n"
        f"{draw.choice(('Thanks,', 'Regards,', 'Thank you,'))}\n{first_name}"
    )
    created = placed + dt.timedelta(
        days=draw.random.randrange(1, 10), minutes=draw.random.randrange(600)
    )
    return {
        "id": f"TCK-{draw.random.randrange(10000, 100000)}",
        "customer": customer,
        "subject": draw.choice(phrases["subject"]).format(**facts),
        "body": body,
        "order_id": facts["order_id"],
        "channel": draw.choice(_CHANNELS),
        "created_at": _timestamp(created),
    }


_AGENT_REPLIES = {
    "late_delivery": "I can see the parcel is delayed at the carrier's depot. I've asked them "
    "to prioritise it and it should reach you within two days.",
    "damaged_item": "I'm sorry it arrived like that. I've arranged a free replacement; you "
    "don't need to send the damaged one back.",
    "double_charge": "You're right, the second payment was a duplicate. I've refunded it; it "
    "will show on your card in 3 to 5 business days.",
    "refund_request": "I've started the return for you. You'll get a prepaid label by email "
    "and the refund once the parcel is scanned.",
    "login_problem": "I've unlocked your account and sent a new reset link. It can take a few "
    "minutes; please check your spam folder too.",
    "wrong_item": "Sorry about the mix-up. The correct item ships today and a return label for "
    "the wrong one is on its way.",
}

_CLOSINGS = {
    "satisfied": ("Great, thank you so much!", "Perfect, thanks for the quick help."),
    "unsatisfied": (
        "Honestly, this has taken far too long. I'd like to speak to a manager.",
        "That doesn't really help me. I'd rather have my money back.",
    ),
}


def _chat_transcript(draw: _Draw) -> list[dict[str, Any]]:
    customer = draw.person()
    agent = draw.fake.first_name()
    placed = draw.moment(room_after=_FOLLOW_UP)
    topic = draw.choice(tuple(_TOPICS))
    facts = draw.facts(topic, customer, placed)
    opener = draw.choice(_TOPICS[topic]["body"]).format(**facts)
    mood = draw.choice(tuple(_CLOSINGS))
    turns = [
        ("customer", customer["name"], opener),
        ("agent", agent, f"Hi {customer['name'].split()[0]}, I'm {agent}. Let me look into that."),
        ("agent", agent, f"I found order {facts['order_id']}. {_AGENT_REPLIES[topic]}"),
        ("customer", customer["name"], draw.choice(_CLOSINGS[mood])),
    ]
    if mood == "unsatisfied":
        turns.append(("agent", agent, "I understand. I'll pass this to my supervisor right away."))
    else:
        turns.append(("agent", agent, "You're welcome! Is there anything else I can help with?"))
        turns.append(("customer", customer["name"], "No, that's all. Bye!"))
    moment = placed + dt.timedelta(days=draw.random.randrange(1, 10))
    messages = []
    for role, name, text in turns:
        moment += dt.timedelta(seconds=draw.random.randrange(15, 240))
        messages.append({"role": role, "name": name, "text": text, "sent_at": _timestamp(moment)})
    return messages


_REVIEWS: dict[str, dict[str, tuple[str, ...]]] = {
    "negative": {
        "title": ("Broke after a week", "Not worth the money", "Disappointed"),
        "body": (
            "The {item} started falling apart after about a week of normal use. Support was slow "
            "to answer and I ended up returning it.",
            "Feels cheap and looks nothing like the photos. I would not buy this {item} again.",
        ),
    },
    "mixed": {
        "title": ("It's okay", "Good, with some flaws", "Does the job"),
        "body": (
            "The {item} does what it says, but it is smaller than I expected and the finish "
            "scratches easily. Fine for the price.",
            "It works well most of the time, but the {item} is heavier than I expected and the "
            "packaging was a mess.",
        ),
    },
    "positive": {
        "title": ("Love it!", "Exactly what I needed", "Great quality"),
        "body": (
            "I've used this {item} every day for a month and it still looks new. Shipping was "
            "fast too. Highly recommend.",
            "Solid build, easy to use, and a great price. I bought another one as a gift.",
        ),
    },
}


def _common_noun(product_name: str) -> str:
    """``Brightline USB-C Hub`` -> ``USB-C hub``: the item without its brand, as in a sentence."""
    item = next(i for items in _PRODUCTS.values() for i in items if product_name.endswith(i))
    return " ".join(w if any(c.isupper() for c in w[1:]) else w.lower() for w in item.split())


def _product_review(draw: _Draw) -> dict[str, Any]:
    product = draw.product()
    rating = draw.random.randrange(1, 6)
    tone = "negative" if rating <= 2 else "mixed" if rating == 3 else "positive"
    item = _common_noun(product["name"])
    phrases = _REVIEWS[tone]
    return {
        "id": f"REV-{draw.random.randrange(100000, 1000000)}",
        "product": product,
        "rating": rating,
        "title": draw.choice(phrases["title"]),
        "body": draw.choice(phrases["body"]).format(item=item),
        "author": {
            "name": draw.fake.name(),
            "verified_purchase": draw.random.random() < 0.8,
        },
        "helpful_votes": draw.random.randrange(0, 50),
        "created_at": _timestamp(draw.moment()),
    }


_BUILDERS: dict[str, Callable[[_Draw], Any]] = {
    "chat_transcript": _chat_transcript,
    "product_review": _product_review,
    "support_ticket": _support_ticket,
}


@overload
def fake_context(kind: Literal["chat_transcript"], seed: int = 0) -> list[dict[str, Any]]: ...


@overload
def fake_context(
    kind: Literal["support_ticket", "product_review"], seed: int = 0
) -> dict[str, Any]: ...


@overload
def fake_context(kind: str, seed: int = 0) -> dict[str, Any] | list[dict[str, Any]]: ...


def fake_context(kind: str, seed: int = 0) -> dict[str, Any] | list[dict[str, Any]]:
    """A realistic context of ``kind``, the same for the same ``seed`` in every process.

    The result is plain JSON data (dicts, lists, strings, ints, booleans), ready to pass as the
    ``context`` of a decision request or to format into a prompt.

    Kinds:
        ``support_ticket``: ``{id, customer: {name, email}, subject, body, order_id, channel,
        created_at}``.
        ``chat_transcript``: a list of messages ``{role: "customer"|"agent", name, text,
        sent_at}``, in time order.
        ``product_review``: ``{id, product: {sku, name, category}, rating: 1-5, title, body,
        author: {name, verified_purchase}, helpful_votes, created_at}``; the text's tone
        follows the rating.

    Times are ISO 8601 strings in UTC (``2024-05-24T22:53:56Z``) within 2024.

    Args:
        kind: One of :data:`CONTEXT_KINDS`.
        seed: Any int; the same seed gives the same context.

    Raises:
        MissingExtra: faker is not installed (``pip install 'pytest-opdecide[contexts]'``).
        ValueError: Unknown ``kind`` (the message lists the kinds).
        TypeError: ``seed`` is not an int.

    Example:
        >>> ticket = fake_context("support_ticket", seed=7)
        >>> sorted(ticket)
        ['body', 'channel', 'created_at', 'customer', 'id', 'order_id', 'subject']
        >>> ticket == fake_context("support_ticket", seed=7)
        True
    """
    builder = _BUILDERS.get(kind) if isinstance(kind, str) else None
    if builder is None:
        raise ValueError(f"Unknown context kind {kind!r}; the kinds are {list(CONTEXT_KINDS)}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    result: dict[str, Any] | list[dict[str, Any]] = builder(_Draw(kind, seed))
    return result
