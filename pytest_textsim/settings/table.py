"""Every setting, declared once: the table of :data:`SETTINGS`.

From each declaration the plugin registers a ``--textsim-*`` flag and a
``textsim_*`` ini key, and :class:`Resolver` (in :mod:`pytest_textsim.settings.resolver`,
imported from here) resolves it: marker > command line > environment > ini >
default. Import the resolver from this module: importing it fills the table.

This module must stay cheap to import: the plugin imports it at start-up.
"""

from __future__ import annotations

from typing import Any

from .. import catalog
from ..catalog import METRICS
from ..errors import ConfigError
from ..runtime.run import Run, current_run
from .converters import (
    as_azure_endpoint,
    as_bool,
    as_endpoint_url,
    as_env_name,
    as_http_url,
    as_int,
    as_level,
    as_patterns,
    as_positive_int,
    as_provider_name,
    as_record_mode,
    as_replay,
    as_seconds,
    as_share,
    as_temperature,
    as_unit_interval,
    as_usd,
    one_of,
)
from .modes import MODES, RecordMode
from .resolver import (
    SETTINGS,
    Resolved,
    Resolver,
    Setting,
    convert,
    current_settings,
    did_you_mean,
    register,
    seal,
    unknown_environment,
    unknown_ini_key,
)
from .tolerances import parse_tolerances

__all__ = [
    "JUDGE_COMMAND_FLAGS",
    "SETTINGS",
    "ConfigError",
    "Resolved",
    "Resolver",
    "Run",
    "Setting",
    "convert",
    "current_run",
    "current_settings",
    "did_you_mean",
    "new_run",
    "register",
    "this_run",
    "unknown_environment",
    "unknown_ini_key",
]

# --------------------------------------------------------------------------
# Settings. Keep each group together; the plugin registers them in this order.
# --------------------------------------------------------------------------

# -- NLTK data: downloads, mirror, timeouts -----------------------------------
register(
    Setting(
        "nltk_download",
        "Download missing NLTK data on first use: auto (default) or never.",
        convert=one_of("auto", "never"),
        default="auto",
        env=("TEXTSIM_NLTK_DOWNLOAD",),
        metavar="auto|never",
    )
)


# Environment only: rarely changed, and read where the data is resolved (also
# outside pytest), so no flag or ini key that the plugin would have to pass on.
register(
    Setting(
        "nltk_index_url",
        "Index of the NLTK data server used for downloads (a mirror's index.xml).",
        convert=as_http_url,
        default="https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/index.xml",
        env=("TEXTSIM_NLTK_INDEX_URL", "NLTK_DOWNLOAD_URL"),
        flag=False,
        ini=False,
        at_start=False,
    )
)
register(
    Setting(
        "nltk_download_timeout",
        "Seconds a download of NLTK data may wait on the network per step (default 10).",
        convert=as_seconds,
        default=10.0,
        env=("TEXTSIM_NLTK_DOWNLOAD_TIMEOUT",),
        flag=False,
        ini=False,
        at_start=False,
    )
)

# -- pytest plugin: thresholds, report, JSON output -----------------------------


# Each metric's default pass threshold, from the metric catalog: the setting's
# name, range, default and help text are the catalog entry's. The catalog is
# complete once imported, and read-only from here on.
catalog.seal()
for _metric in METRICS.values():
    register(
        Setting(
            _metric.threshold_setting,
            _metric.threshold_help,
            convert=_metric.parse_threshold,
            default=_metric.default_threshold,
            env=(f"TEXTSIM_{_metric.threshold_setting.upper()}",),
            metavar="N" if _metric.integer_scores else "X",
        )
    )
del _metric

