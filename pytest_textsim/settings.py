"""One resolver for every setting: marker > command line > environment > ini > default.

Each setting is declared once, in :data:`SETTINGS`, and from that declaration
the plugin registers a ``--textsim-*`` flag and a ``textsim_*`` ini key. Every
validation error names where the bad value came from, e.g.
``textsim_judge_timeout in pytest.ini: expected seconds, got 'x'``.

This module must stay cheap to import: the plugin imports it at start-up.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

from .catalog import METRICS
from .converters import (
    as_azure_endpoint,
    as_bool,
    as_endpoint_url,
    as_env_name,
    as_float,
    as_http_url,
    as_int,
    as_level,
    as_patterns,
    as_positive_int,
    as_replay,
    as_seconds,
    as_str,
    as_unit_interval,
    inline_comment,
    one_of,
)
from .errors import ConfigError
from .formatting import closest
from .gating.tolerances import parse_tolerances

_MISSING: Any = object()


@dataclass(frozen=True)
class Setting:
    """A setting: ``name`` gives ``--textsim-<name>`` and ``textsim_<name>``."""

    name: str
    help: str
    convert: Callable[[Any], Any] = as_str
    default: Any = None
    env: tuple[str, ...] = ()
    flag: bool = True
    ini: bool = True
    ini_type: str = "string"  # or "linelist" / "bool"
    metavar: str | None = None
    flag_action: str | None = None  # e.g. "append" / "store_true"
    secret: bool = False  # refuse values from flags and ini: secrets come from the environment
    # Its ini value may hold " #" or " ;" (regular expressions): never taken for a comment.
    literal_ini: bool = False
    # The default as a user types it, where the value is not text (the docs show it).
    default_text: str | None = None

    @property
    def flag_name(self) -> str:
        return "--textsim-" + self.name.replace("_", "-")

    @property
    def dest(self) -> str:
        return "textsim_" + self.name

    @property
    def ini_name(self) -> str:
        return "textsim_" + self.name


SETTINGS: dict[str, Setting] = {}


def register(setting: Setting) -> Setting:
    if setting.name in SETTINGS:
        raise RuntimeError(f"setting {setting.name!r} registered twice")
    SETTINGS[setting.name] = setting
    return setting


@dataclass
class Resolved:
    value: Any
    source: str  # human description: "--textsim-x on the command line", ...


@dataclass
class Resolver:
    """Resolves settings from a pytest config (optional) and an environment.

    ``config`` may be ``None`` (the CLI, a plain script): then only the
    environment, explicit overrides and defaults apply. ``overrides`` play the
    role of the command line for the CLI.
    """

    config: Any = None
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    overrides: dict[str, Any] = field(default_factory=dict)
    # How messages name an override's flag: the textsim command's flags lack "textsim-".
    override_prefix: str = "--textsim-"
    # How messages name a setting (``judge_timeout``) where this resolver reads it,
    # when not as pytest names it: the textsim command names its own flags.
    wording: Callable[[str], str] | None = field(default=None, repr=False, compare=False)
    _cache: dict[str, Resolved] = field(default_factory=dict)

    def _ini_where(self, name: str) -> str:
        """``in pytest.ini``, or ``from -o`` when ``-o name=...`` overrode the file."""
        overrides = getattr(getattr(self.config, "option", None), "override_ini", None) or []
        if any(str(item).partition("=")[0].strip() == name for item in overrides):
            return "from -o on the command line"
        return f"in {self.ini_file_name()}"

    def ini_file_name(self) -> str:
        inipath = getattr(self.config, "inipath", None) if self.config is not None else None
        return inipath.name if inipath is not None else "the ini file"

    def _raw(self, setting: Setting) -> tuple[Any, str]:
        if setting.name in self.overrides and self.overrides[setting.name] is not None:
            flag = self.override_prefix + setting.name.replace("_", "-")
            return self.overrides[setting.name], f"{flag} on the command line"
        if self.config is not None and setting.flag:
            value = self.config.getoption(setting.dest, default=None)
            if value is not None and value != []:
                return value, f"{setting.flag_name} on the command line"
        for var in setting.env:
            value = self.environ.get(var)
            if value is not None and value.strip() != "":
                return value, f"{var} in the environment"
        if self.config is not None and setting.ini:
            value = self.config.getini(setting.ini_name)
            if value not in (None, "", []):
                if setting.secret:
                    where = self._ini_where(setting.ini_name)
                    raise ConfigError(
                        f"{setting.ini_name} {where}: secrets are read only from "
                        f"the environment; remove it from the file and set "
                        f"{' or '.join(setting.env) or 'the environment variable'} instead"
                    )
                where = self._ini_where(setting.ini_name)
                problem = self._inline_comment(setting, value, where)
                if problem:
                    raise ConfigError(problem)
                return value, f"{setting.ini_name} {where}"
        return _MISSING, "default"

    def _inline_comment(self, setting: Setting, value: Any, where: str) -> str | None:
        """The error for a value of the ini file itself (not ``-o``, not a TOML file,
        whose comments TOML strips) that carries an inline comment, else None."""
        inipath = getattr(self.config, "inipath", None)
        if setting.literal_ini or inipath is None or str(inipath).endswith(".toml"):
            return None
        if not where.startswith("in "):
            return None
        problem = inline_comment(value)
        return f"{setting.ini_name} {where}: {problem}" if problem else None

    def inline_comments(self) -> list[str]:
        """The inline-comment error of every setting in the ini file that has one, so
        the plugin can refuse them all at start rather than one when it is first used."""
        if self.config is None:
            return []
        problems = []
        for setting in SETTINGS.values():
            if not setting.ini or setting.secret:
                continue
            value = self.config.getini(setting.ini_name)
            if value not in (None, "", []):
                problem = self._inline_comment(setting, value, self._ini_where(setting.ini_name))
                if problem:
                    problems.append(problem)
        return problems

    def resolve(self, name: str) -> Resolved:
        if name in self._cache:
            return self._cache[name]
        setting = SETTINGS[name]
        raw, source = self._raw(setting)
        if raw is _MISSING:
            resolved = Resolved(setting.default, "default")
        else:
            resolved = Resolved(convert(setting, raw, source), source)
        self._cache[name] = resolved
        return resolved

    def get(self, name: str) -> Any:
        return self.resolve(name).value

    def path(self, name: str, base: str | os.PathLike[str]) -> pathlib.Path | None:
        """A path setting: relative to the ini file's folder when it was set there,
        else to ``base`` (where pytest or the command started); ``None`` when unset."""
        resolved = self.resolve(name)
        if not resolved.value:
            return None
        path = pathlib.Path(resolved.value).expanduser()
        if path.is_absolute():
            return path
        inipath = getattr(self.config, "inipath", None) if self.config is not None else None
        if inipath is not None and resolved.source.startswith(f"textsim_{name} in"):
            return pathlib.Path(inipath).parent / path
        return pathlib.Path(base) / path


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean textsim_judge_model?)`` for the closest of ``known``, or ``""``."""
    close = closest(name, known)
    return f"; did you mean {close}?" if close else ""


