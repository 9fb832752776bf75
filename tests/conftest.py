"""Shared configuration of the test suite."""

pytest_plugins = ["pytester"]
