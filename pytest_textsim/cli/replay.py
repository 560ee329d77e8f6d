"""``textsim replay stats|prune``: list the replay cassettes, remove those of tests gone.

The folder is the one pytest would use when started here: ``textsim_replay_dir``
from ``TEXTSIM_REPLAY_DIR`` or the project's pytest configuration file, else
``tests/replays`` in the rootdir; ``--dir`` names any other.

``prune`` asks pytest which tests exist (``pytest --collect-only -q`` in a
subprocess, with the arguments after ``--``) and removes the cassettes of tests
that are gone: a test missing from a file that was collected, or whose file no
longer exists. A cassette of a test file left out of the collection (``prune --
tests/unit``, ``--ignore``) is kept, and a collection that fails removes nothing: a
test file with a syntax error must not cost its tests their recordings. Nor does
one that leaves out tests of a file it collects (test ids named, ``-k``, ``-m``,
``--deselect``, ``--lf``: the partial-run rule of the baseline's prune, asked of
the collection by :mod:`pytest_textsim.plugin.collection_probe`): their cassettes
would look like those of tests that are gone.

Exit status: 0 done; 1 a cassette cannot be read or the collection failed;
2 usage error, or a collection that leaves out tests of its files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..formatting import plural, table
from .common import EXIT_FAILED, EXIT_OK, EXIT_USAGE

REPLAY_EXAMPLES = """\
examples:
  textsim replay stats                       # one line per cassette, and totals
  textsim replay stats --json
  textsim replay prune --dry-run             # which cassettes belong to no test
  textsim replay prune -- tests/ -p no:randomly   # arguments for pytest's collection
