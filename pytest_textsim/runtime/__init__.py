"""What a run is and how its steps are carried out, below every concern.

:mod:`.run` holds the state of one pytest run (or script) and the ContextVar it
is found through; :mod:`.steps` has the two drivers that carry out a step
generator's effects, blocking (``drive``) or awaiting (``adrive``), the model
requests among them inside :mod:`.untraced` (no OpenTelemetry spans).
"""
