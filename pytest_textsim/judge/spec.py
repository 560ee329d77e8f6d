"""A judge model's configuration, checked: :class:`ModelSpec`, and the secrets it holds.

The provider modules (:mod:`pytest_textsim.judge.providers`) make specs from
model configuration dicts; everything after that (the client, the cache key,
the hub, messages) reads the spec. The API key is never in ``repr``, and
:func:`scrub` takes every secret of a spec (and of the environment) out of a text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..redaction import environment_secrets, mask, query_credentials
from .endpoints import basic_auth, batch_endpoint, endpoint_host, endpoint_key


@dataclass(frozen=True)
class ModelSpec:
    """A model configuration, checked and normalised. ``api_key`` is kept out of ``repr``."""

    provider: str  # a module of judge/providers: "openai", "azure", "anthropic"
    model: str  # the model, or the Azure deployment name
    endpoint: str  # the base URL the SDK is given, user info and all
    api_version: str | None = None
    organization: str | None = None
    api_key: str | None = field(default=None, repr=False, compare=False)
    key_var: str = ""  # the environment variable the key comes from (named in hints)
    # No key was set: a local server's placeholder is sent (the SDK needs one).
    keyless: bool = field(default=False, compare=False)

    @property
    def host(self) -> str:
        """Host (and port) of the endpoint: named in errors, part of the cache key."""
        return endpoint_host(self.endpoint)

    @property
    def endpoint_key(self) -> str:
        """Host and path of the endpoint (``api.openai.com/v1``), the port too unless
        the host is a loopback one: the cache key's.

        Two paths on one server may be two services (a gateway routing
        ``/a/v1`` and ``/b/v1`` to different models), so judgments recorded
        through one are not served for the other. No user info, query or scheme.
        """
        return endpoint_key(self.endpoint)

    @property
    def batch_endpoint(self) -> str:
        """Scheme, host, port and path of the endpoint (``http://127.0.0.1:8000/v1``):
        the server whose judge batches a run may resume (:func:`batch_endpoint`)."""
        return batch_endpoint(self.endpoint)

    def __repr__(self) -> str:
        # Only the host: a URL may carry credentials (https://user:key@host/v1).
        return (
            f"ModelSpec(provider={self.provider!r}, model={self.model!r}, host={self.host!r}, "
            f"api_version={self.api_version!r})"
        )


def secrets_of(spec: ModelSpec) -> list[str]:
    """The secrets ``spec`` holds: the API key, the user info of the endpoint URL
    (whole, and its password), the Basic ``Authorization`` token made from that
    user info (a server echoing its request headers sends it back), and the
    values of the credential parameters of the URL's query string."""
    userinfo = urlsplit(spec.endpoint).netloc.rpartition("@")[0]
    secrets = [spec.api_key, userinfo, userinfo.partition(":")[2]]
    header = basic_auth(spec.endpoint)[1]
    if header:
        secrets.append(header["Authorization"].partition(" ")[2])
    return [s for s in (*secrets, *query_credentials(spec.endpoint)) if s]


def scrub(text: str, spec: ModelSpec) -> str:
    """``text`` with every secret the run knows replaced by ``***``: those of
    ``spec`` and the values of the environment's credential variables, by the
    rule of :func:`pytest_textsim.redaction.mask` (8 characters or more)."""
    return mask(text, [*secrets_of(spec), *environment_secrets()], "***")
