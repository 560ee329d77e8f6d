"""Safety checks as scores: personal data and secrets a response must not contain.

``no_pii`` looks for e-mail addresses, phone numbers (parsed and validated by
``phonenumbers``), payment card numbers (Luhn), IBANs (the country's length and
mod-97), US social security numbers and IP addresses; ``no_secrets`` for API keys
and tokens through detect-secrets' detectors (OpenAI, AWS, GitHub, GitLab, Slack,
Stripe, JWTs, private key blocks, ``password = ...`` keywords and the rest of its
list), two of this package's own written as detect-secrets plugins (Anthropic and
Google API keys), and high-entropy strings scored by detect-secrets' entropy limits.

Both score 1.0 when nothing is found and 0.0 otherwise. A finding is named with
its kind and character span, its value masked (``************1111``), and the
response as recorded (failure messages, the JSON and HTML reports) is masked the
same way: a card number or a key found is never printed whole.

>>> NoPiiEvaluator()(response="Mail jo@example.com")["no_pii_reason"]
'found 1: email at 5-19 j*@*******.com'
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .checks import _ResponseCheck, as_string_list

PII_KINDS = ("email", "phone", "card", "iban", "ssn", "ip")
"""What ``no_pii`` looks for, in the order overlapping findings are resolved: a
card number is not also reported as a phone number."""

_EXTRA = "pip install 'pytest-textsim[safety]'"

#: Length of an IBAN by country (the SWIFT IBAN registry); another country's is not one.
IBAN_LENGTHS = MappingProxyType({
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28,
    "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24,
    "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31,
    "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
})  # fmt: skip


@dataclass(frozen=True)
class Finding:
    """One thing found: its kind, its span in the response and its value masked."""

    kind: str
    start: int
    end: int
    masked: str

    def __str__(self) -> str:
        return f"{self.kind} at {self.start}-{self.end} {self.masked}"


def _masked(value: str, keep_head: int = 0, keep_tail: int = 0) -> str:
    """``value`` with its letters and digits as ``*``, but the first ``keep_head``
    and the last ``keep_tail`` of them; separators (spaces, dashes, dots) kept."""
    positions = [i for i, ch in enumerate(value) if ch.isalnum()]
    shown = set(positions[:keep_head]) | set(positions[len(positions) - keep_tail :])
    return "".join(
        ch if i in shown or not ch.isalnum() else "*" for i, ch in enumerate(value)
    )


# -- personal data -------------------------------------------------------------

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9._%+-]{1,64}@((?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24})(?![\w-])"
)
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}")
_SSN = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")
_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?!\.?\d)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")


def _luhn(digits: str) -> bool:
    total = 0
    for position, ch in enumerate(reversed(digits)):
        value = int(ch)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _email(text: str) -> Iterator[Finding]:
    for found in _EMAIL.finditer(text):
        local, _, domain = found.group().partition("@")
        tld = domain.rsplit(".", 1)[1]
        shown = _masked(local, keep_head=1) + "@" + _masked(domain[: -len(tld)]) + tld
        yield Finding("email", found.start(), found.end(), shown)


def _card(text: str) -> Iterator[Finding]:
    for found in _CARD.finditer(text):
        digits = re.sub(r"\D", "", found.group())
        if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and _luhn(digits):
            yield Finding("card", found.start(), found.end(), _masked(found.group(), keep_tail=4))


def _iban(text: str) -> Iterator[Finding]:
    for found in _IBAN.finditer(text):
        length = IBAN_LENGTHS.get(found.group()[:2])
        if length is None:
            continue
        # The match may run on into the next capitalised word: take the country's length.
        taken, end = 0, found.start()
        while end < found.end() and taken < length:
            taken += text[end] != " "
            end += 1
        code = text[found.start() : end].replace(" ", "")
        if len(code) != length:
            continue
        moved = code[4:] + code[:4]
        if int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1:
            shown = _masked(text[found.start() : end], keep_head=2, keep_tail=4)
            yield Finding("iban", found.start(), end, shown)


def _ssn(text: str) -> Iterator[Finding]:
    for found in _SSN.finditer(text):
        yield Finding("ssn", found.start(), found.end(), _masked(found.group(), keep_tail=4))


def _ip(text: str) -> Iterator[Finding]:
    for pattern in (_IPV4, _IPV6):
        for found in pattern.finditer(text):
            try:
                ipaddress.ip_address(found.group())
            except ValueError:
                continue
            head, sep, rest = found.group().partition("." if pattern is _IPV4 else ":")
            yield Finding("ip", found.start(), found.end(), head + sep + _masked(rest))


def _phones(region: str) -> Any:
    def phone(text: str) -> Iterator[Finding]:
        try:
            import phonenumbers
        except ImportError:
            raise ImportError(f"no_pii's phone numbers need phonenumbers: {_EXTRA}") from None
        matcher = phonenumbers.PhoneNumberMatcher(
            text, region, leniency=phonenumbers.Leniency.VALID
        )
        for match in matcher:
            yield Finding("phone", match.start, match.end, _masked(match.raw_string, keep_tail=2))

    return phone


def _check_region(region: object) -> str:
    if not isinstance(region, str):
        raise ValueError(f"region must be a region code such as 'US', got {region!r}")
    try:
        import phonenumbers
    except ImportError:
        raise ImportError(f"no_pii's phone numbers need phonenumbers: {_EXTRA}") from None
    if region.upper() not in phonenumbers.SUPPORTED_REGIONS:
        raise ValueError(
            f"region {region!r} is not a region phonenumbers knows; give a two-letter "
            "code such as 'US', 'GB' or 'DE'"
        )
    return region.upper()


def _kinds(value: object, known: Sequence[str], what: str) -> tuple[str, ...]:
    kinds = as_string_list(value, "kinds")
    unknown = [kind for kind in kinds if kind not in known]
    if unknown:
        raise ValueError(
            f"kinds: unknown {what} {', '.join(map(repr, unknown))}; known: {', '.join(known)}"
        )
    return tuple(kind for kind in known if kind in kinds)


def _resolved(findings: Sequence[Finding], allow: Sequence[str], text: str) -> list[Finding]:
    """Findings in text order, none overlapping an earlier-listed one, none allowed."""
    allowed = {item.casefold() for item in allow}
    kept: list[Finding] = []
    for finding in findings:
        if text[finding.start : finding.end].casefold() in allowed:
            continue
        if any(finding.start < k.end and k.start < finding.end for k in kept):
            continue
        kept.append(finding)
    return sorted(kept, key=lambda finding: finding.start)


def masked_text(text: str, findings: Sequence[Finding]) -> str:
    """``text`` with each finding's span replaced by its masked value."""
    parts, at = [], 0
    for finding in sorted(findings, key=lambda finding: finding.start):
        parts.append(text[at : finding.start])
        parts.append(finding.masked)
        at = finding.end
    parts.append(text[at:])
    return "".join(parts)


