"""Tests of the fakes (issue 4): scripted runtimes, seeded picks, fake providers and contexts."""
