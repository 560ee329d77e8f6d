"""``textsim cache stats|clear|export|import|migrate|batches``: review, share and prune
the judge cache, and see or forget the judge batches it keeps.

Exit status, as for ``textsim score``: 0 done; 1 failed (the cache cannot be
used, ``clear --evaluator`` matched no entries, or ``batches --forget`` named no
kept batch); 2 usage or input error (a
cache folder that is a file, an unreadable configuration, an import file that
is missing or has bad lines, every bad line reported as ``file:line``).

:func:`pytest_textsim.cli.build_parser` adds the command; the cache module
(and sqlite3) is imported only when it runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..formatting import closest, plural
from ..settings.modes import RecordMode

if TYPE_CHECKING:
    from ..judge.cache import JudgeCache

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

CACHE_EXAMPLES = """\
examples:
  textsim cache stats                                  # entries per evaluator and model
  textsim cache --dir tests/.textsim_cache stats --json
  textsim cache export -o judge-cache.jsonl            # review it, or share it
  textsim cache import judge-cache.jsonl               # on another machine
  textsim cache clear --evaluator similarity           # e.g. after a prompt change
  textsim cache clear --all                            # every entry (asked on a terminal)
  textsim cache migrate --base-url http://localhost:11434/v1   # keys from before 0.2
  textsim cache batches                                # the judge batches kept (--judge-batch)
  textsim cache batches --forget batch_abc123          # give one up (still billed if running)

The cache is the one pytest would use when started in this directory:
textsim_cache_dir from TEXTSIM_CACHE_DIR or the project's pytest configuration
file (pytest.ini, pyproject.toml, tox.ini, setup.cfg; -c names another), else
.textsim_cache/ in the rootdir. --dir names any other.

import checks every line before it adds any: a bad line is reported as
file:line, and then nothing is imported.