def unknown_ini_key(name: str, where: str) -> str | None:
    """The message for ``textsim_*`` key ``name`` set ``where`` if it is no setting, else None.

    ``textsim_judge_modle: unknown setting (in pytest.ini); did you mean textsim_judge_model?``
    """
    known = [s.ini_name for s in SETTINGS.values() if s.ini]
    if not name.startswith("textsim_") or name in known:
        return None
    return f"{name}: unknown setting ({where}){did_you_mean(name, known)}"


def unknown_environment(environ: Mapping[str, str]) -> list[str]:
    """A warning for each ``TEXTSIM_*`` variable that no setting reads (a typo, or
    a setting that is not read from the environment), with a did-you-mean."""
    known = sorted({var for s in SETTINGS.values() for var in s.env if var.startswith("TEXTSIM_")})
    return [
        f"warning: {name} in the environment is no pytest-textsim setting; it is ignored"
        + did_you_mean(name, known)
        for name in sorted(environ)
        if name.startswith("TEXTSIM_") and name not in known
    ]


def convert(setting: Setting, raw: Any, source: str) -> Any:
    """Convert ``raw`` with the setting's converter; errors name ``source``."""
    try:
        return setting.convert(raw)
    except ValueError as exc:
        raise ConfigError(f"{source}: {exc}") from None


