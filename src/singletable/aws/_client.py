"""The default client's set-up: singletable's botocore ``Config`` and the client a repository
creates when it is given none.

:func:`client_config` is a plain botocore ``Config`` (a fixed User-Agent). :func:`default_client`
builds a boto3 DynamoDB client with it and installs the response fast path
(:mod:`singletable.aws.fastpath`) and, when asked for, singletable's SigV4 signer
(:mod:`singletable.aws.signing`).
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING, Literal

from .._version import __version__
from ._switches import SIGNING, TRANSPORTS, switch, transport

if TYPE_CHECKING:
    from boto3.session import Session
    from botocore.config import Config
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = ["client_config", "default_client"]

#: Configs made by ``client_config(signing=True)`` (the mark is on the object itself).
_SIGNING_CONFIGS: weakref.WeakSet[Config] = weakref.WeakSet()
#: Configs made by ``client_config(transport="direct")``.
_DIRECT_CONFIGS: weakref.WeakSet[Config] = weakref.WeakSet()


def client_config(
    *,
    signing: bool = False,
    parameter_validation: bool = True,
    transport: Literal["botocore", "direct"] = "botocore",
) -> Config:
    """The botocore ``Config`` singletable recommends for a DynamoDB client.

    :func:`default_client` uses it (with ``parameter_validation=False``); pass it to a client
    of your own, or merge it into yours::

        client = boto3.client("dynamodb", config=client_config())
        client = boto3.client("dynamodb", config=my_config.merge(client_config()))

    ``signing=True`` asks :func:`default_client` for singletable's SigV4 signer
    (:mod:`singletable.aws.signing`): ``default_client(config=client_config(signing=True))``.
    A ``Config`` cannot carry event hooks, so the request is a mark on this very object: a
    client you create yourself with it signs as botocore does (install the signer with
    ``signing.install(client, credentials)``), and ``Config.merge`` returns an unmarked copy.
    ``SINGLETABLE_SIGNING=0`` overrides it.

    ``transport="direct"`` marks it likewise for :func:`default_client`'s direct transport
    (singletable sends the data-plane requests; botocore decides everything else; see
    docs/performance.md, "Direct transport"); ``SINGLETABLE_TRANSPORT`` overrides the mark.

    It sets two options, measured with ``bench/botocore_calls.py options`` and
    ``bench/writes.py`` (client CPU per call on a keep-alive endpoint; no other public option
    measured there changed it beyond noise):

    * ``user_agent``: a User-Agent string fixed when the client is created, in botocore's
      own format (SDK, botocore, OS, architecture, Python versions) plus
      ``lib/singletable#<version>`` and, if ``AWS_SDK_UA_APP_ID`` is set, ``app/<id>``.
      Without it botocore rebuilds its User-Agent twice per request (once for the request,
      once more in a ``request-created`` handler; ~35 µs each), ~12 % of a GetItem's client
      CPU. DynamoDB ignores the header; only AWS's usage metrics see it, minus the per-request
      feature codes (``m/...``) that botocore would add. ``user_agent_extra`` is still
      appended by botocore; ``Config(user_agent_appid=...)`` is not sent with a fixed
      User-Agent (use ``AWS_SDK_UA_APP_ID`` or ``user_agent_extra``). Nothing about
      requests, signing, retries or responses changes.

    ``parameter_validation=False`` turns off botocore's client-side check of every request
    against the service model. It is the largest request-side cost botocore has for a write:
    ~40 % of a 100-item ``batch_put``'s client CPU and ~8 % of a PutItem's (measured with
    ``bench/writes.py``'s requests on a keep-alive endpoint). :func:`default_client` turns it
    off because every request singletable sends is built by singletable and is correct by
    construction (its test suite sends every request through clients that validate). It
    stays on here by default because a client of your own also carries your own calls:
    without validation botocore silently drops a parameter whose name is misspelt (a
    ``ConditionExpresion`` would not be sent), and a malformed value reaches DynamoDB, which
    answers ``ValidationException`` instead of botocore's ``ParamValidationError``. The same
    holds for calls of your own on the default client (``repo.client``).

    Deliberately left at botocore's defaults: the retry mode (legacy mode is what checks
    DynamoDB's ``x-amz-crc32`` response checksum and retries throttling 10 times;
    ``standard`` saves no measurable CPU), checksum, endpoint-mode, compression and
    host-prefix options (no effect on DynamoDB's data-plane calls).
    """
    import platform

    import boto3
    import botocore
    from botocore.config import Config

    parts = [
        f"Boto3/{boto3.__version__}",
        f"md/Botocore#{botocore.__version__}",
        "ua/2.1",
        f"os/{_ua_token(platform.system().lower() or 'other')}#{_ua_token(platform.release())}",
        f"md/arch#{_ua_token(platform.machine().lower())}",
        f"lang/python#{platform.python_version()}",
        f"md/pyimpl#{_ua_token(platform.python_implementation())}",
        f"lib/singletable#{__version__}",
    ]
    app_id = os.environ.get("AWS_SDK_UA_APP_ID", "").strip()
    if app_id:
        parts.append(f"app/{_ua_token(app_id)}")
    config = Config(user_agent=" ".join(parts), parameter_validation=parameter_validation)
    return _marked(config, signing, transport)


def _marked(config: Config, signing: bool, transport: str) -> Config:
    """``config``, marked for the signer and the transport :func:`client_config` was asked for."""
    if transport not in TRANSPORTS:
        from ..errors import InvalidRequestError

        raise InvalidRequestError(
            f"client_config(transport={transport!r}): the transport is 'botocore' or 'direct'"
        )
    if signing:
        _SIGNING_CONFIGS.add(config)
    if transport == "direct":
        _DIRECT_CONFIGS.add(config)
    return config


def _ua_token(text: str) -> str:
    """``text`` with the characters a User-Agent token may not hold replaced by ``-``."""
    allowed = _UA_ALLOWED
    return "".join(c if c in allowed else "-" for c in text)


_UA_ALLOWED = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!$%&'*+-.^_`|~"
)


def _wants_signing(config: Config | None) -> bool:
    """Whether :func:`default_client` installs the signer for ``config``: when
    ``SINGLETABLE_SIGNING`` is switched on (``1``), or when it is unset and ``config`` came
    from ``client_config(signing=True)``; never when it is switched off (``0``)."""
    wanted = switch(SIGNING)
    if wanted is None:
        return config is not None and config in _SIGNING_CONFIGS
    return wanted


def wants_direct(config: Config | None) -> bool:
    """Whether a default client made with ``config`` gets the direct transport:
    ``SINGLETABLE_TRANSPORT`` when it says ``direct`` or ``botocore``, else whether ``config``
    came from ``client_config(transport="direct")``."""
    chosen = transport()
    if chosen is None:
        return config is not None and config in _DIRECT_CONFIGS
    return chosen == "direct"


def default_client(
    session: Session | None = None, *, config: Config | None = None
) -> DynamoDBClient:
    """A boto3 DynamoDB client from ``session`` (default: boto3's default session, which
    honours ``AWS_ENDPOINT_URL_DYNAMODB`` and the usual AWS settings), configured with
    ``config`` (default: ``client_config(parameter_validation=False)``: singletable's requests
    are correct by construction, see :func:`client_config`) and the response fast path
    (:mod:`singletable.aws.fastpath`; ``SINGLETABLE_FAST_PATH=0`` turns it off, and it stays
    off on a botocore outside the verified range).

    singletable's SigV4 signer (:mod:`singletable.aws.signing`) is opt-in: it signs for the
    session's credentials with ``SINGLETABLE_SIGNING=1`` or
    ``config=client_config(signing=True)``; otherwise botocore signs. A repository created
    without ``client=`` uses ``default_client()``; give it ``client=default_client(my_session)``
    for a session of your own (a profile, a region, assumed-role credentials).

    Its HTTP exchange is singletable's, under botocore's pipeline
    (:mod:`singletable.aws.exchange`: the request is written and the response read on the
    client's own urllib3 pool; ``SINGLETABLE_EXCHANGE=0`` gives it back to urllib3's
    ``urlopen``). The direct transport is opt-in: ``config=client_config(transport="direct")`` or
    ``SINGLETABLE_TRANSPORT=direct`` (see :func:`client_config`)."""
    import boto3

    # here: only the default client needs them
    from . import exchange, fastpath, signing

    if session is None:
        if boto3.DEFAULT_SESSION is None:
            boto3.setup_default_session()
        session = boto3.DEFAULT_SESSION
        assert session is not None
    if config is None:
        config = client_config(parameter_validation=False)
    client = session.client("dynamodb", config=config)
    fastpath.install(client)
    exchange.install(client)
    if _wants_signing(config):
        credentials = session.get_credentials()
        if credentials is not None:
            signing.install(client, credentials)
    if wants_direct(config):
        from . import _direct_install

        _direct_install.install(client)
    return client
