"""The plugin's concerns as plugin objects, and the settings checked at start.

Each concern of plugin/ is one object registered in pytest_configure under its
name; the xdist-only hooks are registered only where pytest-xdist is loaded
(workers included), so the registrations are checked the three ways.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_textsim.plugin.session import resolve_at_start
from pytest_textsim.settings.table import SETTINGS, Resolver

REGISTERED = """
from pytest_textsim.plugin.calibration import CalibrationPlugin
from pytest_textsim.plugin.app_calls import CallsPlugin
from pytest_textsim.plugin.judge import JudgePlugin
from pytest_textsim.plugin.repeats import RepeatsPlugin
from pytest_textsim.plugin.replay import ReplayPlugin
from pytest_textsim.plugin.variants import VariantsPlugin


def test_each_concern_is_one_registered_plugin_object(request):
    manager = request.config.pluginmanager
    found = {name: type(plugin) for name, plugin in manager.list_name_plugin()
             if str(name).startswith("textsim-") and name != "textsim-xdist"}
    wanted = {"textsim-judge": JudgePlugin, "textsim-replay": ReplayPlugin,
              "textsim-calibration": CalibrationPlugin, "textsim-repeats": RepeatsPlugin,
              "textsim-calls": CallsPlugin, "textsim-variants": VariantsPlugin}
    assert {name: found.get(name) for name in wanted} == wanted
    # pytest keeps plugins in sets (a conftest's hook callers subtract them): each one
    # must hash, by identity.
    for name, plugin in manager.list_name_plugin():
        if str(name).startswith("textsim-"):
            hash(plugin)
    assert (manager.get_plugin("textsim-xdist") is not None) == manager.hasplugin("xdist")
"""


@pytest.mark.xdist_matters  # textsim-xdist exists only with xdist
def test_each_concern_is_a_plugin_object_registered_at_configure(
    pytester: pytest.Pytester, run_plugin: Any
) -> None:
    pytester.makepyfile(test_registered=REGISTERED)
    run_plugin().assert_outcomes(passed=1)


def test_the_settings_checked_at_start_are_every_setting_but_those_read_where_used() -> None:
    lazy = {setting.name for setting in SETTINGS.values() if not setting.at_start}
    assert lazy == {"nltk_index_url", "nltk_download_timeout", "judge_max_reply_bytes",
                    "judge_seed"}  # fmt: skip
    # A setting checked at start: a bad value is an error before any test runs.
    for variable, value in (
        ("TEXTSIM_JUDGE_TIMEOUT", "soon"),
        ("TEXTSIM_EMBEDDING_BATCH_SIZE", "0"),
        ("TEXTSIM_JUDGE_BASE_URL", "ftp://judge"),
        ("TEXTSIM_REQUIRE_CALIBRATION", "2"),
        ("TEXTSIM_CACHE", "sometimes"),
        ("TEXTSIM_THRESHOLD_BLEU", "7"),
    ):
        with pytest.raises(ValueError, match=variable):
            resolve_at_start(Resolver(environ={variable: value}))
    # Another tool's variable, and a setting read where it is used, wait for their use.
    for variable, value in (
        ("OPENAI_BASE_URL", "ftp://judge"),
        ("AZURE_OPENAI_ENDPOINT", "judge"),
        ("TEXTSIM_JUDGE_SEED", "x"),
        ("TEXTSIM_NLTK_DOWNLOAD_TIMEOUT", "x"),
    ):
        resolve_at_start(Resolver(environ={variable: value}))
        with pytest.raises(ValueError, match=variable):
            Resolver(environ={variable: value}).resolve(
                next(s.name for s in SETTINGS.values() if variable in s.env)
            )