register(
    Setting(
        "report",
        "The 'textsim scores' terminal section: all rows (default; up to "
        "--textsim-report-rows), failed rows only, summary per metric only, or none.",
        convert=one_of("all", "failed", "summary", "none"),
        default="all",
        env=("TEXTSIM_REPORT",),
        metavar="all|failed|summary|none",
    )
)
register(
    Setting(
        "report_rows",
        "Most score rows printed in the terminal report (default 50); the JSON file has all.",
        convert=as_positive_int,
        default=50,
        env=("TEXTSIM_REPORT_ROWS",),
        metavar="N",
    )
)
register(
    Setting(
        "json",
        "Write every recorded score and a run header to this JSON file.",
        default=None,
        env=("TEXTSIM_JSON",),
        metavar="PATH",
    )
)
register(
    Setting(
        "html",
        "Write the HTML report (score plots, a sortable table, each score's texts with "
        "what it misses) to this file.",
        default=None,
        env=("TEXTSIM_HTML",),
        metavar="PATH",
    )
)
register(
    Setting(
        "json_texts",
        "Include the scored texts in the JSON file (default: only their lengths).",
        convert=as_bool,
        default=False,
        env=("TEXTSIM_JSON_TEXTS",),
        flag_action="store_true",
    )
)

# -- LLM judge and its cache ----------------------------------------------------


for _name, _help, _extra in (
    ("judge_provider", "Judge API: openai (default; any OpenAI-compatible server), azure, "
     "anthropic (its Messages API; pip install 'pytest-textsim[anthropic]'), or a provider "
     "another package or a conftest.py registers (docs/judge.md#writing-a-provider).",
     {"convert": as_provider_name, "default": "openai",
      "metavar": "openai|azure|anthropic|NAME"}),
    ("judge_model", "Judge model name, or the Azure OpenAI deployment name.",
     {"metavar": "NAME"}),
    ("judge_base_url", "OpenAI-compatible base URL, e.g. http://localhost:11434/v1 (Ollama).",
     {"env": ("TEXTSIM_JUDGE_BASE_URL", "OPENAI_BASE_URL"), "metavar": "URL",
      "convert": as_endpoint_url}),
    ("judge_azure_endpoint", "Azure OpenAI resource endpoint, https://<resource>.openai.azure.com.",
     {"env": ("TEXTSIM_JUDGE_AZURE_ENDPOINT", "AZURE_OPENAI_ENDPOINT"), "metavar": "URL",
      "convert": as_azure_endpoint}),
    ("judge_api_version", "Azure OpenAI API version, e.g. 2024-10-21.",
     {"env": ("TEXTSIM_JUDGE_API_VERSION", "OPENAI_API_VERSION"), "metavar": "VERSION"}),
    ("judge_timeout", "Seconds one judge attempt may take, from the request to the whole "
     "reply, whatever the server does (default 60); a judgment sample takes at most "
     "2 x attempts x this, plus the waits between attempts.",
     {"convert": as_seconds, "default": 60.0, "metavar": "SECONDS"}),
    ("judge_max_retries", "Retries of a failed judge call (429, 5xx, timeouts) after the first "
     "attempt (default 3).", {"convert": as_int, "default": 3, "metavar": "N"}),
    ("judge_concurrency", "Judge calls in flight at once (default 8), for the judge and for "
     "the embedding model each; under pytest-xdist the controller makes the calls of every "
     "worker on its machine, so the limit holds for the whole run (per worker with "
     "textsim_judge_hub = false). A local server's limit adapts below it to what the "
     "server sustains.",
     {"convert": as_positive_int, "default": 8, "metavar": "N"}),
    ("judge_hub", "Under pytest-xdist the controller makes the judge and embedding calls of "
     "every worker on its machine, so workers need not import openai (default true); false: "
     "each worker calls the judge itself, e.g. when tests mock the judge's HTTP calls in "
     "the workers.", {"convert": as_bool, "default": True, "metavar": "true|false"}),
    ("judge_temperature", "Judge sampling temperature (default 0; ignored for reasoning models).",
     {"convert": as_temperature, "default": 0.0, "metavar": "T"}),
    ("judge_max_tokens", "Most tokens in a judge reply (default: sized to each prompt's reply "
     "format: 300 for a score and its reason, more for lists of claims or verdicts; a "
     "reasoning model at least 800).",
     {"convert": as_positive_int, "metavar": "N"}),
    ("judge_context_tokens", "Most tokens the texts of one judge request may take (default "
     "100000, estimated at 3 characters a token): a RAG judgment whose chunks would pass it "
     "is asked in groups of chunks that fit; a text or chunk that alone passes it is an "
     "error, never truncated.",
     {"convert": as_positive_int, "default": 100_000, "metavar": "N"}),
    ("judge_max_reply_bytes", "Largest judge chat reply accepted, in bytes (default 1000000); "
     "a larger one is an error, retried and never cached.",
     {"convert": as_positive_int, "default": 1_000_000, "metavar": "BYTES", "at_start": False}),
    ("judge_reasoning", "The judge is a reasoning model (o1, o3, gpt-5...): send no temperature "
     "and max_completion_tokens instead of max_tokens.",
     # "string", not "bool": our converter names the key in its errors.
     {"convert": as_bool, "default": False, "flag_action": "store_true"}),
    ("judge_seed", "Seed sent with each judge request where the provider takes it (OpenAI, "
     "Azure, vLLM...), for more repeatable judgments; part of the cache key. Default: none "
     "sent.", {"convert": as_int, "metavar": "N", "at_start": False}),
    ("judge_samples", "Ask the judge N times per score and use the median (default 1).",
     {"convert": as_positive_int, "default": 1, "metavar": "N"}),
    ("judge_logprobs", "Rubric scores weighted by the judge's token probabilities (G-Eval): "
     "auto (default: ask for logprobs, fall back to the integer) or off.",
     {"convert": one_of("auto", "off"), "default": "auto", "metavar": "auto|off"}),
    ("embedding_provider", "Where semantic_similarity's vectors come from: auto (default: "
     "the embedding model when textsim_embedding_model is set, else the local model), remote "
     "(the embedding model; an error when none is set) or local (WordLlama's model in this "
     "process, no server; the local extra).",
     {"convert": one_of("auto", "local", "remote"), "default": "auto",
      "metavar": "auto|local|remote"}),
    ("embedding_model", "Embedding model for semantic_similarity, or the Azure OpenAI "
     "deployment name (provider, key and API version are the judge's).", {"metavar": "NAME"}),
    ("embedding_base_url", "OpenAI-compatible base URL for embeddings (default: "
     "textsim_judge_base_url), e.g. http://localhost:11434/v1.",
     {"metavar": "URL", "convert": as_endpoint_url}),
    ("embedding_azure_endpoint", "Azure OpenAI endpoint for embeddings (default: "
     "textsim_judge_azure_endpoint).", {"metavar": "URL", "convert": as_azure_endpoint}),
    ("embedding_dimensions", "Vector length to ask the embedding model for (default: the "
     "model's own).", {"convert": as_positive_int, "metavar": "N"}),
    ("embedding_batch_size", "Texts per embeddings request (default 256; halved when the "
     "server answers 413 or 422).", {"convert": as_positive_int, "default": 256, "metavar": "N"}),
    ("cache", "Judge cache mode: once (default: use hits, call on misses), none (offline: "
     "never call the judge; a miss is an error), rewrite (call again and overwrite), off.",
     {"convert": as_record_mode, "default": RecordMode.ONCE, "metavar": "|".join(MODES)}),
    ("cache_dir", "Directory of the judge cache (default .textsim_cache in the rootdir).",
     {"metavar": "DIR"}),
):  # fmt: skip
    # Typed here because the options of the settings above differ in type.
    _options: dict[str, Any] = {"env": (f"TEXTSIM_{_name.upper()}",), **_extra}
    register(Setting(_name, _help, **_options))

