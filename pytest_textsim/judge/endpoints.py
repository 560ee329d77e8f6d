"""Judge endpoint URLs: how errors and the cache name them, and the credentials in them.

A base URL may carry user info (``https://user:key@host/v1``): it never
appears in a message, a log line or a cache key; it is sent as the Basic
``Authorization`` header httpx would have made of it.

The cache identifies an endpoint by its host and path (:func:`endpoint_key`).
A loopback host's port is left out: a local server (Ollama, vLLM, a test
server) comes up on whatever port is free, and it is the same judge on each.
A remote host keeps its port, since another port there may be another service.

A judge batch kept to be resumed is tied to more than that (:func:`batch_endpoint`):
the scheme, host, port and path of the server that holds it, since a batch id
means nothing to another server, local or not.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import parse_qsl, urlsplit

from .errors import JudgeConfigError


def endpoint_host(url: str) -> str:
    """``host[:port]`` of ``url``: what errors and logs name as the endpoint.

    User info (``user:key@``), path and query string are left out, since they
    may carry credentials. The host is kept exactly as written.
    """
    return urlsplit(url).netloc.rpartition("@")[2]


def endpoint_key(url: str) -> str:
    """``host[:port]/path`` of ``url``, the endpoint as the judge cache and the
    calibrations key it: a loopback host without its port.

    >>> endpoint_key("https://me:secret@api.example.com:8443/v1/?x=1")
    'api.example.com:8443/v1'
    >>> endpoint_key("http://127.0.0.1:11434/v1")
    '127.0.0.1/v1'
    """
    return stored_endpoint(endpoint_host(url) + urlsplit(url).path.rstrip("/"))


def batch_endpoint(url: str) -> str:
    """``scheme://host[:port]/path`` of ``url``: the server a judge batch submitted
    through it belongs to, port and all (an Azure resource and an Anthropic base
    URL are in its host and path). No user info or query: they may hold keys.

    >>> batch_endpoint("http://me:secret@127.0.0.1:11434/v1/?key=x")
    'http://127.0.0.1:11434/v1'
    """
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{endpoint_host(url)}{parts.path.rstrip('/')}"


def is_batch_endpoint(endpoint: str) -> bool:
    """``endpoint`` (as a judge batch was kept under) is a :func:`batch_endpoint`;
    else an :func:`endpoint_key`, as releases before it kept batches: a
    loopback host's port not among it."""
    return "://" in endpoint


# ``host[:port]`` with the host a name, an IPv4 address or a bracketed IPv6 one.
_HOST_PORT = re.compile(r"(?P<host>\[[^\]]*\]|[^:]*)(?::(?P<port>[^:]*))?")


def stored_endpoint(endpoint: str) -> str:
    """An endpoint as a cache keys it (``host[:port]`` and a path or none), with
    the port of a loopback host dropped; any other endpoint as it is.

    Keys stored by releases that kept every port are read through this.

    >>> stored_endpoint("localhost:8000/v1"), stored_endpoint("[::1]:8000")
    ('localhost/v1', '[::1]')
    """
    host_port, slash, path = endpoint.partition("/")
    found = _HOST_PORT.fullmatch(host_port)
    if found is None or found.group("port") is None or not is_loopback(found.group("host")):
        return endpoint
    return found.group("host") + slash + path


def is_loopback(host: str) -> bool:
    """``host`` (a name or address, IPv6 in brackets or not) is ``localhost``,
    in 127.0.0.0/8 or ``::1``."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv4Address):
        return address.is_loopback
    return address == ipaddress.IPv6Address("::1")


def is_local(host_port: str) -> bool:
    """``host[:port]`` is a server of this machine or its network: a loopback or
    private address, ``localhost``, or a name without a dot (a container's
    service name, ``ollama:11434``). Such a server's in-flight limit adapts to
    what it sustains (:class:`~pytest_textsim.judge.waiting.InFlightLimit`).

    >>> is_local("127.0.0.1:11434"), is_local("ollama:11434"), is_local("api.openai.com")
    (True, True, False)
    """
    found = _HOST_PORT.fullmatch(host_port)
    host = (found.group("host") if found else host_port).strip("[]").lower()
    if is_loopback(host) or "." not in host and ":" not in host:
        return True
    try:
        return ipaddress.ip_address(host).is_private
    except ValueError:
        return False


def basic_auth(url: str) -> tuple[str, dict[str, str] | None]:
    """``url`` without user info, and the Basic ``Authorization`` header it stood for."""
    parts = urlsplit(url)
    userinfo, _, host = parts.netloc.rpartition("@")
    if not userinfo:
        return url, None
    import base64
    from urllib.parse import unquote

    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    return parts._replace(netloc=host).geturl(), {"Authorization": f"Basic {token}"}


def without_query(url: str) -> tuple[str, list[tuple[str, str]]]:
    """``url`` without its query string, and the query's parameters.

    The judge's transport adds them to each request on the wire only: the SDKs
    would join a base URL's query before the path (``/v1?key=Xchat/completions``),
    and httpx and the SDKs log every request's URL (``HTTP Request: POST ...``)
    at INFO, so a key there would be in the log.
    """
    parts = urlsplit(url)
    if not parts.query:
        return url, []
    return parts._replace(query="").geturl(), parse_qsl(parts.query, keep_blank_values=True)


def check_url(url: str, what: str) -> str:
    """``url`` if it is an http(s) URL with a host, else a :class:`JudgeConfigError`.

    The message shows only the scheme of a bad URL: the rest may hold a key.
    """
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        host = endpoint_host(url)
        raise JudgeConfigError(f"{what}: the port of {host!r} is not a number") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        start = url.partition(":")[0] if ":" in url else url[:10]
        raise JudgeConfigError(
            f"{what}: expected an http:// or https:// URL with a host "
            f"(e.g. http://localhost:11434/v1), got one starting {start!r}"
        )
    return url
