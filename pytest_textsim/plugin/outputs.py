"""Files a run leaves behind: the ``--textsim-json`` and ``--textsim-html`` reports and
the GitHub step summary.

JSON format (``"format": "pytest-textsim/1"``; keys are only ever added)::

    {
      "format": "pytest-textsim/1",
      "header": {
        "package": "pytest-textsim", "version": "0.1.0",
        "created": "2026-11-30T01:23:45Z",          # UTC, when the file was written
        "python": "3.11.9", "pytest": "9.2.0",
        "versions": {"nltk": "3.10.4", "rouge-score": "0.1.2", "sacrebleu": "2.5.1"},
        "evaluators": [                               # each distinct set of parameters
          {"evaluator": "rouge", "params": {"rouge_type": "rougeL"}, "scores": 3}
        ],
        "texts": false,                               # --textsim-json-texts
        "counters": {"judge_calls": 12},              # merged over xdist workers
        "outcomes": {"passed": 7, "failed": 2}        # tests by outcome, scored or not
      },
      "summary": [                                    # one per metric (and variant)
        {"metric": "bleu_score", "count": 4, "mean": 0.61, "min": 0.155, "max": 1.0,
         "passed": 3, "judged": 4, "pass_rate": 0.75}
      ],
      "failures": ["a gate failed: ..."],             # TextsimSession.fail messages
      "scores": [                                     # every recorded score, once
        {"test_id": "tests/test_qa.py::test_capital", "evaluator": "bleu",
         "metric": "bleu_score", "variant": null, "score": 0.155, "threshold": 0.3,
         "passed": false, "test_outcome": "failed", "params": {}, "duration": 0.0004,
         "lengths": {"response": 74, "ground_truth": 31},
         "reason": null, "samples": null,             # judge reason / samples
         "run": null,                                 # 0-based run of a repeated test
         "flaky": false,                              # judge samples straddle the threshold
         "uncalibrated": null,                        # why (textsim_require_calibration)
         "served_model": null, "fingerprint": null}   # what served a judge score
      ],
      "repeats": [                                    # each repeated test, every run
        {"test_id": "tests/test_app.py::test_answer", "passed": 3, "total": 5,
         "requested": 5, "min_pass_rate": 0.8, "min_passes": null, "flaky": true,
         "verdict": "failed", "ended": "",
         "runs": [{"run": 0, "outcome": "passed", "message": ""}, ...]}
      ],
      "gates": [                                      # when the run has gates
        {"expression": "bleu_score.mean >= 0.3", "value": 0.41, "passed": true,
         "detail": "mean of 12 scores", "signature": null, "not_checked": "",
         "line": "PASS bleu_score.mean >= 0.3: 0.410 (mean of 12 scores)",
         "aggregate": 0.41, "interval": null}         # or {"low", "high", "level", "method"}
      ],
      "baseline": {                                   # with --textsim-compare
        "path": "baseline.json", "counts": {"regression": 1, "unchanged": 11, ...},
        "regressions": 1, "unmatched_tolerances": [],
        "changes": [{"kind": "regression", "test": "...", "evaluator": "bleu",
                     "metric": "bleu_score", "index": 0, "old": 0.5, "new": 0.3,
                     "delta": -0.2, "tolerance": 0.02, "why": ""}],
        "metric_regressions": 0, "significance": null, "no_significance": "",
        "metric_tests": [{"metric": "bleu_score", "pairs": 12, "old": 0.5, "new": 0.41,
                          "difference": -0.09, "interval": {...}, "p": 0.01,
                          "p_holm": 0.01, "verdict": "beyond tolerance", ...}],
        "flips": {"pass_to_fail": 1, "fail_to_pass": 0, "tests": 12, "p": 0.5, ...},
        "fingerprints": []                            # judge fingerprint changes
      },
      "sections": [                                   # a pytest_textsim_report_sections
        {"title": "my scores",                        # hook's, when it returned some
         "lines": [{"text": "2 scores", "markup": {}},
                   {"text": "all passed", "markup": {"green": true}}]}
      ]
    }

The ``summary`` (like gates and baselines) counts a repeated test once, with the
mean of its runs; ``scores`` has every run's scores.
``passed`` is the score against its threshold (``null`` when no threshold was
chosen: a fixture call with no threshold from any source records the score
without a verdict); ``threshold_source`` says where the threshold came from
(``"bleu(threshold=...)"``, ``"textsim_threshold_bleu in pytest.ini"``,
``"default"``); ``test_outcome`` is the test's
(``failed`` when any phase failed, else the call's ``passed`` / ``skipped``).
Each score also has ``"texts": {"response": ..., "ground_truth": ...}`` when
``--textsim-json-texts`` is on; otherwise no text is written, only lengths.
Versions come from package metadata: writing the file imports nothing heavy.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from .. import __version__
from ..gating.baseline import write_atomically
from ..records import ScoreRecord
from ..summary import markdown_summary, summarize
from .session import TextsimSession

FORMAT = "pytest-textsim/1"
_VERSIONED = ("nltk", "rouge-score", "sacrebleu", "openai")


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _evaluators(records: list[ScoreRecord]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for record in records:
        key = json.dumps([record.metric_name, record.params], sort_keys=True, default=str)
        entry = seen.setdefault(
            key, {"evaluator": record.metric_name, "params": record.params, "scores": 0}
        )
        entry["scores"] += 1
    return list(seen.values())


def _score(record: ScoreRecord, texts: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "test_id": record.nodeid,
        "evaluator": record.metric_name,
        "metric": record.score_key,
        "variant": record.variant,
        "score": record.score,
        "threshold": record.threshold,
        "passed": record.passed,
        "test_outcome": record.test_outcome,
        "threshold_source": record.threshold_source,
        "params": record.params,
        "duration": round(record.duration, 6),
        "lengths": record.lengths,
        "reason": record.reason,
        "samples": record.samples,
        "run": record.run,
        "flaky": record.flaky,
        "uncalibrated": record.uncalibrated or None,
        "served_model": record.served_model or None,
        "fingerprint": record.fingerprint or None,
    }
    if record.details:
        # The claims and chunks of a RAG score, each with its verdict.
        data["details"] = record.details
    if texts and record.texts is not None:
        data["texts"] = record.texts
    return data


def json_document(session: TextsimSession, texts: bool | None = None) -> dict[str, Any]:
    """The ``--textsim-json`` document for ``session`` (see the module docstring).

    ``texts`` overrides ``--textsim-json-texts`` (the HTML report always has them).
    """
    records, repeats = session.records, session.store.repeats
    if texts is None:
        texts = bool(session.resolver.get("json_texts"))
    created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "format": FORMAT,
        "header": {
            "package": "pytest-textsim",
            "version": __version__,
            "created": created,
            "python": platform.python_version(),
            "pytest": pytest.__version__,
            "versions": {name: _version(name) for name in _VERSIONED},
            "evaluators": _evaluators(records),
            "texts": texts,
            "counters": dict(session.counters),
            "outcomes": dict(Counter(session.store.outcomes.values())),
        },
        "summary": [
            {
                "metric": s.label,
                "count": s.count,
                "mean": s.mean,
                "min": s.min,
                "max": s.max,
                "passed": s.passed,
                "judged": s.judged,
                "pass_rate": s.pass_rate,
            }
            for s in summarize(session.per_test)
        ],
        "failures": list(session.verdicts.failures),
        "scores": [_score(r, texts) for r in records],
        "repeats": [{"test_id": test, **summary} for test, summary in repeats.items()],
        **session.report.data,
    }


def _title(session: TextsimSession) -> str:
    return f"textsim report: {session.config.rootpath.name}"


def _relative(path: Path, start: Path) -> str:
    try:
        return str(path.relative_to(start))
    except ValueError:
        return str(path)


def write_outputs(session: TextsimSession) -> None:
    """Write the JSON and HTML files (failing the run when one cannot be written) and
    the GitHub step summary (a warning line when it cannot)."""
    path = session.path_setting("json")
    if path is not None:
        try:
            text = json.dumps(json_document(session), indent=2, default=str)
            write_atomically(path, text + "\n")
        except OSError as exc:
            source = session.resolver.resolve("json").source
            session.fail(f"cannot write the JSON report {path} ({source}): {exc.strerror or exc}")
    html_path = session.path_setting("html")
    if html_path is not None:
        from ..html import write as write_html

        try:
            write_html(html_path, json_document(session, texts=True), title=_title(session))
        except OSError as exc:
            source = session.resolver.resolve("html").source
            session.fail(
                f"cannot write the HTML report {html_path} ({source}): {exc.strerror or exc}"
            )
        else:
            shown = _relative(html_path, session.config.invocation_params.dir)
            session.add_section("textsim outputs", lambda: [f"HTML report: {shown}"])
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        lines = list(markdown_summary(session.per_test, session.verdicts.failures))
        if lines:
            try:
                with open(summary_file, "a", encoding="utf-8") as handle:
                    handle.write("\n".join(lines) + "\n")
            except OSError as exc:
                # A convenience copy of the terminal report: say so, but a run whose
                # tests and gates passed stays green (the JSON report, asked for, fails).
                line = (
                    f"warning: cannot append to GITHUB_STEP_SUMMARY {summary_file}: "
                    f"{exc.strerror or exc}; the job summary lacks the scores"
                )
                session.add_section("textsim outputs", lambda: [(line, {"yellow": True})])
