"""Judge providers: the built-ins (a module of judge/providers/ each, in the
registry's table and in pyproject's entry points), BaseProvider's defaults, and
the registry that register_provider() and other packages' entry points join."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from outside_provider import install

from pytest_textsim import BaseProvider, register_provider
from pytest_textsim.judge import providers
from pytest_textsim.judge.errors import JudgeConfigError, JudgeWarning
from pytest_textsim.judge.providers.registry import BUILTINS, GROUP, ProviderRegistry
from pytest_textsim.settings.table import SETTINGS, new_run

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9 and 3.10
    tomllib = None

FOLDER = Path(providers.__file__).parent
ROOT = FOLDER.parents[2]


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    """Each test runs in a run of its own: its registry holds the built-ins and
    entry points, and what a test registers ends with it."""
    run = new_run()
    run.activate()
    yield
    run.deactivate()


def test_every_module_is_a_provider_and_a_setting_value() -> None:
    modules = sorted(
        p.stem for p in FOLDER.glob("*.py") if p.stem not in ("__init__", "base", "registry")
    )
    assert modules == sorted(providers.NAMES) == sorted(BUILTINS)
    convert = SETTINGS["judge_provider"].convert
    for name in providers.NAMES:
        module = importlib.import_module(f"pytest_textsim.judge.providers.{name}")
        made = providers.provider(name)
        assert made.name == module.PROVIDER.name == name == convert(name)
        assert type(made) is type(module.PROVIDER)
        assert providers.provider(name) is made  # made once a run
    with pytest.raises(ValueError, match="expected a judge provider's name .* got 'Gem ini'"):
        convert("Gem ini")


@pytest.mark.skipif(tomllib is None, reason="tomllib is Python 3.11+ (the table is the same)")
def test_the_builtins_are_the_packages_entry_points_too() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["entry-points"][GROUP] == dict(BUILTINS)


def test_configurations_find_their_provider() -> None:
    assert providers.for_config({"type": "anthropic", "model": "m"}).name == "anthropic"
    assert providers.for_config({"azure_deployment": "d"}).name == "azure"
    assert providers.for_config({"model": "m"}).name == "openai"
    with pytest.raises(JudgeConfigError, match="unknown judge provider 'gemini'") as info:
        providers.provider("gemini")
    assert info.value.setting == "judge_provider"
    assert "expected one of anthropic, azure, local, openai (a package adds one" in str(info.value)


class Echo(BaseProvider):
    """Only what a provider must write."""

    name = "echo-v2"

    def connect(self, spec, url, headers, http, timeout, asynchronous=False):  # type: ignore[no-untyped-def]
        return http

    def chat(self, client, spec, sampling, messages, extra):  # type: ignore[no-untyped-def]
        return client

    def read(self, body: bytes) -> providers.Completion:
        return body.decode(), 1, 1, "stop", {"served_model": "", "fingerprint": ""}


class EchoWithEmbeddings(Echo):
    name = "echo-emb"

    def embed(self, client, model, texts, extra):  # type: ignore[no-untyped-def]
        return []


def test_base_provider_defaults() -> None:
    echo = Echo()
    assert (echo.title, echo.key_var, echo.api) == ("echo-v2", "ECHO_V2_API_KEY", "echo-v2 API")
    assert (echo.logprobs, echo.embeddings, EchoWithEmbeddings.embeddings) == (False, False, True)
    assert echo.read_logprobs(b"{}") == []
    with pytest.raises(JudgeConfigError, match="echo-v2 has no embeddings API"):
        echo.embed(None, "m", ["a"], {})
    assert echo.claims({"type": "echo-v2"}) and not echo.claims({"model": "m"})
    register_provider("echo-v2", Echo)
    spec = providers.model_spec(
        {"type": "echo-v2", "model": "m", "base_url": "http://127.0.0.1:9/v1"}, environ={}
    )
    assert (spec.provider, spec.model, spec.endpoint, spec.keyless) == (
        "echo-v2", "m", "http://127.0.0.1:9/v1", True)  # fmt: skip
    keyed = providers.model_spec(
        {"type": "echo-v2", "model": "m", "base_url": "http://h/v1"},
        environ={"ECHO_V2_API_KEY": "sk-echo"},
    )
    assert keyed.api_key == "sk-echo" and keyed.key_var == "ECHO_V2_API_KEY"
    with pytest.raises(JudgeConfigError, match="echo-v2 model configuration lacks 'base_url'"):
        providers.model_spec({"type": "echo-v2", "model": "m"}, environ={})
    with pytest.raises(JudgeConfigError, match=r"unknown keys \['organization'\]; a echo-v2"):
        providers.model_spec({"type": "echo-v2", "model": "m", "organization": "x"})


def test_registered_providers_and_their_mistakes() -> None:
    registry = ProviderRegistry()
    registry.register("echo-v2", Echo)
    assert registry.names()[:4] == ["anthropic", "azure", "local", "openai"]
    assert "echo-v2" in registry.names() and registry.knows("echo-v2")
    assert isinstance(registry.get("echo-v2"), Echo)
    with pytest.raises(ValueError, match="'openai' is a built-in judge provider"):
        registry.register("openai", Echo)
    with pytest.raises(ValueError, match="lower-case letters"):
        registry.register("Echo", Echo)

    class Unwritten(BaseProvider):
        name = "half"

    registry.register("half", Unwritten)
    with pytest.raises(JudgeConfigError, match="'half' .* could not be made: TypeError: .*chat"):
        registry.get("half")
    registry.register("other", Echo)
    with pytest.raises(JudgeConfigError, match="'other' .* calls itself 'echo-v2'"):
        registry.get("other")
    registry.register("bare", object)
    with pytest.raises(JudgeConfigError, match="'bare' .* lacks name, title, .*BaseProvider"):
        registry.get("bare")


def test_an_entry_point_provider_and_the_clashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(
        tmp_path / "site",
        monkeypatch,
        "lab = textsim_lab:LabProvider\nopenai = textsim_lab:NamedOpenAI\n"
        "broken = textsim_lab_gone:Provider\n",
    )
    registry = ProviderRegistry()
    with pytest.warns(JudgeWarning, match="names the built-in judge provider 'openai'; the "):
        assert registry.names() == ["anthropic", "azure", "local", "openai", "broken", "lab"]
    # The built-in wins over an entry point of its name, the entry point is read lazily.
    assert type(registry.get("openai")).__module__ == "pytest_textsim.judge.providers.openai"
    lab = registry.get("lab")
    assert (type(lab).__module__, lab.title, lab.key_var) == ("textsim_lab", "Lab", "LAB_API_KEY")
    with pytest.raises(JudgeConfigError, match="'broken' .*could not be loaded: ModuleNotFound"):
        registry.get("broken")
    # A register_provider() call wins over an entry point of its name.

    class Lab(Echo):
        name = "lab"

    registry.register("lab", Lab)
    assert type(registry.get("lab")) is Lab
    # A model configuration whose type names it finds it (in the run's registry).
    with pytest.warns(JudgeWarning, match="the built-in is used"):
        assert type(providers.for_config({"type": "lab"})).__module__ == "textsim_lab"


def test_check_provider_names_the_source() -> None:
    providers.check_provider("openai", "unused")
    with pytest.raises(JudgeConfigError) as info:
        providers.check_provider("gemini", "textsim_judge_provider in pytest.ini")
    assert str(info.value).startswith(
        "textsim_judge_provider in pytest.ini: unknown judge provider 'gemini'; expected one of "
        "anthropic, azure, local, openai"
    )
