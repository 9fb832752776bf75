"""The next-step decision: options offered, the model's pick parsed, validated and resolved.

The room behind the public modules ``pytest_opdecide`` (runtimes, agents, messages, the call
trace), ``pytest_opdecide.decision`` and ``pytest_opdecide.options``. Nothing here does I/O: a
runtime subclass makes the model call, everything else is shared by every runtime, real or fake.

How a call of ``decision.make(prompt, options)`` flows through the room:

* ``_options``: the option forms (dict, list, functions, values, schemas), each entry read by
  ``_option_forms``, built into one :class:`~pytest_opdecide._nextstep._options.Menu`, cached
  and rendered as the menu text;
* ``_field_types``: each field's type, what the menu shows of it and the pydantic-core schema
  that checks it, read from annotations and schema notation by ``_annotations``; with
  ``_response_schema`` (the menu as a JSON schema, for structured decisions) and ``_values``
  (values of every field type, drawn for the seeded fakes and the strategies);
* ``_validation``: one compiled validator per option, its failures explained in the
  reference's words;
* ``_procedure``: the decision procedure (parse, validate, re-pick, resolve) as a sans-IO
  generator of ``_steps``, with ``_extract`` (the pick found in a reply) and
  ``_decision_errors``;
* ``_runtime``: the :class:`~pytest_opdecide.Runtime` base class, which drives the procedures
  sync or async, runs the native tool loop and keeps the ``_trace``; ``_messages`` and
  ``_content`` are the data it exchanges;
* ``_agent``, ``_binding`` and ``_adapter``: ``Agent`` classes and ``agent()``, the runtime bound
  by the enclosing call, and any object with an ``exec`` method used as a runtime.
"""
