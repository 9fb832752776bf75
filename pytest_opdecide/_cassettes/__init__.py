"""Cassettes: real model traffic recorded once (vcrpy underneath) and replayed offline.

``_cassette`` opens one cassette for a block of code (:func:`use_cassette`) and holds its
errors; the rest of the room, in the order a replayed request meets it:

* ``_file`` reads and writes one cassette file (whole or not at all), in the readable format of
  ``_yaml_format``; ``_yaml_loader`` reads its YAML in time and memory at most linear in its
  size, and ``_shape`` refuses whatever lies outside the layout the library writes;
* ``_tape`` holds the recorded interactions and which were replayed, ``_matching`` decides which
  one a request gets (and shows the diff when none does);
* ``_replay_transport`` answers the package's own HTTP clients from the tape, ``_vcr``
  configures vcrpy (through its documented extension points) for every other client;
* ``_scrub`` keeps every credential out of what is written, ``_log_filters`` out of the logs.
"""

from __future__ import annotations

__all__ = ["RECORD_MODES"]

RECORD_MODES = ("none", "once", "new_episodes", "all", "rewrite")
"""The record modes: vcrpy's four, and ``rewrite`` (``all``, keeping nothing of the old file).

Defined here, in the room's light front module, so that the plugin's settings read the same
tuple at start-up without loading the cassette machinery (vcrpy, PyYAML)."""
