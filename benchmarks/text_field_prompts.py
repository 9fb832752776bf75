"""A second measurement set of ``benchmarks/live_decisions.py`` (``--set text_fields``): 35
decisions whose picks carry free text, numbers and allowed values that are not strings.

Written for issue 23 (free text without a bound ran until the tokens ended; picks carried the
menu's examples; the menu showed ``int`` options as strings): each decision has a function or
schema option whose fields are free text (ids, names, notes, lists of text), ints and floats,
``Literal`` ints, ``Param(options=[...])`` ints, an ``Enum`` of ints, a date, and a value option
or two beside it. Each prompt tells the model to pick, as ``decision.make`` requires.
"""

from __future__ import annotations

import datetime
import enum
from typing import Annotated, Any, Literal

from benchmarks.decision_prompts import Decision
from pytest_opdecide import Param

__all__ = ["PROMPTS"]


def _called(name: str, **args: Any) -> str:
    return name + "(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"


class Speed(enum.Enum):
    SLOW = 1
    FAST = 2


def scan(resolution: Annotated[int, Param("dpi", options=[300, 600, 1200])], pages: int) -> str:
    """Scan a document."""
    return _called("scan", resolution=resolution, pages=pages)


def set_volume(level: Literal[1, 2, 3, 4, 5]) -> str:
    """Set the speaker volume."""
    return _called("set_volume", level=level)


def print_copies(copies: Annotated[int, Param(options=[100, 200])], duplex: bool) -> str:
    """Print copies of a flyer."""
    return _called("print_copies", copies=copies, duplex=duplex)


def fan(speed: Speed) -> str:
    """Run the fan."""
    return _called("fan", speed=speed)


def register_bird(ring_number: str, species: str) -> str:
    """Record a ringed bird."""
    return _called("register_bird", ring_number=ring_number, species=species)


def report_tram(tram_id: str, line: int, note: str) -> str:
    """Report a broken tram."""
    return _called("report_tram", tram_id=tram_id, line=line, note=note)


def label_boxes(boxes: list[str]) -> str:
    """Print labels for boxes."""
    return _called("label_boxes", boxes=boxes)


def book_room(guest: str, nights: int, day: datetime.date) -> str:
    """Book a room."""
    return _called("book_room", guest=guest, nights=nights, day=day)


def send_note(to: str, text: Annotated[str, Param("The message", max_length=80)]) -> str:
    """Send a short note."""
    return _called("send_note", to=to, text=text)


def tag_photo(title: str, tags: list[str], rating: Literal[1, 2, 3]) -> str:
    """Tag a photo."""
    return _called("tag_photo", title=title, tags=tags, rating=rating)


def pay(payee: str, amount: float, reference: str) -> str:
    """Pay a bill."""
    return _called("pay", payee=payee, amount=amount, reference=reference)


def rename(old: str, new: str) -> str:
    """Rename a file."""
    return _called("rename", old=old, new=new)


def plant(crop: str, rows: int, spacing_cm: Literal[20, 30, 50]) -> str:
    """Plant a crop."""
    return _called("plant", crop=crop, rows=rows, spacing_cm=spacing_cm)


def open_ticket(title: str, priority: Literal[1, 2, 3], component: str) -> str:
    """Open a bug ticket."""
    return _called("open_ticket", title=title, priority=priority, component=component)


def set_alarm(hour: int, minute: int, label: str) -> str:
    """Set an alarm."""
    return _called("set_alarm", hour=hour, minute=minute, label=label)


WAIT = ("WAIT", "Do nothing for now.")
ASK = ("ASK", "Ask the user for more details.")
DONE = ("DONE", "Nothing is left to do.")

