"""The menus the model reads, snapshotted next to this file (tests/__menus__/)."""

from __future__ import annotations

from support_desk import HANDLE_CHOICES, ROUTE_OPTIONS


def test_route_menu(menu_snapshot):
    menu_snapshot.assert_match(ROUTE_OPTIONS)


def test_handle_menu(menu_snapshot):
    menu_snapshot.assert_match(HANDLE_CHOICES)
