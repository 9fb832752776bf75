"""Tests of the real runtimes (issue 6): the OpenAI-compatible runtime over a mock transport."""