#: Judge settings that the ``textsim`` command takes as flags of its own
#: (``--judge-model``, ``--cache``...); messages name those flags there.
JUDGE_COMMAND_FLAGS = (
    "judge_provider",
    "judge_model",
    "judge_base_url",
    "judge_azure_endpoint",
    "judge_api_version",
    "judge_timeout",
    "judge_max_retries",
    "judge_concurrency",
    "judge_samples",
    "judge_seed",
    "judge_logprobs",
    "embedding_provider",
    "embedding_model",
    "embedding_base_url",
    "embedding_azure_endpoint",
    "embedding_dimensions",
    "embedding_batch_size",
    "cache",
    "cache_dir",
)

# Ini only: where to find the key. The key itself is never read from a file.
register(
    Setting(
        "judge_api_key_env",
        "Name of the environment variable holding the judge API key "
        "(default OPENAI_API_KEY, or AZURE_OPENAI_API_KEY for azure).",
        convert=as_env_name,
        flag=False,
    )
)
# Declared only to refuse it with a clear message: keys come from the environment.
register(
    Setting(
        "judge_api_key",
        "Refused: the judge API key is read only from the environment.",
        env=("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY"),
        flag=False,
        secret=True,
    )
)
del _name, _help, _extra


# -- baselines, gates, corpus metrics -------------------------------------------


