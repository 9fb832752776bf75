"""Tests of the next-step decision library (issue 2): menus, parsing, runtimes and agents."""
