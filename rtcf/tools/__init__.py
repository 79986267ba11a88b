"""Tools that look at a running system from outside: print, record, replay, inject, graph.

The modules, for the command-line tools and the web view alike:

* ``address``  (no ORB) rtshell addresses: ``parse_address("localhost:2809/h.host_cxt/
  DCM0.rtc:q")`` -> ``Address(server, path, port)``; ``nameservers_from_env()``.
* ``model``    (no ORB) the system as dataclasses: ``Snapshot`` (components, ECs, errors),
  ``ComponentInfo``, ``PortInfo``, ``ConnectorInfo``, ``ContextInfo``; JSON via ``to_json``.
* ``values``   (no ORB) samples as plain values, user values checked against a type
  (``parse_value``), JSON Schema and OMG IDL of a type.
* ``session``  (CORBA) ``Session(nameservers)``: ``snapshot()``, ``component(addr)``,
  ``port(addr, direction)`` -> ``PortHandle``; ``ToolError`` for one-line user errors.
* ``tap``      (CORBA) ``Tap(session, handle, SampleQueue(n))``: a connection from an out
  port into this process, samples ``(key, receive ns, CDR bytes)`` in a bounded queue that
  drops and counts; ``Injector(session, handle).write(sample)`` for in ports.
* ``mcapio``   MCAP channels, schemas and encodings (``json`` or ``cdr``), reading back.
* ``cli``, ``graph``: the ``rtcf-print``, ``rtcf-record``, ``rtcf-play``, ``rtcf-inject``
  and ``rtcf-graph`` commands.

omniORB is imported only by ``session``, ``tap`` and the commands that use them.
"""
