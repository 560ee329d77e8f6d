"""Settings of the example suites, set here because they share one run.

In a project of its own, the release-notes suite would have these lines in
its ``pytest.ini`` (or ``[tool.pytest.ini_options]``)::

    [pytest]
    textsim_gates =
        rouge_f1_score.mean >= 0.6
        rouge_f1_score.pass_rate >= 75%
        meteor_score.p10 >= 0.7
        sacrebleu.corpus_bleu.score >= 40
    textsim_compare = data/release_notes_baseline.json
    textsim_fail_on_regression = true

Here the other example suites run in the same session, so each gate keeps to
the release-notes tests with ``[test=...]``, and the baseline holds only their
scores: the other suites' scores show up as "new" and never as regressions.
"""

from pathlib import Path

import pytest

HERE = Path(__file__).parent
RELEASE_NOTES = "test=*test_release_notes.py::*"
GATES = [
    f"rouge_f1_score[{RELEASE_NOTES}].mean >= 0.6",
    f"rouge_f1_score[{RELEASE_NOTES}].pass_rate >= 75%",
    f"meteor_score[{RELEASE_NOTES}].p10 >= 0.7",
    f"sacrebleu.corpus_bleu[{RELEASE_NOTES}].score >= 40",
]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # tryfirst, and registered after the plugin: runs before pytest-textsim reads
    # its settings. The command line still wins (e.g. --textsim-save-baseline).
    if not config.pluginmanager.hasplugin("textsim"):  # run with -p no:textsim
        return
    config.option.textsim_gate = [*GATES, *(config.option.textsim_gate or [])]
    # The judge example replays the judgments committed in judge_cache/: offline,
    # no API key. --textsim-cache=once (and a key) records new ones.
    # The chat app example replays its own LLM calls from the cassettes in replays/
    # (--textsim-replay=once, with a model to call, records new ones).
    for name, value in (
        ("textsim_judge_model", "gpt-4o-mini"),
        ("textsim_judge_base_url", "https://api.openai.com/v1"),
        ("textsim_cache", "none"),
        ("textsim_cache_dir", str(HERE / "judge_cache")),
        ("textsim_replay", "none"),
        ("textsim_replay_dir", str(HERE / "replays")),
    ):
        if getattr(config.option, name, None) is None:
            setattr(config.option, name, value)
    if config.option.textsim_compare is None and config.option.textsim_save_baseline is None:
        config.option.textsim_compare = str(HERE / "data" / "release_notes_baseline.json")
        config.option.textsim_fail_on_regression = True
