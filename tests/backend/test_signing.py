"""singletable's SigV4 signer against a server that checks signatures.

moto verifies SigV4 signatures (and IAM permissions) once its authentication is switched on:
``settings.INITIAL_NO_AUTH_ACTION_COUNT`` in process, ``POST /moto-api/reset-auth`` on a
server. Every request below is signed by ``singletable.aws.signing`` (a ``before-sign`` probe
sees botocore step aside with ``UNSIGNED``) and must be accepted; a wrong secret must be
refused with ``SignatureDoesNotMatch`` and write nothing. The signer is opt-in: the default
client leaves signing to botocore unless ``SINGLETABLE_SIGNING=1`` or
``client_config(signing=True)`` asks for it.
"""

from __future__ import annotations

import contextlib
import json
import urllib.request
import zlib
from collections.abc import Iterator
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

import boto3
import botocore
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest, AWSResponse
from botocore.compat import HTTPHeaders
from botocore.config import Config
from moto import mock_aws, settings
from moto.core import DEFAULT_ACCOUNT_ID as ACCOUNT
from moto.core.authorization import ActionAuthenticatorMixin
from moto_fixtures.backends import MotoServer

from singletable.aws import client_config, default_client, fastpath, signing
from singletable.errors import ServiceError
from tests.backend.test_fastpath import _Raw, scenario
from tests.models import Customer, Order, Shop, Status

pytestmark = pytest.mark.backend

ALLOW_ALL = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
)
TRUST_ANYONE = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
    }
)
IAM_SETUP_ACTIONS = (
    5  # create_user, put_user_policy, create_access_key, create_role, put_role_policy
)


def _iam_user(endpoint_url: str | None) -> tuple[str, str]:
    iam = boto3.client(
        "iam",
        region_name="us-east-1",
        aws_access_key_id="setup",
        aws_secret_access_key="setup",
        endpoint_url=endpoint_url,
    )
    iam.create_user(UserName="app")
    iam.put_user_policy(UserName="app", PolicyName="all", PolicyDocument=ALLOW_ALL)
    key = iam.create_access_key(UserName="app")["AccessKey"]
    iam.create_role(RoleName="app-role", AssumeRolePolicyDocument=TRUST_ANYONE)
    iam.put_role_policy(RoleName="app-role", PolicyName="all", PolicyDocument=ALLOW_ALL)
    return key["AccessKeyId"], key["SecretAccessKey"]


@contextlib.contextmanager
def _verified_inproc() -> Iterator[tuple[str | None, str, str]]:
    """In-process moto that checks signatures after the IAM setup calls."""
    saved = settings.INITIAL_NO_AUTH_ACTION_COUNT, ActionAuthenticatorMixin.request_count
    settings.INITIAL_NO_AUTH_ACTION_COUNT = IAM_SETUP_ACTIONS
    ActionAuthenticatorMixin.request_count = 0
    try:
        with mock_aws():
            yield (None, *_iam_user(None))
    finally:
        settings.INITIAL_NO_AUTH_ACTION_COUNT, ActionAuthenticatorMixin.request_count = saved


@pytest.fixture(scope="module")
def auth_server() -> Iterator[str]:
    """A moto server of this module's own (its authentication is switched on per test)."""
    server = MotoServer()
    try:
        yield server.start()
    finally:
        server.stop()


def _post(url: str, data: bytes = b"") -> None:
    request = urllib.request.Request(url, data=data, method="POST")
    request.add_header("Content-Type", "text/plain")  # not a form: moto reads the raw body
    urllib.request.urlopen(request, timeout=10)


@contextlib.contextmanager
def _verified_server(url: str) -> Iterator[tuple[str | None, str, str]]:
    _post(f"{url}/moto-api/reset")
    _post(f"{url}/moto-api/reset-auth", str(IAM_SETUP_ACTIONS).encode())
    try:
        yield (url, *_iam_user(url))
    finally:
        _post(f"{url}/moto-api/reset-auth", b"inf")  # moto's default: no checks
        _post(f"{url}/moto-api/reset")


@pytest.fixture(params=["inproc", "moto_server"])
def verified(request: pytest.FixtureRequest) -> Iterator[tuple[str | None, str, str]]:
    """(endpoint URL or None, access key id, secret) of a moto that checks signatures."""
    if request.param == "inproc":
        with _verified_inproc() as found:
            yield found
    else:
        with _verified_server(request.getfixturevalue("auth_server")) as found:
            yield found


def _signed_client(
    endpoint_url: str | None, key: str, secret: str, token: str | None = None
) -> Any:
    session = boto3.session.Session(
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        aws_session_token=token,
        region_name="us-east-1",
    )
    client = session.client("dynamodb", endpoint_url=endpoint_url)
    signing.install(client, session.get_credentials())
    return client


def _probe_signers(client: Any) -> list[Any]:
    """The signature version botocore settled on, per request (UNSIGNED: ours signs)."""
    seen: list[Any] = []
    client.meta.events.register(
        "before-sign.dynamodb", lambda signature_version, **_: seen.append(signature_version)
    )
    return seen


