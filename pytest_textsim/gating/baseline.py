"""Baselines: save a run's scores, compare a later run with them, list what got worse.

A baseline is a small JSON file meant to be committed. It holds one line per
recorded score, sorted by test id, so a diff in review shows exactly which
scores moved::

    {
      "format": "pytest-textsim baseline",
      "version": 1,
      "scores": [
        {"test": "tests/test_qa.py::test_capital", "evaluator": "bleu", "metric": "bleu_score", "params": {}, "score": 0.412},
        ...
      ]
    }

Scores are matched by test id, evaluator, metric and, when one test records
the same metric several times, the order of the calls. A score whose evaluator
parameters differ from the baseline's (another ROUGE type, a new judge prompt
version, another judge model) is *not compared*: the comparison says so and
asks for a new baseline, since the old number measured something else.
"""  # noqa: E501

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalog import higher_is_better
from ..formatting import alike, plural, table
from ..records import ScoreRecord
from .tolerances import Tolerances

FORMAT = "pytest-textsim baseline"
VERSION = 1
REPORT_FORMAT = "pytest-textsim/"  # --textsim-json reports: "pytest-textsim/1"

# Scores are recomputed from the same text, yet summing floats in another order
# can move the last digit; never call that a regression.
_EPSILON = 1e-9


class BaselineError(ValueError):
    """A baseline or report file cannot be read; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Entry:
    """One score in a baseline."""

    test: str
    evaluator: str
    metric: str
    score: float
    params: dict[str, Any] = field(default_factory=dict)
    variant: str = ""  # ROUGE's rouge_type: rouge1 and rougeL are different scores
    index: int = 0  # the n-th score of this evaluator, variant and metric within the test

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        return (self.test, self.evaluator, self.variant, self.metric, self.index)

    @property
    def label(self) -> str:
        """The metric as reports show it: ``rouge_f1_score (rougeL)``."""
        return f"{self.metric} ({self.variant})" if self.variant else self.metric

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "test": self.test,
            "evaluator": self.evaluator,
            "metric": self.metric,
            **({"variant": self.variant} if self.variant else {}),
            "params": self.params,
            "score": self.score,
        }
        if self.index:
            data["index"] = self.index
        return json.dumps(data, ensure_ascii=False, sort_keys=False, default=str)


def entries_from_records(records: Iterable[ScoreRecord]) -> list[Entry]:
    """Baseline entries for ``records``, sorted, with call order kept within a test."""
    def group(r: ScoreRecord) -> tuple[str, str, str, str]:
        return (r.nodeid, r.evaluator, r.variant or "", r.metric)

    seen: dict[tuple[str, str, str, str], int] = {}
    entries = []
    for record in sorted(records, key=group):  # stable: call order kept within a group
        if not math.isfinite(record.score):
            # NaN or Infinity would make the file invalid JSON and every comparison
            # of it "unchanged"; record() refuses them, so this is a last guard.
            raise ValueError(
                f"{record.nodeid}: {record.metric} is {record.score!r}, not a finite number; "
                "a baseline holds only finite scores"
            )
        index = seen.get(group(record), 0)
        seen[group(record)] = index + 1
        params = json.loads(json.dumps(record.params, sort_keys=True, default=str))
        entries.append(
            Entry(
                record.nodeid,
                record.evaluator,
                record.metric,
                float(record.score),
                params,
                record.variant or "",
                index,
            )
        )
    return entries


def dumps(entries: Sequence[Entry]) -> str:
    """The baseline file's text: one score per line so diffs stay readable."""
    body = ",\n".join("    " + entry.to_json() for entry in entries)
    scores = f"[\n{body}\n  ]" if entries else "[]"
    return (
        "{\n"
        f'  "format": {json.dumps(FORMAT)},\n'
        f'  "version": {VERSION},\n'
        f'  "scores": {scores}\n'
        "}\n"
    )


def save(path: str | os.PathLike[str], records: Iterable[ScoreRecord]) -> list[Entry]:
    """Write ``records`` as a baseline to ``path`` (atomically) and return its entries.

    Missing parent folders are created, as for ``--textsim-json``. The file gets
    the usual permissions (0644 under the common umask 022): it is meant to be
    committed and read by others. Raises ``OSError`` when it cannot be written.
    """
    entries = entries_from_records(records)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write next to the target and rename, so an interrupted run never leaves
    # half a file. Not tempfile.mkstemp: its files are 0600, and a baseline is
    # shared; os.open with 0o666 lets the umask decide, like any new file.
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(dumps(entries))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return entries