exit status: 0 done, 1 the cache cannot be used (stats and export: a corrupt
file, or one from a newer pytest-textsim), batches --forget named no kept
batch or clear --evaluator matched no entries, 2 usage or input error (a
missing import file, bad lines in it; clear of every entry without --all, or
not confirmed).
"""


def add_cache_command(subparsers: Any) -> None:
    """Add ``textsim cache stats|clear|export|import`` to the CLI."""
    parser = subparsers.add_parser(
        "cache",
        help="inspect, clear, export or import the judge cache; see or forget its kept batches",
        description="Manage the judge cache. Export/import use JSONL, one judgment a line, "
        "so a cache can be reviewed and shared between CI machines.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=CACHE_EXAMPLES,
    )
    parser.add_argument(
        "--dir",
        default=None,
        help="cache directory (default: $TEXTSIM_CACHE_DIR, else textsim_cache_dir from the "
        "pytest configuration file, else .textsim_cache in the rootdir)",
    )
    from .project import add_config_argument

    add_config_argument(parser)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    stats = actions.add_parser("stats", help="entries per evaluator and model, tokens, size")
    stats.add_argument("--json", action="store_true", help="print the figures as JSON")
    clear = actions.add_parser("clear", help="delete entries")
    clear.add_argument(
        "--evaluator",
        help="only this evaluator's entries (e.g. similarity); exit status 1 when it has none",
    )
    clear.add_argument(
        "--all",
        action="store_true",
        help="every entry (without it or --evaluator, clear asks on a terminal and refuses "
        "otherwise)",
    )
    export = actions.add_parser("export", help="write every entry as JSONL")
    export.add_argument("-o", "--output", type=argparse.FileType("w", encoding="utf-8"),
                        default="-", help="file to write (default: standard output)")  # fmt: skip
    imp = actions.add_parser("import", help="add entries from a JSONL export")
    imp.add_argument("file", help="JSONL file from `textsim cache export` ('-' for stdin)")
    migrate = actions.add_parser(
        "migrate",
        help="re-key entries recorded before the cache key had the endpoint's path",
        description="Entries recorded for the host of URL, keyed by host and port only, are "
        "re-keyed with URL's path, as a judge at URL now looks them up.",
    )
    migrate.add_argument("--base-url", required=True, metavar="URL",
                         help="the judge's base URL or Azure endpoint, e.g. "
                         "https://api.openai.com/v1")  # fmt: skip
    batches = actions.add_parser(
        "batches",
        help="list the judge batches kept by textsim score --judge-batch, or forget them",
        description="The batches textsim score --judge-batch submitted and has not collected "
        "yet (and submissions whose create call had no answer): a --judge-batch run resumes "
        "them. Forget one the provider can no longer give (a 404: another endpoint or key, or "
        "deleted); its judgments are then submitted again. A forgotten batch still running "
        "at the provider is still billed: cancel it there.",
    )
    batches.add_argument("--forget", action="append", metavar="ID", default=[],
                         help="forget this kept batch or submission (repeatable)")  # fmt: skip
    batches.add_argument("--forget-all", action="store_true", help="forget every kept one")
    batches.add_argument("--json", action="store_true", help="list them as JSON")
    parser.set_defaults(run=run_cache_command)


def run_cache_command(args: Any) -> int:
    """Run one ``textsim cache`` action; returns the exit status."""
    import warnings

    from ..judge.cache import JudgeCacheWarning

    # clear and import set a bad cache file aside, as a test run does: say so in
    # one line, not as a Python warning with a source line of this module.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", JudgeCacheWarning)
        status = _run(args)
    for warning in caught:
        if issubclass(warning.category, JudgeCacheWarning):
            print(f"textsim cache {args.action}: warning: {warning.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                   warning.lineno)  # fmt: skip
    return status


def _run(args: Any) -> int:
    import sqlite3

    from ..errors import ConfigError
    from ..jsonl import JsonlError
    from ..judge.cache import CacheImportError, JudgeCache
    from ..judge.errors import JudgeError
    from ..judge.wiring import cache_dir
    from ..settings.table import Resolver
    from .project import find

    directory: str | Path = args.dir
    source = "--dir on the command line"
    if not directory:
        try:
            project = find(args.config_file)
            resolver = Resolver(project)
            directory = cache_dir(resolver, Path.cwd(), project.rootpath)
            resolved = resolver.resolve("cache_dir")
            source = resolved.source if resolved.value else "the default cache folder"
        except ConfigError as exc:
            print(f"textsim cache: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    blocker = next((p for p in (Path(directory), *Path(directory).parents) if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        where = "" if blocker == Path(directory) else f" ({blocker} is a file)"
        print(f"textsim cache: error: {source}: {directory} is not a directory{where}; "
              "name the judge cache folder with --dir", file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    # stats and export only read: the offline mode opens the file read-only, so
    # they work on a committed cache in a read-only checkout and create nothing.
    reading = args.action in ("stats", "export") or (
        args.action == "batches" and not args.forget and not args.forget_all)
    cache = JudgeCache(directory, RecordMode.NONE if reading else RecordMode.ONCE)
    try:
        if cache.mode.read_only:
            # A bad file is an error here, not an empty cache as in a test run.
            cache.open_to_read()
        if args.action == "stats":
            return _stats(cache, args.json)
        if args.action == "batches":
            return _batches(cache, args)
        if args.action == "clear":
            if args.evaluator is None and not args.all and not _confirmed(cache):
                return EXIT_USAGE
            return _clear(cache, args.evaluator)
        if args.action == "migrate":
            from ..judge.endpoints import check_url, endpoint_key
            from ..judge.errors import JudgeConfigError

            try:
                url = check_url(args.base_url.strip(), "--base-url")
            except JudgeConfigError as exc:
                print(f"textsim cache migrate: error: {exc}", file=sys.stderr)
                return EXIT_USAGE
            count = cache.migrate(url)
            print(f"re-keyed {plural(count, 'entry')} to {endpoint_key(url)} in {cache.path}")
            return EXIT_OK
        if args.action == "export":
            count = cache.export_jsonl(args.output)
            args.output.flush()
            print(f"exported {plural(count, 'entry')} from {cache.path}", file=sys.stderr)
            _batches_left(cache, "not exported: they are resumed from this cache only")
            return EXIT_OK
        if args.file == "-":
            count = cache.import_jsonl(sys.stdin, "<stdin>")
        else:
            count = cache.import_file(args.file)
        print(f"imported {plural(count, 'entry')} into {cache.path}")
        return EXIT_OK
    except CacheImportError as exc:
        # The input is wrong, not the cache: a usage error, each bad line on its own.
        prefix = f"textsim cache {args.action}: error: "
        for problem in exc.problems:
            print(f"{prefix}{problem}", file=sys.stderr)
        lines = plural(len(exc.problems), "bad line")
        print(f"{prefix}{lines} in {exc.source}; nothing was imported", file=sys.stderr)
        return EXIT_USAGE
    except JsonlError as exc:  # missing, unreadable, not UTF-8
        print(f"textsim cache {args.action}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (OSError, ValueError, sqlite3.Error, JudgeError) as exc:
        print(f"textsim cache {args.action}: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        cache.close()


def _stats(cache: JudgeCache, as_json: bool) -> int:
    figures = cache.stats()
    if as_json:
        print(json.dumps(figures, indent=2, sort_keys=True))
        return EXIT_OK
    print(f"judge cache {figures['path']}: {plural(figures['entries'], 'entry')}, "
          f"{figures['bytes'] / 1024:.0f} KiB, {figures['tokens_in']} tokens in / "
          f"{figures['tokens_out']} out when recorded")  # fmt: skip
    if figures.get("embeddings"):
        print(f"  embedding vectors: {figures['embeddings']}")
    if figures.get("batches"):
        print(f"  judge batches kept: {figures['batches']} (textsim cache batches lists them)")
    for title, counts in (("evaluator", "by_evaluator"), ("model", "by_model")):
        for name, count in figures[counts].items():
            print(f"  {title} {name}: {count}")
    return EXIT_OK


def _confirmed(cache: JudgeCache) -> bool:
    """Clearing every entry (paid judge calls) is asked on a terminal; elsewhere
    (CI, scripts) it needs ``--all``, so a forgotten ``--evaluator`` deletes nothing."""
    count = sum(cache.stats()["by_evaluator"].values())
    if count == 0:
        return True
    entries = plural(count, "entry")
    if not sys.stdin.isatty():
        print(
            f"textsim cache clear: error: this would delete all {entries} of {cache.path}; "
            "give --all to do so, or --evaluator NAME to delete one evaluator's",
            file=sys.stderr,
        )
        return False
    answer = input(f"delete all {entries} of {cache.path}? [y/N] ").strip().lower()
    if answer in ("y", "yes"):
        return True
    print("textsim cache clear: nothing deleted", file=sys.stderr)
    return False


def _clear(cache: JudgeCache, evaluator: str | None) -> int:
    removed = cache.clear(evaluator)
    if removed or evaluator is None:
        print(f"removed {plural(removed, 'entry')} from {cache.path}")
        _batches_left(cache, "kept: a --judge-batch run collects them into the cache again")
        return EXIT_OK
    # Nothing matched: most likely a typo, which "removed 0 entries" would hide.
    counts: dict[str, int] = cache.stats()["by_evaluator"]
    close = closest(evaluator, counts)
    hint = f" (did you mean {close!r}?)" if close else ""
    if counts:
        listed = ", ".join(f"{name} ({plural(n, 'entry')})" for name, n in counts.items())
        has = f"its evaluators: {listed}"
    else:
        has = "the cache is empty"
    print(
        f"textsim cache clear: no entries of evaluator {evaluator!r}{hint} in {cache.path}; {has}",
        file=sys.stderr,
    )
    return EXIT_FAILED


def _batches_left(cache: JudgeCache, what: str) -> None:
    """One line on the judge batches the cache keeps, which ``clear`` and ``export``
    leave as they are; none when it keeps none."""
    count = cache.stats()["batches"]
    if count:
        print(f"textsim cache: {_batch_count(count)} {what} "
              "(textsim cache batches lists them)", file=sys.stderr)  # fmt: skip


def _batch_count(count: int) -> str:
    return f"{count} judge batch" + ("" if count == 1 else "es")


def _kept_line(kept: dict[str, Any]) -> str:
    """One kept batch or submission: its id, endpoint, when, judgments and cached."""
    import time

    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(kept["created"]))
    what = kept["id"] if kept["kind"] == "batch" else f"submission {kept['id']}"
    file = f", input file {kept['input_file_id']}" if kept["input_file_id"] else ""
    return (f"{what}: {kept['endpoint']}, kept {when}, "
            f"{plural(kept['judgments'], 'judgment')}, {kept['cached']} cached{file}")  # fmt: skip


def _batches(cache: JudgeCache, args: Any) -> int:
    """``textsim cache batches``: list the kept judge batches, or forget some."""
    if not args.forget and not args.forget_all:
        kept = cache.kept_batches()
        if args.json:
            print(json.dumps(kept, indent=2, sort_keys=True))
            return EXIT_OK
        print(f"judge cache {cache.path}: {_batch_count(len(kept))} kept"
              + (" (a submission: its create call had no answer; the next --judge-batch run "
                 "looks for its batch)" if any(k["kind"] == "submission" for k in kept) else ""))
        for entry in kept:
            print(f"  {_kept_line(entry)}")
        return EXIT_OK
    known = [k["id"] for k in cache.kept_batches()]
    unknown = [i for i in args.forget if i not in known]
    if unknown and not args.forget_all:
        has = ", ".join(known) if known else "none"
        print(f"textsim cache batches: error: no kept batch {', '.join(unknown)} in "
              f"{cache.path}; kept: {has}", file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    dropped = cache.forget_kept(None if args.forget_all else args.forget)
    for entry in dropped:
        print(f"forgot {_kept_line(entry)}")
    print(f"forgot {_batch_count(len(dropped))} in {cache.path}")
    if dropped:
        print("textsim cache batches: warning: a forgotten batch still running at the "
              "provider is still billed (cancel it there); its judgments not cached are "
              "submitted again by the next --judge-batch run", file=sys.stderr)  # fmt: skip
    return EXIT_OK
