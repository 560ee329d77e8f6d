"""Each judge provider is one module of judge/providers/ plus one value of
textsim_judge_provider, as CONTRIBUTING's "Adding a judge provider" says."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from pytest_textsim.judge import providers
from pytest_textsim.judge.errors import JudgeConfigError
from pytest_textsim.settings import SETTINGS

FOLDER = Path(providers.__file__).parent


def test_every_module_is_a_provider_and_a_setting_value() -> None:
    modules = sorted(p.stem for p in FOLDER.glob("*.py") if p.stem != "__init__")
    assert modules == sorted(providers.NAMES)
    convert = SETTINGS["judge_provider"].convert
    for name in providers.NAMES:
        module = importlib.import_module(f"pytest_textsim.judge.providers.{name}")
        assert module.PROVIDER.name == name == convert(name)
        assert providers.provider(name) is module.PROVIDER
    with pytest.raises(ValueError, match="expected one of openai, azure, anthropic"):
        convert("gemini")


def test_configurations_find_their_provider() -> None:
    assert providers.for_config({"type": "anthropic", "model": "m"}).name == "anthropic"
    assert providers.for_config({"azure_deployment": "d"}).name == "azure"
    assert providers.for_config({"model": "m"}).name == "openai"
    with pytest.raises(JudgeConfigError, match="unknown judge provider 'gemini'") as info:
        providers.provider("gemini")
    assert info.value.setting == "judge_provider"