def describe_change(old: Sequence[Entry] | None, new: Sequence[Entry]) -> str:
    """How a baseline about to replace ``old`` differs from it, in one line.

    ``70 -> 52 scores: 18 tests no longer scored (t::a, t::b, ...), 3 scores changed``;
    ``new file, 52 scores of 20 tests`` when there was no file.
    """
    new_tests = {e.test for e in new}
    if old is None:
        return f"new file, {plural(len(new), 'score')} of {plural(len(new_tests), 'test')}"
    old_tests = {e.test for e in old}
    before = {e.key: e.score for e in old}
    after = {e.key: e.score for e in new}
    gone = sorted(old_tests - new_tests)
    added = sorted(new_tests - old_tests)
    changed = sum(1 for key, score in after.items() if key in before and before[key] != score)
    kept = old_tests & new_tests
    dropped = sum(1 for key in before if key not in after and key[0] in kept)
    extra = sum(1 for key in after if key not in before and key[0] in kept)
    parts = []
    if gone:
        shown = ", ".join(gone[:3]) + (", ..." if len(gone) > 3 else "")
        parts.append(f"{plural(len(gone), 'test')} no longer scored ({shown})")
    if added:
        parts.append(f"{plural(len(added), 'test')} newly scored")
    if dropped:
        parts.append(f"{plural(dropped, 'score')} fewer in tests still scored")
    if extra:
        parts.append(f"{plural(extra, 'score')} more in tests still scored")
    if changed:
        parts.append(f"{plural(changed, 'score')} changed")
    summary = f"{len(old)} -> {plural(len(new), 'score')}"
    return f"{summary}: {', '.join(parts)}" if parts else f"{summary}, unchanged"


def load(path: str | os.PathLike[str]) -> list[Entry]:
    """Read a baseline, or a ``--textsim-json`` report, as baseline entries."""
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BaselineError(
            f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start + 1}); a baseline is "
            "the UTF-8 JSON that --textsim-save-baseline writes"
        ) from None
    except FileNotFoundError:
        raise BaselineError(
            f"{where}: no such file; create it with --textsim-save-baseline={where}"
        ) from None
    except OSError as exc:
        raise BaselineError(f"{where}: cannot read it ({exc.strerror})") from None
    from ..jsonl import loads

    try:
        data = loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{where}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except ValueError as exc:  # nested too deeply, or a lone surrogate
        raise BaselineError(f"{where}: {exc}") from None
    return parse(data, where)


def parse(data: Any, where: str) -> list[Entry]:
    """Entries from parsed JSON: a baseline, or a JSON report with a list of records."""
    if isinstance(data, dict) and data.get("format") == FORMAT:
        if not isinstance(data.get("version"), int) or data["version"] > VERSION:
            raise BaselineError(
                f"{where}: baseline format version {data.get('version')!r} is newer than this "
                f"pytest-textsim understands ({VERSION}); upgrade pytest-textsim"
            )
        rows = data.get("scores")
        test_key = "test"
    elif isinstance(data, dict) and str(data.get("format", "")).startswith(REPORT_FORMAT):
        rows = data.get("scores")
        test_key = "test_id"
    else:
        raise BaselineError(
            f"{where}: not a pytest-textsim baseline or --textsim-json report (expected an "
            f"object with \"format\": {FORMAT!r} or {REPORT_FORMAT + '1'!r})"
        )
    if not isinstance(rows, list):
        raise BaselineError(f"{where}: \"scores\" must be a list")
    if test_key == "test":
        return [_entry(row, n, where) for n, row in enumerate(rows, 1)]
    # A report holds records in run order: number repeated metrics the way save() does.
    records = [_record(row, n, where) for n, row in enumerate(rows, 1)]
    return entries_from_records(records)