def test_every_operation_is_accepted(verified: tuple[str | None, str, str]) -> None:
    endpoint_url, key, secret = verified
    client = _signed_client(endpoint_url, key, secret)
    seen = _probe_signers(client)
    responses = scenario(client)
    operations = {label.split(" ")[0] for label, _ in responses}
    assert len(seen) >= len(responses) >= 15 and len(operations) >= 8
    assert set(seen) == {botocore.UNSIGNED}
    codes = {r["ResponseMetadata"]["HTTPStatusCode"] for _, r in responses}
    errors = {r.get("Error", {}).get("Code") for _, r in responses} - {None}
    assert 403 not in codes, errors
    assert errors <= {"ConditionalCheckFailedException", "TransactionCanceledException"}


def test_a_wrong_secret_is_refused(verified: tuple[str | None, str, str]) -> None:
    endpoint_url, key, _ = verified
    client = _signed_client(endpoint_url, key, "not-the-secret")
    seen = _probe_signers(client)
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        client.list_tables()
    # moto answers in XML, which botocore's JSON parser keeps as the message of a "403"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert "<Code>SignatureDoesNotMatch</Code>" in str(caught.value)
    assert seen == [botocore.UNSIGNED]


def test_temporary_credentials_are_accepted(verified: tuple[str | None, str, str]) -> None:
    endpoint_url, key, secret = verified
    sts = boto3.client(
        "sts",
        region_name="us-east-1",
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        endpoint_url=endpoint_url,
    )
    role = f"arn:aws:iam::{ACCOUNT}:role/app-role"
    temporary = sts.assume_role(RoleArn=role, RoleSessionName="tests")["Credentials"]
    client = _signed_client(
        endpoint_url,
        temporary["AccessKeyId"],
        temporary["SecretAccessKey"],
        temporary["SessionToken"],
    )
    seen = _probe_signers(client)
    assert client.list_tables()["TableNames"] == []
    assert seen == [botocore.UNSIGNED]


