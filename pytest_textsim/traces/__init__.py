"""What the app did, from its OpenTelemetry spans: live in a test (``agent_trace``),
or read from OTLP JSON or protobuf files (:func:`~pytest_textsim.traces.otlp.load_trace`),
and the assertions over either. No pytest here; OpenTelemetry only for live spans
and protobuf files (the ``otel`` extra). See ``docs/traces.md``.
"""