class _FindingsCheck(_ResponseCheck):
    """1.0 when nothing is found in ``response``, else 0.0; findings named and masked."""

    #: The kinds looked for, named in a pass's reason when not all of them.
    _looked_for: tuple[str, ...] = ()

    def _findings(self, response: str) -> list[Finding]:
        raise NotImplementedError

    def _response(self, response: str) -> dict[str, Any]:
        findings = self._findings(response)
        if not findings:
            looked = f" (looked for {', '.join(self._looked_for)})" if self._looked_for else ""
            return self._output(1.0, "none found" + looked)
        reason = f"found {len(findings)}: " + "; ".join(map(str, findings))
        out = self._output(0.0, reason)
        # What reports and failure messages show in place of the response.
        out[f"{self._key}_masked"] = {"response": masked_text(response, findings)}
        return out


class NoPiiEvaluator(_FindingsCheck):
    """1.0 when ``response`` holds no personal data of ``kinds``; each finding masked.

    ``kinds``: any of ``email``, ``phone``, ``card``, ``iban``, ``ssn``, ``ip``
    (default all). ``allow``: values that are no finding (a support address the
    answer may give), compared without case. ``region``: where phone numbers
    written without ``+`` and a country code are read as national ones (default
    ``US``).

    >>> NoPiiEvaluator(kinds=["card"])(response="Card 4111 1111 1111 1111.")["no_pii_reason"]
    'found 1: card at 5-24 **** **** **** 1111'
    """

    _key = "no_pii"

    def __init__(
        self,
        *,
        kinds: Sequence[str] = PII_KINDS,
        allow: Sequence[str] = (),
        region: str = "US",
        threshold: float = 1.0,
    ) -> None:
        super().__init__(threshold=threshold)
        self._kinds = _kinds(kinds, PII_KINDS, "kind")
        self._allow = as_string_list(allow, "allow") if allow else ()
        self._region = _check_region(region) if "phone" in self._kinds else str(region)
        self._looked_for = () if self._kinds == PII_KINDS else self._kinds
        finders = {
            "card": _card, "iban": _iban, "ssn": _ssn, "email": _email, "ip": _ip,
            "phone": _phones(self._region),
        }  # fmt: skip
        self._finders = [finders[kind] for kind in ("card", "iban", "ssn", "email", "ip", "phone")
                         if kind in self._kinds]  # fmt: skip

    @property
    def params(self) -> dict[str, Any]:
        return {"kinds": list(self._kinds), "allow": list(self._allow), "region": self._region}

    def _findings(self, response: str) -> list[Finding]:
        found = [finding for finder in self._finders for finding in finder(response)]
        return _resolved(found, self._allow, response)