def test_the_default_client_leaves_signing_to_botocore(
    default_session: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opt-in: without ``SINGLETABLE_SIGNING=1`` botocore signs the default client's calls
    (and a server that checks signatures accepts them)."""
    with _verified_inproc() as (_, key, secret):
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", key)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
        repo = Shop()
        assert not signing.is_installed(repo.client) and fastpath.is_installed(repo.client)
        seen = _probe_signers(repo.client)
        Shop.table.create(repo.client)
        customer = repo.create(Customer(customer_id="C1", name="Ada", email="ada@example.com"))
        assert repo.customer(customer_id="C1") == customer
        assert seen and set(seen) == {"v4"}


def test_the_opted_in_default_client_signs_repository_calls(
    default_session: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(signing.ENV_VAR, "1")
    with _verified_inproc() as (_, key, secret):
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", key)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
        repo = Shop()
        assert signing.is_installed(repo.client)
        seen = _probe_signers(repo.client)
        Shop.table.create(repo.client)
        customer = repo.create(Customer(customer_id="C1", name="Ada", email="ada@example.com"))
        order = Order(
            customer_id="C1",
            order_id="O1",
            created_at=datetime(2026, 11, 26, tzinfo=timezone.utc),
            status=Status.PENDING,
            total=Decimal(10),
            customer_name="Ada",
        )
        repo.put(order)
        assert repo.customer(customer_id="C1") == customer
        assert repo.customer_orders(customer_id="C1").items == [order]
        assert seen and set(seen) == {botocore.UNSIGNED}

        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
        monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
        with pytest.raises(ServiceError, match="SignatureDoesNotMatch"):
            Shop().put(order.model_copy(update={"total": 99}))
        assert repo.customer_orders(customer_id="C1").items == [order]


@pytest.mark.parametrize(
    ("value", "config_asks", "signs"),
    [
        (None, False, False),  # the default: botocore signs
        (None, True, True),  # client_config(signing=True)
        ("1", False, True),  # SINGLETABLE_SIGNING=1
        ("On", False, True),
        ("1", True, True),
        ("0", False, False),
        ("off", False, False),
        ("0", True, False),  # the switch overrides the code's request
        ("maybe", False, False),  # neither on nor off: the code decides
        ("maybe", True, True),
    ],
)
def test_the_signer_is_opt_in(
    default_session: None,
    monkeypatch: pytest.MonkeyPatch,
    value: str | None,
    config_asks: bool,
    signs: bool,
) -> None:
    if value is not None:
        monkeypatch.setenv(signing.ENV_VAR, value)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    client = default_client(config=client_config(signing=True) if config_asks else None)
    assert signing.is_installed(client) is signs and fastpath.is_installed(client)
    seen = _probe_signers(client)
    with mock_aws():
        client.list_tables()
    assert seen == ([botocore.UNSIGNED] if signs else ["v4"])


def test_a_merged_config_does_not_carry_the_request(default_session: None) -> None:
    """``Config.merge`` makes a new Config: the ``signing=True`` mark stays on the original."""
    merged = client_config(signing=True).merge(Config(connect_timeout=5))
    session = boto3.session.Session(
        aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1"
    )
    assert not signing.is_installed(default_client(session, config=merged))
    assert signing.is_installed(default_client(session, config=client_config(signing=True)))


def test_independent_of_the_fast_path_switch(
    default_session: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(fastpath.ENV_VAR, "0")
    monkeypatch.setenv(signing.ENV_VAR, "1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    client = default_client()
    assert signing.is_installed(client) and not fastpath.is_installed(client)


def test_install_is_per_client_and_reversible() -> None:
    session = boto3.session.Session(
        aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1"
    )
    client, other = session.client("dynamodb"), session.client("dynamodb")
    credentials = session.get_credentials()
    assert credentials is not None
    signing.install(client, credentials)
    signing.install(client, credentials)
    assert signing.is_installed(client) and not signing.is_installed(other)
    seen, seen_other = _probe_signers(client), _probe_signers(other)
    with mock_aws():
        client.list_tables()
        other.list_tables()
        signing.uninstall(client)
        signing.uninstall(client)
        client.list_tables()
    assert seen == [botocore.UNSIGNED, "v4"] and seen_other == ["v4"]
    assert not signing.is_installed(client)


def _reference_signature(
    request: Any, headers: dict[str, str], credentials: Any, signed_headers: list[str]
) -> str:
    """The SigV4 signature botocore's own ``SigV4Auth`` computes for the sent ``request``
    (its decoded ``headers``) over the headers ``signed_headers`` names, at its
    ``X-Amz-Date``."""
    reference = AWSRequest(
        method=request.method,
        url=request.url,
        data=request.body,
        headers={k: v for k, v in headers.items() if k.lower() in signed_headers},
    )
    reference.context["timestamp"] = headers["X-Amz-Date"]
    auth = SigV4Auth(credentials, "dynamodb", "us-east-1")
    canonical = auth.canonical_request(reference)
    return str(auth.signature(auth.string_to_sign(reference, canonical), reference))


def test_every_attempt_of_a_retried_call_is_signed() -> None:
    """botocore builds a new request per attempt; our signer signs each one anew, with the
    credentials as they are at that attempt: each signature is what SigV4 gives for the
    headers it names (botocore's ``SigV4Auth`` as the reference), and the retry after a
    change of secret carries a different signature, valid for the new secret."""
    session = boto3.session.Session(
        aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1"
    )
    client = session.client(
        "dynamodb",
        endpoint_url="http://127.0.0.1:1",
        config=Config(retries={"total_max_attempts": 3, "mode": "standard"}),
    )
    credentials = session.get_credentials()
    assert credentials is not None
    signing.install(client, credentials)
    seen = _probe_signers(client)
    signatures: list[str] = []
    statuses = [400, 200]

    def send(request: Any, **_: Any) -> AWSResponse:
        headers = {k: v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()}
        authorization = headers.get("Authorization", "")
        assert authorization.startswith("AWS4-HMAC-SHA256 Credential=k/")
        signed = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
        assert {"host", "x-amz-date", "x-amz-target", "content-type"} <= set(signed)
        signature = authorization.split("Signature=")[1]
        frozen = credentials.get_frozen_credentials()
        assert signature == _reference_signature(request, headers, frozen, signed)
        signatures.append(signature)
        credentials.secret_key = "s-rotated"  # the retry must be signed with this one
        status = statuses.pop(0)
        body = (
            b'{"__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException"}'
            if status == 400
            else b'{"TableNames": []}'
        )
        response_headers = HTTPHeaders()
        response_headers["x-amz-crc32"] = str(zlib.crc32(body))
        return AWSResponse(request.url, status, response_headers, _Raw(body))

    client.meta.events.register_first("before-send.dynamodb.ListTables", send)
    response = client.list_tables()
    assert response["ResponseMetadata"]["RetryAttempts"] == 1
    assert seen == [botocore.UNSIGNED, botocore.UNSIGNED]  # botocore signed neither attempt
    assert len(signatures) == 2 and signatures[0] != signatures[1]


def test_default_client_for_a_session_of_your_own(default_session: None) -> None:
    """``default_client(session)``: the same set-up for another session's credentials."""
    with _verified_inproc() as (_, key, secret):
        session = boto3.session.Session(
            aws_access_key_id=key, aws_secret_access_key=secret, region_name="eu-west-1"
        )
        assert not signing.is_installed(default_client(session))
        client = default_client(session, config=client_config(signing=True))
        assert signing.is_installed(client) and fastpath.is_installed(client)
        assert client.meta.region_name == "eu-west-1"
        seen = _probe_signers(client)
        assert client.list_tables()["TableNames"] == []
        assert seen == [botocore.UNSIGNED]