def as_lines(value: Any) -> list[str]:
    """A list of non-empty lines from an ini ``linelist``, repeated flags or one string."""
    items = value if isinstance(value, (list, tuple)) else [value]
    return [str(item).strip() for item in items if str(item).strip()]


def as_parameter_names(value: Any) -> list[str]:
    """Test parameter names: repeated flags, ini lines, or one string split at commas."""
    items = value if isinstance(value, (list, tuple)) else [value]
    names = [part.strip() for item in items for part in str(item).split(",") if part.strip()]
    for name in names:
        if not name.isidentifier():
            raise ValueError(f"expected test parameter names (model, prompt), got {name!r}")
    return list(dict.fromkeys(names))


def as_tolerances(value: Any) -> Any:
    """``0.05`` / ``bleu_score=0.05`` entries as :class:`~.tolerances.Tolerances`."""
    return parse_tolerances(value)


register(
    Setting(
        "gate",
        "Dataset gate, e.g. 'bleu_score.mean >= 0.35' or 'sacrebleu.corpus_bleu.score >= 30' "
        "(repeatable; adds to textsim_gates from the ini file). A failed gate fails the run.",
        convert=as_lines,
        flag_action="append",
        ini=False,
        metavar="EXPR",
    )
)
register(
    Setting(
        "gates",
        "Dataset gates, one per line: METRIC.AGGREGATE OP NUMBER with aggregates mean, min, "
        "max, median, pNN, pass_rate, count, sum (e.g. meteor_score.p10 >= 0.3, or over the "
        "app's calls, app.cost_usd.sum <= 2).",
        convert=as_lines,
        flag=False,
        ini_type="linelist",
    )
)
register(
    Setting(
        "save_baseline",
        "Write every recorded score to this baseline JSON file (meant to be committed).",
        env=("TEXTSIM_SAVE_BASELINE",),
        metavar="PATH",
    )
)
register(
    Setting(
        "save_baseline_force",
        "Write --textsim-save-baseline even when the run failed (tests, gates, regressions, "
        "an interrupted run), NLTK data was missing or judge calls failed.",
        convert=as_bool,
        default=False,
        env=("TEXTSIM_SAVE_BASELINE_FORCE",),
        flag_action="store_true",
        ini=False,
    )
)
register(
    Setting(
        "save_baseline_prune",
        "With --textsim-save-baseline, drop the entries of tests that are gone. Refused on a "
        "partial run (-k, -m, --lf, --ignore, named files or tests), which keeps every entry "
        "of the tests it did not run.",
        convert=as_bool,
        default=False,
        env=("TEXTSIM_SAVE_BASELINE_PRUNE",),
        flag_action="store_true",
    )
)
register(
    Setting(
        "gates_on_partial",
        "Check the ini file's dataset gates in a partial run too (-k, -m, --deselect, --lf, "
        "--ignore, named files or tests); when not set, they are checked there only when the "
        "environment variable CI is true, as they hold for the whole suite. Gates given "
        "with --textsim-gate are always checked.",
        convert=as_bool,
        default=False,
        env=("TEXTSIM_GATES_ON_PARTIAL",),
        flag_action="store_true",
    )
)
register(
    Setting(
        "fail_on_threshold",
        "textsim score: exit 1 when a row has a score below its threshold (the summary "
        "says how many rows are, with or without it).",
        convert=as_bool,
        default=False,
        env=("TEXTSIM_FAIL_ON_THRESHOLD",),
        flag=False,
    )
)
register(
    Setting(
        "gates_include_xfail",
        "Count the scores of expected failures (xfail cases) in the dataset gates; by "
        "default they are recorded and reported but left out of the gates.",
        convert=as_bool,
        default=False,
        env=("TEXTSIM_GATES_INCLUDE_XFAIL",),
        flag_action="store_true",
    )
)
register(
    Setting(
        "compare",
        "Compare the scores with this baseline file and print the 'textsim regressions' section.",
        env=("TEXTSIM_COMPARE",),
        metavar="PATH",
    )
)
register(
    Setting(
        "max_drop",
        "Tolerated absolute drop against the baseline: one number for every metric (0.05) "
        "and/or metric=number entries (bleu_score=0.05). Default 0.02, judge metrics 0.",
        convert=as_tolerances,
        env=("TEXTSIM_MAX_DROP",),
        flag_action="append",
        ini_type="linelist",
        metavar="X|METRIC=X",
    )
)
register(
    Setting(
        "fail_on_regression",
        "Fail the run when any score regressed against --textsim-compare, even if every "
        "test passed.",
        convert=as_bool,
        default=False,
        env=("TEXTSIM_FAIL_ON_REGRESSION",),
        flag_action="store_true",
        # "string", not "bool": our converter names the ini file in its error.
    )
)


