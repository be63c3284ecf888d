"""singletable.aws.signing against botocore's SigV4Auth: same headers, byte for byte."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
from typing import Any

import botocore
import botocore.auth
import pytest
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from hypothesis import given, settings
from hypothesis import strategies as st

from singletable.aws.signing import SigV4Signer, host_header

STAMP = "20261126T011502Z"
WHEN = dt.datetime(2026, 11, 26, 1, 15, 2)


def _request(
    url: str = "https://dynamodb.us-east-1.amazonaws.com/",
    headers: list[tuple[str, str]] | None = None,
    data: Any = b'{"TableName": "t"}',
    context: dict[str, Any] | None = None,
) -> AWSRequest:
    request = AWSRequest(method="POST", url=url, data=data)
    for name, value in headers or [
        ("X-Amz-Target", "DynamoDB_20120810.GetItem"),
        ("Content-Type", "application/x-amz-json-1.0"),
        ("User-Agent", "Boto3/1 md/Botocore#1"),
    ]:
        request.headers[name] = value  # HTTPHeaders appends: duplicates are kept
    request.context.update(context or {})
    return request


def _copy(request: AWSRequest) -> AWSRequest:
    return _request(request.url, list(request.headers.items()), request.data, dict(request.context))


def _botocore_signed(
    request: AWSRequest, credentials: Credentials, region: str, service: str
) -> list[tuple[str, str]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(botocore.auth, "get_current_datetime", lambda: WHEN)
        botocore.auth.SigV4Auth(credentials, service, region).add_auth(request)
    return list(request.headers.items())


def _ours_signed(
    request: AWSRequest, credentials: Credentials, region: str, service: str
) -> list[tuple[str, str]]:
    with pytest.MonkeyPatch.context() as patch:  # for the requests botocore signs
        patch.setattr(botocore.auth, "get_current_datetime", lambda: WHEN)
        SigV4Signer(credentials).sign(request, region, service, timestamp=STAMP)
    return list(request.headers.items())


def assert_same_signature(
    request: AWSRequest,
    credentials: Credentials,
    region: str = "us-east-1",
    service: str = "dynamodb",
) -> list[tuple[str, str]]:
    expected = _botocore_signed(_copy(request), credentials, region, service)
    actual = _ours_signed(request, credentials, region, service)
    assert actual == expected
    assert request.context["timestamp"] == STAMP
    return actual


KEYS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
TEMPORARY = Credentials("ASIAEXAMPLE", "secret", "FwoGZXIvYXdzEJr//////////token==")


def test_plain_request_matches_botocore() -> None:
    headers = dict(assert_same_signature(_request(), KEYS))
    assert headers["X-Amz-Date"] == STAMP
    assert headers["Authorization"].startswith(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261126/us-east-1/dynamodb/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature="
    )
    assert "X-Amz-Security-Token" not in headers


def test_known_signature() -> None:
    """Pinned independently of botocore: the SigV4 algorithm by hand."""
    request = _request(
        "https://dynamodb.eu-west-1.amazonaws.com",
        [
            ("Content-Type", "application/x-amz-json-1.0"),
            ("X-Amz-Target", "DynamoDB_20120810.Query"),
        ],
        b"{}",
    )
    SigV4Signer(KEYS).sign(request, "eu-west-1", "dynamodb", timestamp=STAMP)

    def mac(key: bytes, text: str) -> bytes:
        return hmac.new(key, text.encode(), hashlib.sha256).digest()

    canonical = (
        "POST\n/\n\ncontent-type:application/x-amz-json-1.0\nhost:dynamodb.eu-west-1.amazonaws.com\n"
        f"x-amz-date:{STAMP}\nx-amz-target:DynamoDB_20120810.Query\n\n"
        "content-type;host;x-amz-date;x-amz-target\n" + hashlib.sha256(b"{}").hexdigest()
    )
    scope = "20261126/eu-west-1/dynamodb/aws4_request"
    to_sign = (
        f"AWS4-HMAC-SHA256\n{STAMP}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    )
    key = mac(
        mac(mac(mac(b"AWS4" + KEYS.secret_key.encode(), "20261126"), "eu-west-1"), "dynamodb"),
        "aws4_request",
    )
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    assert request.headers["Authorization"] == (
        f"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/{scope}, "
        f"SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature={signature}"
    )


def test_empty_body() -> None:
    headers = dict(assert_same_signature(_request(data=b""), KEYS))
    assert headers["Authorization"]


def test_session_token_is_added_and_signed() -> None:
    headers = dict(assert_same_signature(_request(), TEMPORARY))
    assert headers["X-Amz-Security-Token"] == TEMPORARY.token
    assert "x-amz-security-token" in headers["Authorization"]


def test_a_retry_replaces_the_previous_signature() -> None:
    request = _request(
        headers=[
            ("Content-Type", "application/x-amz-json-1.0"),
            ("Authorization", "AWS4-HMAC-SHA256 old"),
            ("X-Amz-Date", "20200101T000000Z"),
            ("X-Amz-Security-Token", "stale"),
        ]
    )
    headers = assert_same_signature(request, TEMPORARY)
    assert [name for name, _ in headers].count("Authorization") == 1
    assert dict(headers)["X-Amz-Security-Token"] == TEMPORARY.token


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://dynamodb.us-east-1.amazonaws.com/", "dynamodb.us-east-1.amazonaws.com"),
        ("https://DynamoDB.US-East-1.amazonaws.com:443", "dynamodb.us-east-1.amazonaws.com"),
        ("http://127.0.0.1:8000/", "127.0.0.1:8000"),
        ("http://localhost:80", "localhost"),
        ("https://localhost:80", "localhost:80"),
        ("http://user:pw@[::1]:4566/", "[::1]:4566"),
        ("http://[fe80::1]/", "[fe80::1]"),
        ("http://host/prefix", None),
        ("http://host/?a=1", None),
    ],
)
def test_host_header(url: str, host: str | None) -> None:
    assert host_header(url) == host
    if host is not None:
        assert host == botocore.auth._host_from_url(url)


@pytest.mark.parametrize(
    "request_",
    [
        _request("http://127.0.0.1:8000/prefix"),  # a path: botocore normalises it
        _request("http://127.0.0.1:8000/?b=2&a=1"),  # a query string
        _request(data="text"),  # not bytes
        _request(headers=[("Date", "Thu, 26 Nov 2026 01:15:02 GMT"), ("X-Amz-Target", "x")]),
        _request(headers=[("X-Amz-Content-SHA256", "UNSIGNED-PAYLOAD")]),
        _request(context={"payload_signing_enabled": False}),
        _request(context={"checksum": {"request_algorithm": {"in": "trailer"}}}),
    ],
    ids=["path", "query", "str-body", "date", "content-sha", "unsigned", "trailer"],
)
def test_other_requests_are_signed_by_botocore(request_: AWSRequest) -> None:
    assert_same_signature(request_, TEMPORARY)
    assert request_.headers["Authorization"]


def test_missing_credentials() -> None:
    with pytest.raises(botocore.exceptions.NoCredentialsError):
        SigV4Signer(Credentials(None, None)).sign(_request(), "us-east-1", "dynamodb")  # type: ignore[arg-type]


def test_signing_keys_are_cached_per_day_region_service() -> None:
    signer = SigV4Signer(KEYS)
    first = signer.signing_key("s", "20261126", "us-east-1", "dynamodb")
    assert signer.signing_key("s", "20261126", "us-east-1", "dynamodb") is first
    assert signer.signing_key("s", "20261127", "us-east-1", "dynamodb") != first
    for day in range(100):  # bounded
        signer.signing_key("s", f"2026{day:04d}", "us-east-1", "dynamodb")
    assert len(signer._keys) <= 64


HEADER_NAMES = st.sampled_from(
    [
        "Content-Type",
        "X-Amz-Target",
        "x-amz-target",
        "User-Agent",
        "amz-sdk-invocation-id",
        "amz-sdk-request",
        "X-Amzn-Trace-Id",
        "Expect",
        "Connection",
        "Host",
        "X-Custom",
        "x-amz-meta-a",
        "Accept-Encoding",
    ]
)
HEADER_VALUES = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30).filter(
    lambda v: v.strip() == v or v.strip()
)


@settings(max_examples=300, deadline=2000)
@given(
    headers=st.lists(st.tuples(HEADER_NAMES, HEADER_VALUES), max_size=8),
    body=st.binary(max_size=200),
    host=st.sampled_from(
        [
            "https://dynamodb.us-east-1.amazonaws.com",
            "https://dynamodb-fips.us-gov-west-1.amazonaws.com/",
            "http://127.0.0.1:8000/",
            "http://LOCALHOST:4566",
            "http://[::1]:8000/",
            "https://user@example.com:443/",
        ]
    ),
    credentials=st.sampled_from([KEYS, TEMPORARY]),
    region=st.sampled_from(["us-east-1", "eu-central-1", "cn-north-1"]),
    service=st.sampled_from(["dynamodb", "streams.dynamodb"]),
)
def test_random_requests_match_botocore(
    headers: list[tuple[str, str]],
    body: bytes,
    host: str,
    credentials: Credentials,
    region: str,
    service: str,
) -> None:
    assert_same_signature(_request(host, headers, body), credentials, region, service)


# -- which requests it takes over --------------------------------------------------------------


def _choose(signer: SigV4Signer, **overrides: Any) -> Any:
    kwargs: dict[str, Any] = {
        "signing_name": "dynamodb",
        "region_name": "us-east-1",
        "signature_version": "v4",
        "context": {"auth_type": "v4", "client_config": Config(), "signing": {}},
    }
    kwargs.update(overrides)
    return signer.choose_signer(**kwargs)


def test_takes_over_plain_sigv4() -> None:
    signer = SigV4Signer(KEYS)
    context: dict[str, Any] = {"auth_type": "v4", "signing": {"region": "eu-west-1"}}
    assert _choose(signer, region_name="eu-west-1", context=context) is botocore.UNSIGNED
    assert context["singletable_sigv4"] == ("dynamodb", "eu-west-1")
    request = _request(context=context)
    signer.request_created(request=request)
    assert "eu-west-1/dynamodb/aws4_request" in request.headers["Authorization"]
    assert "singletable_sigv4" not in request.context


@pytest.mark.parametrize(
    "overrides",
    [
        {"signature_version": "v4a"},
        {"signature_version": "s3v4"},
        {"signature_version": botocore.UNSIGNED},
        {"context": {"auth_type": "none"}},
        {"context": {"auth_type": "v4a"}},
        {"context": {"auth_type": "v4", "unsigned_payload": True}},
        {"context": {"auth_type": "v4", "client_config": Config(auth_scheme_preference="sigv4a")}},
        {"context": {"auth_type": "v4", "signing": {"request_credentials": KEYS}}},
        {"context": {"auth_type": "v4", "signing": {"identity_cache": {}, "cache_key": "k"}}},
        {"context": None},
    ],
)
def test_leaves_everything_else_to_botocore(overrides: dict[str, Any]) -> None:
    assert _choose(SigV4Signer(KEYS), **overrides) is None


def test_empty_credentials_fail_as_in_botocore() -> None:
    signer = SigV4Signer(Credentials(None, None))  # type: ignore[arg-type]
    context: dict[str, Any] = {"auth_type": "v4"}
    assert _choose(signer, context=context) is botocore.UNSIGNED
    with pytest.raises(botocore.exceptions.NoCredentialsError):
        signer.request_created(request=_request(context=context))


def test_unmarked_requests_are_not_signed() -> None:
    request = _request()
    SigV4Signer(KEYS).request_created(request=request)
    assert "Authorization" not in request.headers