"""


# The pytest plugin that reports, in the file its environment variable names, whether
# the collection leaves out tests of the files it collects (a name, not an import:
# the command line does not import the plugin).
_PROBE = "pytest_textsim.plugin.collection_probe"
_PROBE_REPORT = "PYTEST_TEXTSIM_COLLECTION_REPORT"


def _read_probe(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def add_replay_command(subparsers: Any) -> None:
    """Add ``textsim replay stats|prune`` to the CLI."""
    parser = subparsers.add_parser(
        "replay",
        help="list replay cassettes, or remove those of tests that no longer exist",
        description="Manage the cassettes of recorded HTTP calls (textsim_replay).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=REPLAY_EXAMPLES,
    )
    parser.add_argument(
        "--dir",
        default=None,
        help="cassette folder (default: $TEXTSIM_REPLAY_DIR, else textsim_replay_dir from the "
        "pytest configuration file, else tests/replays in the rootdir)",
    )
    from .project import add_config_argument

    add_config_argument(parser)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    stats = actions.add_parser("stats", help="cassettes with their test, calls, streams, size")
    stats.add_argument("--json", action="store_true", help="print the figures as JSON")
    prune = actions.add_parser("prune", help="remove the cassettes of tests that do not exist")
    prune.add_argument("--dry-run", action="store_true", help="list them, remove nothing")
    prune.add_argument(
        "pytest_args", nargs="*", metavar="-- PYTEST_ARGS",
        help="arguments for pytest --collect-only (default: none, as 'pytest' alone)",
    )  # fmt: skip
    parser.set_defaults(run=run_replay_command)


def _folder(args: Any) -> tuple[Path | None, str, Path]:
    """The cassette folder, where its name came from, and the rootdir (test ids' base)."""
    from ..errors import ConfigError
    from ..settings.table import Resolver
    from .project import find

    try:
        project = find(args.config_file)
        if args.dir:
            return Path(args.dir), "--dir on the command line", project.rootpath
        resolver = Resolver(project)
        folder = resolver.path("replay_dir", Path.cwd())
        resolved = resolver.resolve("replay_dir")
    except ConfigError as exc:
        print(f"textsim replay: error: {exc}", file=sys.stderr)
        return None, "", Path.cwd()
    if folder is None:
        return project.rootpath / "tests" / "replays", "the default folder", project.rootpath
    return folder, resolved.source, project.rootpath


def run_replay_command(args: Any) -> int:
    """Run one ``textsim replay`` action; returns the exit status."""
    folder, source, root = _folder(args)
    if folder is None:
        return EXIT_USAGE
    if folder.exists() and not folder.is_dir():
        print(f"textsim replay: error: {source}: {folder} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    cassettes, problems = _read(folder)
    for problem in problems:
        print(f"textsim replay {args.action}: error: {problem}", file=sys.stderr)
    if args.action == "stats":
        _stats(folder, cassettes, args.json)
        return EXIT_FAILED if problems else EXIT_OK
    if problems:
        print(f"textsim replay prune: nothing removed: {plural(len(problems), 'cassette')} "
              "cannot be read (fix or delete them first)", file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    return _prune(folder, cassettes, args.pytest_args, args.dry_run, root)


def _read(folder: Path) -> tuple[list[dict[str, Any]], list[str]]:
    from ..replay import CassetteError, load

    found: list[dict[str, Any]] = []
    problems: list[str] = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        try:
            cassette = load(path)
        except CassetteError as exc:
            problems.append(str(exc))
            continue
        if cassette is None:
            continue
        found.append(
            {
                "file": path.name,
                "test": cassette.test_id,
                "calls": len(cassette.interactions),
                "streams": sum(1 for i in cassette.interactions if _streamed(i)),
                "partial": sum(1 for i in cassette.interactions if i.partial),
                "bytes": path.stat().st_size,
            }
        )
    return found, problems


def _streamed(interaction: Any) -> bool:
    from ..replay.cassette import is_stream

    return is_stream(interaction.response_headers)


def _stats(folder: Path, cassettes: list[dict[str, Any]], as_json: bool) -> None:
    totals = {
        key: sum(c[key] for c in cassettes) for key in ("calls", "streams", "partial", "bytes")
    }
    if as_json:
        print(json.dumps({"folder": str(folder), "cassettes": cassettes, **totals}, indent=2))
        return
    print(
        f"replay cassettes in {folder}: {plural(len(cassettes), 'cassette')}, "
        f"{plural(totals['calls'], 'call')} ({totals['streams']} streamed, "
        f"{totals['partial']} partial), {totals['bytes'] / 1024:.0f} KiB"
    )
    rows = [["test", "calls", "streamed", "partial", "KiB"]]
    rows += [
        [c["test"], str(c["calls"]), str(c["streams"]), str(c["partial"]),
         f"{c['bytes'] / 1024:.1f}"]
        for c in cassettes
    ]  # fmt: skip
    if cassettes:
        for line in table(rows, right=(1, 2, 3, 4)):
            print("  " + line)


def _prune(folder: Path, cassettes: list[dict[str, Any]], pytest_args: list[str],
           dry_run: bool, root: Path) -> int:  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="textsim-prune-") as scratch:
        report = Path(scratch) / "collection.json"
        command = [sys.executable, "-m", "pytest", "--collect-only", "-q",
                   "-p", _PROBE, *pytest_args]  # fmt: skip
        environ = {**os.environ, _PROBE_REPORT: str(report)}
        done = subprocess.run(command, capture_output=True, text=True, env=environ)
        collection = _read_probe(report) if done.returncode in (0, 5) else {}
    if done.returncode not in (0, 5):  # 5: no tests collected
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        print(f"textsim replay prune: error: pytest --collect-only failed (exit status "
              f"{done.returncode}); nothing removed:\n{tail}", file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    partial = collection.get("partial")
    if not isinstance(partial, str):
        print(f"textsim replay prune: error: cannot tell whether the collection holds whole "
              f"test files ({_PROBE} did not report; was it disabled with -p no:...?); "
              "nothing removed", file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    if partial:
        print(f"textsim replay prune: error: the collection leaves out tests of the files it "
              f"collects ({partial}), and the cassettes of those tests would be removed "
              "though the tests exist; nothing removed. Prune with the whole suite, or name "
              "files or folders, not test ids, after --, without -k, -m, --deselect or --lf",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    existing = {line.strip() for line in done.stdout.splitlines() if "::" in line}
    collected_files = {test.partition("::")[0] for test in existing}

    def gone(test: str) -> bool:
        file = test.partition("::")[0]
        return test not in existing and (file in collected_files or not (root / file).exists())

    stale = [c for c in cassettes if gone(c["test"])]
    verb = "would remove" if dry_run else "removed"
    for cassette in stale:
        if not dry_run:
            (folder / cassette["file"]).unlink(missing_ok=True)
        print(f"{verb} {cassette['file']} ({cassette['test']})")
    kept = len(cassettes) - len(stale)
    print(f"{verb} {plural(len(stale), 'cassette')} of tests that no longer exist; "
          f"kept {kept} ({plural(len(existing), 'test')} collected)")  # fmt: skip
    return EXIT_OK


__all__ = ["EXIT_USAGE", "add_replay_command", "run_replay_command"]
