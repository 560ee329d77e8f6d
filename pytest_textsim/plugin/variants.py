"""Variants compared in one run: the plugin's half of :mod:`pytest_textsim.gating.variants`.

:func:`configure` registers one :class:`VariantsPlugin` per process. On every
process (xdist workers too, where the test items are) it stamps each score
record of a test parametrized over a compared parameter (``--textsim-variants``,
``textsim_variants``, ``TEXTSIM_VARIANTS`` or ``@pytest.mark.textsim(variants=...)``)
with the parameter's value and its case (the test id without that value); the
records carry both to the controller. Each test's teardown report carries them
too, so that the app's figures of the test (:mod:`.calls`) count for its variant
and case even when it recorded no score. On the controller, once every record is
in, it compares the variants and adds the ``textsim variants`` section and the
JSON report's ``variants``. The ``.diff[...]`` gates read the same records (:mod:`.gating`).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ConfigError
from .session import REPORT_ATTR

if TYPE_CHECKING:
    from ..gating.variants import VariantComparison
    from ..summary import Line
    from .app_calls import CallsPlugin
    from .session import TextsimSession

#: Teardown ``report`` attribute with the test's variants and cases (plain dicts, for xdist).
TEST_ATTR = "textsim_variants"


def value_text(value: Any) -> str:
    """A parameter value as reports show it: text as it is, other values as ``repr``."""
    return value if isinstance(value, str) else repr(value)


def case_id(nodeid: str, params: dict[str, Any], parameter: str) -> str:
    """The test id without ``parameter``'s value: ``t.py::test[small-q1]`` -> ``t.py::test[q1]``.

    The value is taken out of the bracketed id where it stands as a whole part
    (between ``-``); when it does not (an ``id=`` of its own, a value pytest names
    ``model0``), the case is the test's name with its other parameters.
    """
    name, bracket, ids = nodeid.partition("[")
    ids = ids[:-1] if ids.endswith("]") else ids
    shown = value_text(params[parameter])
    rest = None
    if bracket and shown:
        if ids == shown:
            rest = ""
        elif ids.startswith(shown + "-"):
            rest = ids[len(shown) + 1 :]
        elif ids.endswith("-" + shown):
            rest = ids[: -len(shown) - 1]
        elif f"-{shown}-" in ids:
            rest = ids.replace(f"-{shown}-", "-", 1)
    if rest is None:
        rest = ",".join(f"{k}={value_text(v)}" for k, v in params.items() if k != parameter)
    return f"{name}[{rest}]" if rest else name


class VariantsPlugin:
    """Stamps the records with their variants (every process); compares them (controller)."""

    def __init__(
        self, session: TextsimSession, parameters: list[str], calls: CallsPlugin | None = None
    ) -> None:
        self.session = session
        self.parameters = parameters
        self.calls = calls
        self.comparisons: list[VariantComparison] = []
        # test id -> (parameter -> value, parameter -> case), from the teardown reports
        self.tests: dict[str, tuple[dict[str, str], dict[str, str]]] = {}

    def compared(self, item: pytest.Item) -> list[str]:
        """The compared parameters of ``item``: the settings', then its marker's."""
        names = list(self.parameters)
        for marker in item.iter_markers("textsim"):
            given = marker.kwargs.get("variants")
            # A bad value fails the test's setup (read_markers); nothing to add here.
            listed = given if isinstance(given, (list, tuple)) else ()
            for name in [given] if isinstance(given, str) else listed:
                if isinstance(name, str) and name not in names:
                    names.append(name)
        return names

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        # Outermost: the records are on the report once the inner hooks return.
        report = yield
        carried = getattr(report, REPORT_ATTR, None)
        params = getattr(getattr(item, "callspec", None), "params", None)
        if (carried or report.when == "teardown") and params:
            names = [name for name in self.compared(item) if name in params]
            variants = {name: value_text(params[name]) for name in names}
            cases = {name: case_id(item.nodeid, params, name) for name in names}
            for data in carried or ():
                data["variants"], data["cases"] = dict(variants), dict(cases)
            if report.when == "teardown" and names:
                setattr(report, TEST_ATTR, {"variants": variants, "cases": cases})
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        stamped = getattr(report, TEST_ATTR, None)
        if isinstance(stamped, dict):
            self.tests[report.nodeid] = (dict(stamped["variants"]), dict(stamped["cases"]))

    def app_figures(self, parameter: str) -> list[tuple[str, str, dict[str, float]]]:
        """``(value, case, figures)`` of each test over ``parameter`` that made app calls."""
        per_test = self.calls.per_test if self.calls is not None else {}
        return [
            (variants[parameter], cases[parameter], per_test[test])
            for test, (variants, cases) in self.tests.items()
            if parameter in variants and test in per_test
        ]

    def finish(self, session: TextsimSession) -> None:
        from ..gating.variant_costs import compare_app
        from ..gating.variants import compare_variants, parameters

        records = session.per_test  # a repeated test counts once, with its mean
        resolved = session.resolver.resolve("reference_variant")
        reference = resolved.value or None
        seed = int(session.resolver.get("bootstrap_seed"))
        used = False
        for parameter in parameters(records):
            values = {r.variants[parameter] for r in records if parameter in r.variants}
            mine = reference if reference in values else None
            used = used or mine is not None
            chosen = resolved.source if mine is not None else ""
            comparison = compare_variants(records, parameter, mine, chosen=chosen, seed=seed)
            comparison.app = compare_app(
                self.app_figures(parameter), comparison.values, comparison.reference, seed=seed
            )
            self.comparisons.append(comparison)
        if reference is not None and not used:
            known = "; ".join(
                f"{c.parameter}: {', '.join(c.values)}" for c in self.comparisons
            ) or "no test was parametrized over a compared parameter"
            session.fail(
                f"reference variant {reference!r} ({resolved.source}) is no value the "
                f"compared tests ran ({known})"
            )
        if self.comparisons:
            session.report.data["variants"] = [c.to_dict() for c in self.comparisons]

    def lines(self) -> Iterator[Line]:
        from ..gating.variants import WORSE

        for index, comparison in enumerate(self.comparisons):
            if index:
                yield ""
            for line in comparison.lines():
                yield (line, {"red": True}) if f", {WORSE} (" in line else line


def configure(session: TextsimSession, calls: CallsPlugin | None = None) -> VariantsPlugin:
    """Read the variant settings (a bad one is a usage error) and register the plugin;
    ``calls`` has each test's app figures, shown per variant."""
    try:
        parameters = session.resolver.get("variants") or []
        session.resolver.resolve("reference_variant")
    except ConfigError as exc:
        raise pytest.UsageError(f"pytest-textsim: {exc}") from None
    plugin = VariantsPlugin(session, parameters, calls)
    session.config.pluginmanager.register(plugin, "textsim-variants")
    if not session.is_worker:
        session.on_finish(plugin.finish)
        session.add_section("textsim variants", plugin.lines)
    return plugin
