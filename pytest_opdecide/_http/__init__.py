"""The HTTP pieces that the runtimes, the question providers and the cassettes share.

Both HTTP stacks of the package (``pytest_opdecide.runtimes``, ``pytest_opdecide.questions``)
and the cassette layer build on this room, so that each of these exists once:

* ``_redaction``: the one list of secret header names, and the one redaction of what a server
  said before a message shows it;
* ``_credentials`` and ``_secrets``: the credentials the package's clients were configured with,
  and every form in which a secret could be written;
* ``_error_answers``: what an HTTP error answer means (status, retry-after, the server's reason);
* ``_replay_routing``: where the package's own clients send while a cassette replays;
* ``_deadline``: the time limit of a whole blocking call, which no server can stretch by sending
  its reply a byte at a time;
* ``_network``: every way out to the network, seen before anything is sent (the plugin's guard
  and the conformance suite's watcher register their checkers there).
"""