def _entry(row: Any, n: int, where: str) -> Entry:
    try:
        score = row["score"]
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise TypeError
        if not math.isfinite(score):  # NaN/Infinity, which json.loads accepts
            raise ValueError
        params = row.get("params", {})
        if not isinstance(params, dict):
            raise TypeError
        return Entry(
            str(row["test"]),
            str(row["evaluator"]),
            str(row["metric"]),
            float(score),
            params,
            str(row.get("variant") or ""),
            int(row.get("index", 0)),
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        raise BaselineError(
            f"{where}: score #{n} must be an object with test, evaluator, metric, params and a "
            f"finite numeric score; got {json.dumps(row, default=str)[:120]}"
        ) from None


def _record(row: Any, n: int, where: str) -> ScoreRecord:
    try:
        score = row["score"]
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise TypeError
        if not math.isfinite(score):  # NaN/Infinity, which json.loads accepts
            raise ValueError
        return ScoreRecord(
            evaluator=str(row["evaluator"]),
            metric=str(row["metric"]),
            score=float(score),
            threshold=None,
            passed=None,
            params=dict(row.get("params") or {}),
            nodeid=str(row["test_id"]),
            variant=row.get("variant") or None,
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        raise BaselineError(
            f"{where}: score #{n} must have test_id, evaluator, metric and a finite numeric score; "
            f"got {json.dumps(row, default=str)[:120]}"
        ) from None


# -- comparison -----------------------------------------------------------------

REGRESSION = "regression"
IMPROVEMENT = "improvement"
UNCHANGED = "unchanged"
NEW = "new"
VANISHED = "vanished"  # in the baseline; its test is gone or no longer records it
NOT_RUN = "not run"  # in the baseline; its test was deselected, skipped or not collected
INCOMPARABLE = "incomparable"


@dataclass(frozen=True)
class Change:
    """How one score moved between the baseline and this run."""

    kind: str
    test: str
    evaluator: str
    metric: str  # with the variant, as reports show it: "rouge_f1_score (rougeL)"
    old: float | None
    new: float | None
    tolerance: float = 0.0
    why: str = ""  # for INCOMPARABLE: which parameters differ
    index: int = 0  # the n-th score of this metric in the test (Entry.index)

    @property
    def delta(self) -> float | None:
        if self.old is None or self.new is None:
            return None
        return self.new - self.old


@dataclass
class Comparison:
    """Every score of the baseline and of this run, classified."""

    changes: list[Change]
    # Per-metric tolerances that name no metric of either side (a typo such as
    # blue_score): listed, since they silently leave the default in force.
    unmatched_tolerances: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)  # the metrics of both sides

    def of(self, kind: str) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def regressions(self) -> list[Change]:
        return self.of(REGRESSION)

    def to_dict(self, path: str = "") -> dict[str, Any]:
        """The comparison as the JSON report (and the HTML report) show it."""
        return {
            "path": path,
            "counts": self.counts(),
            "regressions": len(self.regressions),
            "unmatched_tolerances": list(self.unmatched_tolerances),
            "changes": [
                {
                    "kind": change.kind,
                    "test": change.test,
                    "evaluator": change.evaluator,
                    "metric": change.metric,
                    "index": change.index,
                    "old": change.old,
                    "new": change.new,
                    "delta": change.delta,
                    "tolerance": change.tolerance,
                    "why": change.why,
                }
                for change in self.changes
            ],
        }

    def counts(self) -> dict[str, int]:
        """How many *scores* are of each kind."""
        kinds = (REGRESSION, IMPROVEMENT, UNCHANGED, NEW, VANISHED, NOT_RUN, INCOMPARABLE)
        return {kind: len(self.of(kind)) for kind in kinds}


def compare(
    old: Sequence[Entry],
    new: Sequence[Entry],
    tolerances: Tolerances | None = None,
    *,
    not_run: Callable[[str], bool] | None = None,
) -> Comparison:
    """Classify every score of ``old`` (the baseline) and ``new`` (this run).

    A baseline score missing from ``new`` is ``NOT_RUN`` when ``not_run(test_id)``
    says its test did not run this time (deselected with ``-k``, skipped, outside
    the paths given), else ``VANISHED``: the test is gone or stopped recording it.
    Without ``not_run`` (two files compared) every missing score is ``VANISHED``.
    """
    tolerances = tolerances or Tolerances()
    old_by_key = {e.key: e for e in old}
    new_by_key = {e.key: e for e in new}
    changes = []
    for key in sorted(old_by_key.keys() | new_by_key.keys()):
        before, after = old_by_key.get(key), new_by_key.get(key)
        ref = before or after
        assert ref is not None
        where = (ref.test, ref.evaluator, ref.label)
        if before is None or after is None:
            if before is None:
                kind = NEW
            else:
                kind = NOT_RUN if not_run is not None and not_run(before.test) else VANISHED
            old_score = before.score if before else None
            new_score = after.score if after else None
            changes.append(Change(kind, *where, old_score, new_score, index=ref.index))
            continue
        if before.params != after.params:
            why = _params_diff(before.params, after.params)
            changes.append(
                Change(INCOMPARABLE, *where, before.score, after.score, why=why, index=ref.index)
            )
            continue
        tolerance = tolerances.for_metric(before.metric, before.evaluator)
        lower_better = not higher_is_better(before.metric, before.evaluator)
        drop = (after.score - before.score) if lower_better else (before.score - after.score)
        if drop > tolerance + _EPSILON:
            kind = REGRESSION
        elif -drop > tolerance + _EPSILON:
            kind = IMPROVEMENT
        else:
            kind = UNCHANGED
        changes.append(
            Change(kind, *where, before.score, after.score, tolerance, index=ref.index)
        )
    metrics = sorted({e.metric for e in (*old, *new)})
    unmatched = [name for name in tolerances.per_metric if name not in metrics]
    return Comparison(changes, unmatched, metrics)


def _params_diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    parts = []
    for name in sorted(old.keys() | new.keys()):
        if old.get(name) != new.get(name):
            before = _short(old[name]) if name in old else "(unset)"
            after = _short(new[name]) if name in new else "(unset)"
            parts.append(f"{name} {before} -> {after}")
    return ", ".join(parts)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


# -- report ---------------------------------------------------------------------

_LIST_LIMIT = 10  # improvements shown
_TESTS_LIMIT = 5  # new / vanished tests shown: a brief list, the JSON report has all


#: Headings of the brief lists; the summary line counts the same kinds by these words.
_MISSING = (
    (NEW, "new, not in the baseline"),
    (VANISHED, "vanished, in the baseline but no longer recorded"),
    (NOT_RUN, "not run, in the baseline but deselected, skipped or not collected"),
)


def report_lines(comparison: Comparison, baseline: str = "the baseline") -> Iterator[str]:
    """The ``textsim regressions`` section: regressions in full, the rest briefly.

    Every count is of scores; lists of tests say how many tests and scores they hold.
    """
    counts = comparison.counts()
    regressions = comparison.regressions
    if regressions:
        rows: list[tuple[str, ...]] = [("test", "metric", "baseline", "now", "change", "tolerance")]
        for c in regressions:
            numbers = alike([c.old, c.new, c.delta or 0.0, c.tolerance], signed=(2,))
            rows.append((c.test, c.metric, *numbers))
        yield from table(rows)
    else:
        yield f"no regressions against {baseline}"
    improvements = comparison.of(IMPROVEMENT)
    if improvements:
        yield f"improved ({plural(len(improvements), 'score')}):"
        for c in improvements[:_LIST_LIMIT]:
            old, new = alike([c.old, c.new])
            yield f"  {c.test} {c.metric} {old} -> {new}"
        if len(improvements) > _LIST_LIMIT:
            yield f"  ... and {len(improvements) - _LIST_LIMIT} more"
    for kind, label in _MISSING:
        changes = comparison.of(kind)
        if changes:
            tests = len({c.test for c in changes})
            yield f"{label} ({plural(tests, 'test')}, {plural(len(changes), 'score')}):"
            yield from _brief_tests(changes)
    incomparable = comparison.of(INCOMPARABLE)
    if incomparable:
        yield (
            f"not compared ({plural(len(incomparable), 'score')}): the evaluator parameters "
            "differ from the baseline's, so the scores measure different things; save a new "
            "baseline with --textsim-save-baseline"
        )
        groups: dict[tuple[str, str], list[Change]] = {}
        for c in incomparable:
            groups.setdefault((c.evaluator, c.why), []).append(c)
        for (evaluator, why), group in groups.items():
            yield f"  {evaluator}: {why} ({plural(len(group), 'score')}, e.g. {group[0].test})"
    for name in comparison.unmatched_tolerances:
        here = ", ".join(comparison.metrics) or "none"
        yield f"tolerance for {name!r} matches no score; metrics here: {here}"
    yield (
        f"scores: {counts[REGRESSION]} regressed, {counts[IMPROVEMENT]} improved, "
        f"{counts[UNCHANGED]} unchanged, {counts[NEW]} new, {counts[VANISHED]} vanished"
        + (f", {counts[NOT_RUN]} not run" if counts[NOT_RUN] else "")
        + (f", {counts[INCOMPARABLE]} not compared" if counts[INCOMPARABLE] else "")
    )


def _brief_tests(changes: list[Change]) -> Iterator[str]:
    by_test: dict[str, list[str]] = {}
    for c in changes:
        metrics = by_test.setdefault(c.test, [])
        if c.metric not in metrics:
            metrics.append(c.metric)
    tests = list(by_test.items())
    for test, metrics in tests[:_TESTS_LIMIT]:
        yield f"  {test} ({', '.join(metrics)})"
    if len(tests) > _TESTS_LIMIT:
        more = len(tests) - _TESTS_LIMIT
        yield f"  ... and {more} more test{'s' if more != 1 else ''}"
