"""What the judge's errors say to try, by how a call failed and which provider failed.

Each message names the setting to change as the caller words it (``label``,
from :meth:`JudgeOptions.label`), and the error carries that setting's name
(:attr:`JudgeError.setting`) for code that acts on it.
"""

from __future__ import annotations

from typing import Callable

from .errors import JudgeError, JudgeUnreachable
from .providers import Provider
from .reachability import Outage
from .spec import ModelSpec

Label = Callable[[str], str]


def refused(
    spec: ModelSpec, provider: Provider, status: int, detail: str, what: str, label: Label
) -> JudgeError:
    """The error for a status that is not retried (400, 401, 403, 404...)."""
    setting = ""
    if status in (401, 403) and spec.keyless:
        hint = (
            f"it wants an API key and none was set, so none was sent; set {spec.key_var} "
            f"in the environment, or name the variable holding the key with "
            f"{label('judge_api_key_env')}"
        )
        setting = "judge_api_key_env"
    elif status == 401:
        hint = f"the API key was refused; check {spec.key_var or 'the key'}"
        setting = "judge_api_key_env"
    elif status == 403:
        hint = "the key has no access to this resource or model; check its permissions"
    elif status == 404:
        hint, setting = provider.not_found(spec, label)
    else:
        hint = "the request was refused"
    # A 401 detail can echo part of the key ("Incorrect API key provided: sk-ab***"):
    # leave the server's words out for auth failures.
    suffix = f" ({detail})" if detail and status not in (401, 403) else ""
    return JudgeError(
        f"{what} at {spec.host} answered HTTP {status}: {hint}{suffix}",
        host=spec.host,
        status=status,
        setting=setting,
    )


def after_attempts(
    spec: ModelSpec,
    provider: Provider,
    status: int | None,
    slow: bool,
    malformed: bool,
    what: str,
    label: Label,
) -> tuple[str, str]:
    """``(advice, setting)`` after the last attempt failed, by how it failed."""
    if malformed:
        where = provider.endpoint_setting
        api = provider.api if what == "judge" else f"{what}"
        return (
            f"Check that {label(where)} names an {api} API (a proxy or gateway in between "
            "may be answering instead).",
            where,
        )
    if slow:
        return (
            f"Raise {label('judge_timeout')} if the service is slow, or "
            f"{label('judge_max_retries')} for more attempts.",
            "judge_timeout",
        )
    if status is None:  # no HTTP answer at all
        where = provider.endpoint_setting
        return (
            f"Check that the service at {spec.host} is up and reachable ({label(where)}).",
            where,
        )
    return (
        f"Raise {label('judge_max_retries')} if the service is overloaded or rate-limited.",
        "judge_max_retries",
    )


def unreachable(
    spec: ModelSpec,
    provider: Provider,
    outage: Outage,
    count: int,
    probe_after: float,
    what: str,
    label: Label,
) -> JudgeUnreachable:
    """The error for a call not attempted because the endpoint is marked down."""
    where = provider.endpoint_setting
    return JudgeUnreachable(
        f"{what} at {outage.host} unreachable since {outage.since} ({outage.reason}); "
        f"{count} {what} call{'' if count == 1 else 's'} not attempted. It is tried again "
        f"{probe_after:g}s after the last failed attempt; check that the "
        f"service at {outage.host} is up ({label(where)}).",
        host=outage.host,
        setting=where,
    )
