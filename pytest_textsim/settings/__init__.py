"""Settings: every setting declared once, and how a value is found and read.

:mod:`.table` holds the table of every setting (``SETTINGS``) and the run's view
of it; :mod:`.resolver` resolves one (marker > command line > environment > ini
> default); :mod:`.converters` reads values; :mod:`.modes` is the record mode of
the judge cache and of replay; :mod:`.tolerances` parses ``max_drop``.
"""