_ROWS: list[tuple[str, str, dict[str, Any]]] = [
    ("scan_contract", "Scan the 4-page contract at high resolution.", {"scan": scan, "wait": WAIT}),
    ("scan_receipt", "Scan this one receipt, quickly.", {"scan": scan, "done": DONE}),
    (
        "volume_up",
        "The music is too quiet; turn it up a lot.",
        {"volume": set_volume, "wait": WAIT},
    ),
    ("volume_low", "The baby is asleep: set the volume to the lowest.", {"volume": set_volume}),
    ("flyers", "Print 200 double-sided flyers for the fair.", {"print": print_copies, "ask": ASK}),
    ("fan_fast", "It is very hot in here.", {"fan": fan, "wait": WAIT}),
    ("fan_slow", "The fan is too loud, but keep it on.", {"fan": fan, "done": DONE}),
    ("ring_gull", "We caught a herring gull with ring EA-40921.", {"register": register_bird}),
    ("ring_swan", "A mute swan with ring 7T-118 landed.", {"register": register_bird, "ask": ASK}),
    (
        "tram_door",
        "Tram 3041 on line 7 has a door stuck open.",
        {"report": report_tram, "wait": WAIT},
    ),
    ("tram_seat", "A seat is broken on tram 2210, line 4.", {"report": report_tram}),
    ("boxes_move", "Label the boxes: kitchen, books, winter clothes.", {"labels": label_boxes}),
    ("boxes_one", "We only have one box, for the garage.", {"labels": label_boxes, "done": DONE}),
    (
        "room_ana",
        "Ana Ruiz wants a room for 3 nights from 2025-06-12.",
        {"book": book_room, "ask": ASK},
    ),
    ("room_li", "Book 1 night for Li Wei on 2025-01-30.", {"book": book_room}),
    ("note_late", "Tell Sam that the meeting moves to 3 pm.", {"note": send_note, "wait": WAIT}),
    ("note_thanks", "Thank Priya for the flowers.", {"note": send_note}),
    ("photo_beach", "Tag this sunset photo from Nice; it is my favourite.", {"tag": tag_photo}),
    ("photo_blurry", "This photo of the dog is blurry.", {"tag": tag_photo, "done": DONE}),
    (
        "pay_rent",
        "Pay 950.00 EUR rent to Lisa Moreau, reference May rent.",
        {"pay": pay, "ask": ASK},
    ),
    ("pay_water", "Pay the water bill: 41.20 to City Water, ref W-8812.", {"pay": pay}),
    ("rename_draft", "Rename draft.txt to final-report.txt.", {"rename": rename, "wait": WAIT}),
    ("rename_img", "Rename IMG_0042.jpg to wedding-cake.jpg.", {"rename": rename}),
    (
        "plant_beans",
        "Plant 6 rows of beans, not too close together.",
        {"plant": plant, "wait": WAIT},
    ),
    ("plant_salad", "Plant 2 rows of lettuce, close together.", {"plant": plant}),
    (
        "bug_login",
        "Users cannot log in since this morning: urgent, auth service.",
        {"ticket": open_ticket, "wait": WAIT},
    ),
    ("bug_typo", "There is a typo on the about page.", {"ticket": open_ticket, "done": DONE}),
    ("alarm_early", "Wake me at 5:45 for the flight.", {"alarm": set_alarm}),
    ("alarm_meds", "Remind me at 21:30 to take my pills.", {"alarm": set_alarm, "wait": WAIT}),
    (
        "plan_trip",
        "Plan a day in Porto and file the plan.",
        {"plan": ("File a plan.", {"title": str, "stops": [str]}), "ask": ASK},
    ),
    (
        "incident",
        "The payment API is down: write up the incident.",
        {"write_up": ("Write up an incident.", {"summary": str, "severity": int}), "wait": WAIT},
    ),
    (
        "recipe",
        "Save a recipe for pancakes.",
        {"save": ("Save a recipe.", {"name": str, "ingredients": [str], "minutes": int})},
    ),
    (
        "contact",
        "Add Omar Haddad, phone +33 6 12 34 56 78, to my contacts.",
        {"add": ("Add a contact.", {"name": str, "phone": str}), "ask": ASK},
    ),
    (
        "survey",
        "Record the answer: the customer gave 4 stars and said 'fast delivery'.",
        {"record": ("Record a survey answer.", {"stars": int, "comment": str}), "done": DONE},
    ),
    (
        "grocery",
        "Make a grocery list for a lasagne.",
        {"list": ("Make a shopping list.", {"items": [str]}), "wait": WAIT},
    ),
]

PROMPTS: list[Decision] = [
    Decision(name, "issue-23", f"{prompt} Pick one option.", options)
    for name, prompt, options in _ROWS
]
