"""The HTML report: plots, a sortable table and aligned texts, in one self-contained file.

>>> from pytest_textsim.html import render
>>> page = render({"scores": [{"test_id": "t::a", "metric": "bleu_score", "score": 0.2,
...                            "threshold": 0.3, "passed": False}]})
>>> page.startswith("<!DOCTYPE html>") and "default-src 'none'" in page
True
"""

from __future__ import annotations

from .model import EXPLAIN_LIMIT
from .page import render, script_json, write
from .sources import ReportSourceError, load

__all__ = ["EXPLAIN_LIMIT", "ReportSourceError", "load", "render", "script_json", "write"]
