"""Baselines in ``textsim score``: ``--compare``, ``--fail-on-regression``, ``--save-baseline``.

The same comparison as pytest's ``--textsim-compare`` (:func:`..gating.compare.compare`:
tolerances, paired bootstrap, Holm, ``--significance``), the same report lines
(:func:`..gating.regressions.report_lines`) and the same rule for saving: a
failing run (rows that could not be scored, a failed gate, regressions with
``--fail-on-regression``) leaves the baseline as it was unless
``--save-baseline-force`` is given; so does a baseline file that exists and
cannot be read (a usage error before any row is scored), and one that already
holds this run's scores is left alone (``unchanged``). Each row is a test of the
baseline, named by its ``--id-field`` value, else ``row N`` (its line number).

The ``textsim_compare`` and ``textsim_save_baseline`` keys of the project's
pytest configuration are the test suite's baseline and are not applied; the
tolerances and significance level are read as pytest reads them.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..engine.plan import UsageError
from ..errors import ConfigError
from ..formatting import plural
from ..settings.table import Resolver


def add_baseline_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the baseline flags of ``textsim score``."""
    group = parser.add_argument_group("baselines (as pytest's --textsim-compare and friends)")
    group.add_argument(
        "--compare",
        metavar="BASE.json",
        help="compare each row's scores with a baseline saved by --save-baseline and print "
        "the regressions",
    )
    group.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a score (or, with --significance, a metric) regressed",
    )
    group.add_argument(
        "--save-baseline",
        metavar="BASE.json",
        help="write this run's scores as a baseline (not when the run failed: rows that "
        "could not be scored, a failed gate, regressions with --fail-on-regression)",
    )
    group.add_argument(
        "--save-baseline-force",
        action="store_true",
        help="write the baseline even when the run failed, and say so",
    )
    group.add_argument(
        "--max-drop",
        action="append",
        default=[],
        metavar="X|METRIC=X",
        help="tolerated drop: for every metric (0.05) or one (bleu_score=0.05); repeatable "
        "(default: TEXTSIM_MAX_DROP, else textsim_max_drop, else 0.02, judge metrics 0)",
    )
    group.add_argument(
        "--significance",
        metavar="ALPHA",
        help="a drop is a regression only when also significant at ALPHA (paired bootstrap "
        "per metric, Holm-corrected), e.g. 0.05 (default: TEXTSIM_SIGNIFICANCE, else "
        "textsim_significance, else the tolerance alone)",
    )