# -- replay of the app's own HTTP calls ------------------------------------------

register(
    Setting(
        "replay",
        "Record and replay the HTTP calls (httpx: openai, anthropic...) of tests marked "
        "textsim_replay: once (default: replay what is recorded, record the rest), none "
        "(replay only: a call with no recording fails the test), rewrite, off. In the ini "
        "file, 'all' (with or without a mode) replays every test.",
        convert=as_replay,
        default=(None, RecordMode.ONCE),  # the tests marked textsim_replay, in mode once
        default_text="once",
        env=("TEXTSIM_REPLAY",),
        metavar="MODE",
    )
)
register(
    Setting(
        "replay_dir",
        "Folder of the replay cassettes, one JSON-lines file per test "
        "(default: tests/replays in the rootdir).",
        env=("TEXTSIM_REPLAY_DIR",),
        metavar="PATH",
    )
)
register(
    Setting(
        "replay_ignore",
        "Volatile request fields left out when matching a call with its recording: JSON "
        "keys at any depth, query parameters, form fields (e.g. timestamp, request_id).",
        convert=as_lines,
        flag_action="append",
        ini_type="linelist",
        metavar="FIELD",
    )
)
register(
    Setting(
        "replay_redact",
        "Regular expressions whose matches in headers, URLs and bodies are masked before a "
        "cassette is written (credential headers, URL passwords and *_API_KEY/*_TOKEN "
        "variables' values always are).",
        convert=as_patterns,
        flag_action="append",
        ini_type="linelist",
        metavar="REGEX",
        literal_ini=True,
    )
)
register(
    Setting(
        "replay_credentials",
        "Further names of headers, query parameters and JSON or form body fields that hold "
        "credentials: their values are masked in cassettes whatever their length, as those "
        "of the built-in list (Authorization, api-key, X-Amz-Security-Token, client_secret...).",
        convert=as_lines,
        flag_action="append",
        ini_type="linelist",
        metavar="NAME",
    )
)


# -- what the app did: its model calls, their cost -------------------------------

register(
    Setting(
        "prices",
        "A TOML or JSON file of model prices in USD per million tokens, for models "
        "genai-prices does not know (custom or self-hosted): [models.\"NAME\"] input, "
        "output, cached_input, cache_write. Relative to the ini file when set there.",
        env=("TEXTSIM_PRICES",),
        metavar="PATH",
    )
)
for _name, _help, _extra in (
    ("max_cost_rise", "How much a test's app cost and tokens (and its trace's steps, tool "
     "calls, error spans and tokens) may rise against "
     "--textsim-compare's baseline before it is a regression, relative to the baseline's: "
     "0.1 is a rise of a tenth (default 0.1).",
     {"convert": as_share, "default": 0.1, "metavar": "SHARE"}),
    ("budget_usd", "Most the judge may spend in this run, in USD (priced from genai-prices or "
     "textsim_prices): once spent, no further judge call is made and the tests that need "
     "one fail; cached judgments are free. Default: no limit.",
     {"convert": as_usd, "metavar": "USD"}),
):  # fmt: skip
    _options = {"env": (f"TEXTSIM_{_name.upper()}",), **_extra}
    register(Setting(_name, _help, **_options))