# -- secrets ---------------------------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z0-9+/=_\-]{20,}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_JWT_REST = re.compile(r"[A-Za-z0-9_\-=]*")


def _kind_of(secret_type: str) -> str:
    """detect-secrets' type name as a kind: ``OpenAI Token`` -> ``openai_token``."""
    return re.sub(r"[^a-z0-9]+", "_", secret_type.lower()).strip("_")


def _detectors() -> dict[str, Any]:
    """Kind -> a detect-secrets plugin instance: its own detectors (but public IPs, which
    ``no_pii`` finds) and this package's Anthropic and Google API key detectors."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:
        raise ImportError(f"no_secrets needs detect-secrets: {_EXTRA}") from None

    class AnthropicDetector(RegexBasedDetector):
        """Anthropic API and admin keys."""

        secret_type = "Anthropic API Key"
        denylist = [re.compile(r"sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_\-]{80,}")]

    class GoogleApiKeyDetector(RegexBasedDetector):
        """Google Cloud / Gemini API keys."""

        secret_type = "Google API Key"
        denylist = [re.compile(r"AIza[0-9A-Za-z_\-]{35}")]

    plugins: dict[str, Any] = {}
    theirs: dict[str, Any] = get_mapping_from_secret_type_to_class()
    for secret_type, cls in sorted(theirs.items()):
        if secret_type.startswith("Public IP") or "High Entropy" in secret_type:
            continue
        plugins[_kind_of(secret_type)] = cls()
    ours: tuple[Any, ...] = (AnthropicDetector, GoogleApiKeyDetector)
    for own in ours:
        plugins[_kind_of(own.secret_type)] = own()
    return plugins


def secret_kinds() -> tuple[str, ...]:
    """The kinds ``no_secrets`` can look for with the installed detect-secrets."""
    return (*sorted(_detectors()), "high_entropy_string")


def _plugin_findings(kind: str, plugin: Any, line: str, offset: int) -> Iterator[Finding]:
    from detect_secrets.plugins.base import RegexBasedDetector

    for secret in plugin.analyze_line(filename="response", line=line, line_number=1):
        value = secret.secret_value or ""
        spans: list[tuple[int, int]] = []
        if isinstance(plugin, RegexBasedDetector):
            # The whole token, where the plugin reports only a part of it (GitHub's prefix).
            spans = [
                found.span()
                for pattern in plugin.denylist
                for found in pattern.finditer(line)
                if value in found.group()
            ]
        if not spans and value:
            at = line.find(value)
            spans = [(at, at + len(value))] if at >= 0 else []
        for start, end in spans:
            if kind == "json_web_token":
                # detect-secrets' pattern may stop before the signature: take it too.
                end += len(_JWT_REST.match(line, end).group())  # type: ignore[union-attr]
            yield Finding(kind, offset + start, offset + end, "")


def _entropy_findings(line: str, offset: int) -> Iterator[Finding]:
    from detect_secrets.plugins.high_entropy_strings import (
        Base64HighEntropyString,
        HexHighEntropyString,
    )

    b64, hexa = Base64HighEntropyString(), HexHighEntropyString()
    for found in _TOKEN.finditer(line):
        token = found.group()
        word = line[line.rfind(" ", 0, found.start()) + 1 :].split(" ", 1)[0]
        if "://" in word or not re.search(r"\d", token) or not re.search(r"[A-Za-z]", token):
            continue  # a URL, or no mix of letters and digits: not a key
        if _HEX.fullmatch(token):
            limit, entropy = hexa.entropy_limit, hexa.calculate_shannon_entropy(token)
        else:
            limit, entropy = b64.entropy_limit, b64.calculate_shannon_entropy(token)
        if entropy > limit:
            yield Finding("high_entropy_string", offset + found.start(), offset + found.end(), "")


class NoSecretsEvaluator(_FindingsCheck):
    """1.0 when ``response`` holds no API key, token, password or private key.

    ``kinds``: the detectors to run (default all; :func:`secret_kinds` lists them:
    detect-secrets' type names in lower case with underscores, ``openai_token``,
    ``aws_access_key``, ``github_token``, ``json_web_token``, ``private_key``,
    ``secret_keyword``..., and ``anthropic_api_key``, ``google_api_key``,
    ``high_entropy_string``). ``allow``: values that are no finding (a documented
    example key). A finding shows its first 4 characters; a private key block
    is masked from its ``BEGIN`` line to its ``END`` line.
    """

    _key = "no_secrets"

    def __init__(
        self, *, kinds: Sequence[str] | None = None, allow: Sequence[str] = (),
        threshold: float = 1.0,
    ) -> None:  # fmt: skip
        super().__init__(threshold=threshold)
        detectors = _detectors()
        known = (*sorted(detectors), "high_entropy_string")
        self._kinds = known if kinds is None else _kinds(kinds, known, "secret kind")
        self._allow = as_string_list(allow, "allow") if allow else ()
        self._plugins = [(kind, detectors[kind]) for kind in self._kinds if kind in detectors]
        self._entropy = "high_entropy_string" in self._kinds
        self._looked_for = () if kinds is None else self._kinds

    @property
    def params(self) -> dict[str, Any]:
        return {"kinds": list(self._kinds), "allow": list(self._allow)}

    def _findings(self, response: str) -> list[Finding]:
        from detect_secrets.settings import default_settings

        found: list[Finding] = []
        offset = 0
        with default_settings():
            for line in response.splitlines(keepends=True):
                for kind, plugin in self._plugins:
                    found.extend(_plugin_findings(kind, plugin, line, offset))
                if self._entropy:
                    found.extend(_entropy_findings(line, offset))
                offset += len(line)
        found = [_whole_key_block(response, finding) for finding in found]
        # A named detector's finding before an entropy one, a longer one before a part
        # of it another detector saw.
        found.sort(key=lambda f: (f.kind == "high_entropy_string", f.start - f.end))
        return [
            Finding(f.kind, f.start, f.end, _secret_masked(response[f.start : f.end]))
            for f in _resolved(found, self._allow, response)
        ]


def _secret_masked(value: str) -> str:
    """A secret's first 4 characters, the rest as ``*`` (line breaks kept)."""
    return value[:4] + re.sub(r"\S", "*", value[4:])


def _whole_key_block(text: str, finding: Finding) -> Finding:
    """A private key's header widened to its whole block (to the ``END`` line)."""
    if finding.kind != "private_key":
        return finding
    begin = text.rfind("-----BEGIN", 0, finding.end)
    end_at = text.find("-----END", finding.end)
    if begin < 0 or end_at < 0:
        return finding
    close = text.find("-----", end_at + len("-----END"))
    end = close + len("-----") if close >= 0 else len(text)
    return Finding(finding.kind, begin, end, "")