def baseline_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the baseline flags give (``None``: not given)."""
    return {"max_drop": args.max_drop or None, "significance": args.significance}


@dataclass
class Baselines:
    """What a ``textsim score`` run compares with and saves to."""

    compare_path: str | None = None
    save_path: str | None = None
    fail_on_regression: bool = False
    force: bool = False
    old: Any = None  # the baseline compared with, read before any row is scored
    tolerances: Any = None
    significance: float | None = None
    seed: int = 12345

    @property
    def wanted(self) -> bool:
        """Whether the run keeps every row's scores (for a comparison or a baseline)."""
        return bool(self.compare_path or self.save_path)

    @classmethod
    def from_arguments(cls, args: argparse.Namespace, resolver: Resolver) -> Baselines:
        """The flags checked and the baseline read; :class:`UsageError` says what is wrong."""
        from ..gating.baseline import BaselineError, load_baseline
        from ..settings.tolerances import parse_tolerances

        problems = []
        if args.fail_on_regression and not args.compare:
            problems.append("--fail-on-regression needs --compare BASE.json")
        if args.save_baseline_force and not args.save_baseline:
            problems.append("--save-baseline-force needs --save-baseline BASE.json")
        if (args.max_drop or args.significance) and not args.compare:
            problems.append("--max-drop and --significance need --compare BASE.json")
        if problems:
            raise UsageError("\n".join(problems))
        baselines = cls(args.compare, args.save_baseline, args.fail_on_regression,
                        args.save_baseline_force)  # fmt: skip
        baselines._check_readable()
        if not args.compare:
            return baselines
        try:
            baselines.tolerances = resolver.get("max_drop") or parse_tolerances([])
            baselines.significance = resolver.get("significance")
            baselines.seed = int(resolver.get("bootstrap_seed"))
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        if not Path(args.compare).exists():
            raise UsageError(
                f"--compare {args.compare}: no such file; save one with "
                f"textsim score ... --save-baseline {args.compare}"
            )
        try:
            # Read now: a bad file is an error before any row is scored, and saving
            # to the same path at the end still compares with the old file.
            baselines.old = load_baseline(args.compare)
        except BaselineError as exc:
            raise UsageError(f"--compare: {exc}") from None
        if baselines.old.scored:
            raise UsageError(
                f"--compare {args.compare}: textsim score output holds the scores but not the "
                "metrics' parameters (ROUGE type, judge model); compare with a baseline saved "
                "by --save-baseline, or two outputs with textsim compare"
            )
        return baselines

    def _check_readable(self) -> None:
        """A usage error when the file to save exists and cannot be read (unless forced):
        it may be a newer format, or hold a merge conflict someone has to resolve."""
        from ..gating.baseline import BaselineError, load_baseline

        if self.save_path is None or self.force or not Path(self.save_path).is_file():
            return
        try:
            load_baseline(self.save_path)
        except BaselineError as exc:
            raise UsageError(
                f"--save-baseline: {exc}; this run would replace the file and cannot read "
                "it, so it is kept as it was: fix it, or pass --save-baseline-force to "
                "replace it with this run's scores"
            ) from None

    def finish(
        self, out: IO[str], tally: Any, info: Sequence[Any], bad_rows: int, failed_gates: int
    ) -> bool:
        """Compare and save as asked, printing what was done; whether the run fails
        because scores regressed (with ``--fail-on-regression``)."""
        if not self.wanted:
            return False
        from ..gating import baseline
        from ..records import ScoreRecord

        records = [
            ScoreRecord(
                info[index].evaluator, key, score, None, None, params=dict(info[index].params),
                nodeid=test, variant=info[index].variant,
            )
            for test, index, key, score in tally.kept
        ]  # fmt: skip
        regressed = ""
        if self.compare_path is not None:
            regressed = self._compare(out, baseline.entries_from_records(records))
        if self.save_path is not None:
            problems = []
            if bad_rows:
                problems.append(f"{plural(bad_rows, 'row')} could not be scored")
            if failed_gates:
                problems.append(f"{plural(failed_gates, 'gate')} failed")
            if regressed:
                problems.append(f"{regressed} regressed")
            self._save(out, records, problems)
        return bool(regressed)

    def _compare(self, out: IO[str], current: list[Any]) -> str:
        """Print the regressions; what regressed when that fails the run ("" when not)."""
        from ..gating.compare import compare, unmatched
        from ..gating.regressions import regressed, report_lines
        from .common import cli_flag

        assert self.compare_path is not None
        problem = unmatched(
            self.old.entries, (e.test for e in current), old_name=self.compare_path,
            new_name="this run", fix="score the rows with the --id-field the baseline was saved "
            "with (without it a row is 'row N', its line number)",
        )  # fmt: skip
        if problem:
            raise UsageError(f"--compare: {problem}")
        comparison = compare(
            self.old.entries,
            current,
            self.tolerances,
            significance=self.significance,
            seed=self.seed,
            old_version=self.old.version,
            old_corpus=self.old.corpus,
            old_name=self.compare_path,
        )
        print(f"regressions against {self.compare_path}:", file=out)
        for line in report_lines(comparison, self.compare_path, cli_flag):
            print(f"  {line}", file=out)
        what = regressed(comparison)
        if not (what and self.fail_on_regression):
            return ""
        print(f"FAILED: {what} regressed against {self.compare_path} (--fail-on-regression)",
              file=out)  # fmt: skip
        return what

    def _save(self, out: IO[str], records: list[Any], problems: list[str]) -> None:
        from ..gating import baseline

        assert self.save_path is not None
        path = Path(self.save_path)
        if problems and not self.force:
            kept = f"kept {path} as it was" if path.exists() else f"did not write {path}"
            print(f"baseline: {kept}: {', '.join(problems)} "
                  "(--save-baseline-force writes it anyway)", file=out)  # fmt: skip
            return
        unreadable = ""
        try:
            old = baseline.load(path) if path.is_file() else None
        except baseline.BaselineError as exc:
            # Checked at the start: forced, or changed since.
            old, unreadable = None, str(exc)
            if not self.force:
                raise UsageError(f"--save-baseline: {exc}; kept as it was") from None
        entries = baseline.entries_from_records(records)
        try:
            written = baseline.write(path, entries)
        except OSError as exc:
            raise UsageError(f"--save-baseline {path}: cannot write it ({exc.strerror})") from None
        change = baseline.describe_same_or_replaced(
            entries, written=written, unreadable=unreadable
        ) or baseline.describe_change(old, entries)
        forced = f" (forced despite: {', '.join(problems)})" if problems else ""
        print(f"baseline: saved {path}: {change}{forced}", file=out)