del _name, _help, _extra, _options
register(
    Setting(
        "traces",
        "Collect every test's OpenTelemetry spans, not only those of tests that ask for "
        "agent_trace: their trace.* figures (gates, baselines) and span trees reach the "
        "reports. Needs pytest-textsim[otel].",
        convert=as_bool,
        default=False,
        env=("TEXTSIM_TRACES",),
        flag_action="store_true",
    )
)


# -- noise: repeats, flaky tests, intervals, significance, calibration ------------


register(
    Setting(
        "repeat",
        "Run each test that records textsim scores N times within its one test item "
        "(fresh function-scoped fixtures each run) and decide on the share of runs that "
        "passed (default 1: run once). @pytest.mark.textsim(repeat=N) overrides it per test.",
        convert=as_positive_int,
        default=1,
        env=("TEXTSIM_REPEAT",),
        metavar="N",
    )
)
register(
    Setting(
        "min_pass_rate",
        "Share of a repeated test's runs that must pass, 0..1 (default 1: every run, pass^N).",
        convert=as_unit_interval,
        default=1.0,
        env=("TEXTSIM_MIN_PASS_RATE",),
        metavar="X",
    )
)
register(
    Setting(
        "flaky",
        "What a flaky test (runs that disagree, or judge samples on both sides of the "
        "threshold) does: report (default: listed in 'textsim flaky', the verdict follows "
        "min_pass_rate) or fail (the test fails).",
        convert=one_of("report", "fail"),
        default="report",
        env=("TEXTSIM_FLAKY",),
        metavar="report|fail",
    )
)
register(
    Setting(
        "bootstrap_seed",
        "Seed of the bootstrap resampling behind intervals and p-values (default 12345, "
        "sacreBLEU's), so a run's intervals are reproducible.",
        convert=as_int,
        default=12345,
        env=("TEXTSIM_BOOTSTRAP_SEED",),
        metavar="N",
    )
)
register(
    Setting(
        "significance",
        "With --textsim-compare: a drop is a regression only when it is beyond the tolerance "
        "and significant at this level (paired bootstrap, Holm-corrected), e.g. 0.05. "
        "Default: the tolerance alone decides.",
        convert=as_level,
        env=("TEXTSIM_SIGNIFICANCE",),
        metavar="ALPHA",
    )
)
register(
    Setting(
        "variants",
        "Compare the variants of tests parametrized over these parameters (e.g. model), "
        "case by case: pairs by the rest of the test id, mean differences with their "
        "intervals, worse/better/no detectable difference (section 'textsim variants').",
        convert=as_parameter_names,
        env=("TEXTSIM_VARIANTS",),
        flag_action="append",
        ini_type="linelist",
        metavar="PARAM",
    )
)
register(
    Setting(
        "reference_variant",
        "The variant the others are compared with (default: the first value the tests ran).",
        env=("TEXTSIM_REFERENCE_VARIANT",),
        metavar="VALUE",
    )
)
register(
    Setting(
        "require_calibration",
        "Mark judge scores 'uncalibrated' unless their metric, judge model, endpoint and "
        "prompt version have a stored calibration (textsim calibrate) with weighted kappa "
        "at least this, e.g. 0.6. Default: no requirement.",
        convert=as_unit_interval,
        env=("TEXTSIM_REQUIRE_CALIBRATION",),
        metavar="KAPPA",
    )
)
register(
    Setting(
        "require_calibration_strict",
        "With textsim_require_calibration: fail the run when a judge score is uncalibrated.",
        convert=as_bool,
        default=False,
        env=("TEXTSIM_REQUIRE_CALIBRATION_STRICT",),
        flag_action="store_true",
    )
)

seal()  # every setting of the package is declared: the table is read-only from here on


def new_run(config: Any = None) -> Run:
    """A run over the package's tables, or over the current run's when there is one
    (pytester's in-process runs inside a pytest run); not current until activated."""
    parent = current_run()
    if parent is None:
        return Run(METRICS, SETTINGS, config=config)
    return Run(parent.metrics, parent.settings, config=config, parent=parent)


def this_run() -> Run:
    """The run current in this context; outside pytest, a script run made (and made
    current in this context) now, so that a script's helpers share their evaluators
    and judge."""
    run = current_run()
    if run is None:
        run = new_run()
        run.activate()
    return run
