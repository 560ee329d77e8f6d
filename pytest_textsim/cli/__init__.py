"""The ``textsim`` command line: score JSONL files, compare runs, manage the judge cache."""

from __future__ import annotations

import argparse
import sys

from .. import __version__

EXAMPLES = """\
examples:
  textsim score answers.jsonl --metric bleu_score --metric rouge_score:rougeL \\
      --gate 'bleu_score.mean >= 0.35' -o scored.jsonl
  textsim compare baseline.json textsim-report.json
  textsim cache stats
  textsim replay stats
  textsim report results.json -o report.html
  textsim calibrate labels.jsonl --metric similarity --min-kappa 0.6

Run 'textsim COMMAND --help' for the options and more examples of each command.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="textsim",
        description="Score LLM-generated text outside pytest.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EXAMPLES,
    )
    parser.add_argument("--version", action="version", version=f"textsim {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Each subcommand adds its parser here and sets ``run`` with set_defaults;
    # import its module inside the function so `textsim --help` stays fast.
    from .compare import add_compare_command
    from .score_parser import add_score_command

    add_score_command(subparsers)
    add_compare_command(subparsers)
    from .cache import add_cache_command

    add_cache_command(subparsers)
    from .replay import add_replay_command

    add_replay_command(subparsers)
    from .report import add_report_command

    add_report_command(subparsers)
    from .calibrate import add_calibrate_command

    add_calibrate_command(subparsers)
    del subparsers
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    return int(args.run(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
