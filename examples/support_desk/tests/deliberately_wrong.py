"""A deliberately wrong test, for ``make demo``: it shows the message a mistake fails with.

The file name does not match ``test_*.py``, so the example's own suite never collects it;
``make demo`` runs it by name and expects it to fail. The mistake: the script picks
``refunds``, an option the code under test does not offer (it offers ``refund``). A scripted
fake that accepted it would let a wrong test pass.
"""

from __future__ import annotations

import pytest
from conftest import LOST_PARCEL

from fake_runtimes import pick


@pytest.mark.opdecide(script=[pick("refunds", amount=24.5, reason="lost")])
def test_a_lost_parcel_is_refunded(desk):
    assert desk.route(LOST_PARCEL)["action"] == "refund"