# --------------------------------------------------------------------------
# Settings. Keep each group together; the plugin registers them in this order.
# --------------------------------------------------------------------------

# NLTK data (issue: evaluators)
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
    )
)

# -- pytest plugin: thresholds, report, JSON output -----------------------------


# Each metric's default pass threshold, from the metric catalog: the setting's
# name, range, default and help text are the catalog entry's.
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


def as_temperature(value: Any) -> float:
    number = as_float(value)
    if not 0.0 <= number <= 2.0:
        raise ValueError(f"expected a temperature from 0 to 2, got {value!r}")
    return number


for _name, _help, _extra in (
    ("judge_provider", "Judge API: openai (default; any OpenAI-compatible server), azure or "
     "anthropic (its Messages API; pip install 'pytest-textsim[anthropic]').",
     {"convert": one_of("openai", "azure", "anthropic"), "default": "openai",
      "metavar": "openai|azure|anthropic"}),
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
     "textsim_judge_hub = false).",
     {"convert": as_positive_int, "default": 8, "metavar": "N"}),
    ("judge_hub", "Under pytest-xdist the controller makes the judge and embedding calls of "
     "every worker on its machine, so workers need not import openai (default true); false: "
     "each worker calls the judge itself, e.g. when tests mock the judge's HTTP calls in "
     "the workers.", {"convert": as_bool, "default": True, "metavar": "true|false"}),
    ("judge_temperature", "Judge sampling temperature (default 0; ignored for reasoning models).",
     {"convert": as_temperature, "default": 0.0, "metavar": "T"}),
    ("judge_max_tokens", "Most tokens in a judge reply (default 800).",
     {"convert": as_positive_int, "default": 800, "metavar": "N"}),
    ("judge_max_reply_bytes", "Largest judge chat reply accepted, in bytes (default 1000000); "
     "a larger one is an error, retried and never cached.",
     {"convert": as_positive_int, "default": 1_000_000, "metavar": "BYTES"}),
    ("judge_reasoning", "The judge is a reasoning model (o1, o3, gpt-5...): send no temperature "
     "and max_completion_tokens instead of max_tokens.",
     # "string", not "bool": our converter names the key in its errors.
     {"convert": as_bool, "default": False, "flag_action": "store_true"}),
    ("judge_seed", "Seed sent with each judge request where the provider takes it (OpenAI, "
     "Azure, vLLM...), for more repeatable judgments; part of the cache key. Default: none "
     "sent.", {"convert": as_int, "metavar": "N"}),
    ("judge_samples", "Ask the judge N times per score and use the median (default 1).",
     {"convert": as_positive_int, "default": 1, "metavar": "N"}),
    ("judge_logprobs", "Rubric scores weighted by the judge's token probabilities (G-Eval): "
     "auto (default: ask for logprobs, fall back to the integer) or off.",
     {"convert": one_of("auto", "off"), "default": "auto", "metavar": "auto|off"}),
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
     {"convert": one_of("once", "none", "rewrite", "off"), "default": "once",
      "metavar": "once|none|rewrite|off"}),
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


def as_tolerances(value: Any) -> Any:
    """``0.05`` / ``bleu_score=0.05`` entries as :class:`~.gating.tolerances.Tolerances`."""
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
        "max, median, pNN, pass_rate, count (e.g. meteor_score.p10 >= 0.3).",
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
        "partial run (-k, -m, --lf, named files or tests), which keeps every entry of the "
        "tests it did not run.",
        convert=as_bool,
        default=False,
        env=("TEXTSIM_SAVE_BASELINE_PRUNE",),
        flag_action="store_true",
    )
)
register(
    Setting(
        "gates_on_partial",
        "Check the dataset gates in a partial run too (-k, -m, --lf, named files or tests); "
        "by default they are not checked there, as they hold for the whole suite.",
        convert=as_bool,
        default=False,
        env=("TEXTSIM_GATES_ON_PARTIAL",),
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
        default=(None, "once"),  # the tests marked textsim_replay, in mode once
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
