"""The next-step decision: options offered, the model's pick parsed, validated and resolved.

The room behind the public modules ``pytest_opdecide`` (runtimes, agents, messages, the call
trace), ``pytest_opdecide.decision`` and ``pytest_opdecide.options``. Nothing here does I/O: a
runtime subclass makes the model call, everything else is shared by every runtime, real or fake.

How a call of ``decision.make(prompt, options)`` flows through the room:

* ``_option_forms`` reads each entry of the option forms (dict, list, functions, values,
  schemas) once; ``_options`` builds the :class:`~pytest_opdecide._nextstep._options.Menu` from
  those readings (caching it) and renders the menu text;
* ``_field_types``: each field's type and what the menu shows of it; ``_annotations`` reads
  annotations and schema notation into those types, ``_validation`` checks what the model sent
  with pydantic, ``_values`` draws valid (and wrong) values of each type, for the fakes and the
  strategies; ``_response_schema`` is the menu as a JSON schema, for structured decisions;
* ``_procedure``: the decision procedure (parse, validate, re-pick, resolve) as a sans-IO
  generator of ``_steps``, with ``_extract`` (the pick found in a reply) and
  ``_decision_errors``;
* ``_runtime``: the :class:`~pytest_opdecide.Runtime` base class, which drives the procedures
  sync or async, runs the native tool loop and keeps the ``_trace``; ``_messages`` and
  ``_content`` are the data it exchanges;
* ``_agent``, ``_binding`` and ``_adapter``: ``Agent`` classes and ``agent()``, the runtime bound
  by the enclosing call, and any object with an ``exec`` method used as a runtime.
"""
