"""Judge endpoint URLs: how errors and the cache name them, and the credentials in them.

A base URL may carry user info (``https://user:key@host/v1``): it never
appears in a message, a log line or a cache key; it is sent as the Basic
``Authorization`` header httpx would have made of it.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .errors import JudgeConfigError


def endpoint_host(url: str) -> str:
    """``host[:port]`` of ``url``: what errors, logs and the cache name as the endpoint.

    User info (``user:key@``), path and query string are left out, since they
    may carry credentials. An ordinary URL keeps its host exactly as written,
    so cache keys recorded before user info was dropped still match.
    """
    return urlsplit(url).netloc.rpartition("@")[2]


def endpoint_key(url: str) -> str:
    """``host[:port]/path`` of ``url``, the endpoint as the judge cache keys it.

    >>> endpoint_key("https://me:secret@api.example.com/v1/?x=1")
    'api.example.com/v1'
    """
    return endpoint_host(url) + urlsplit(url).path.rstrip("/")


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
