"""Which prepared requests singletable's HTTP exchange writes itself (``exchange._plain``):
exactly those whose bytes urllib3 would write as :mod:`singletable.aws._http1` writes them.

The end-to-end checks against a socket server are in ``tests/backend/test_exchange.py``.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from singletable.aws import exchange
from singletable.aws._http1 import request_head
from tests.unit.aws.test_http1 import TOKEN, VALUE, _urllib3_writes

#: Names urllib3 writes itself (or would write differently), in any case.
OWN = st.sampled_from(["Host", "accept-encoding", "Transfer-Encoding", "EXPECT"])


@st.composite
def header_lists(draw: st.DrawFn) -> list[tuple[str, str | bytes]]:
    """Headers as a botocore request may hold them: str or latin-1 bytes values, sometimes a
    header urllib3 writes itself, sometimes without Content-Length or User-Agent, sometimes a
    name twice in two cases."""
    names = draw(st.lists(st.one_of(TOKEN, OWN), max_size=6))
    headers: list[tuple[str, str | bytes]] = []
    for name in names:
        value = draw(VALUE)
        headers.append((name, value.encode("latin-1") if draw(st.booleans()) else value))
    if draw(st.booleans()):
        headers.append(("User-Agent", b"Boto3/1 singletable"))
    if draw(st.booleans()):
        headers.append(("Content-Length", "CL"))  # the body's length, filled in by the test
    return headers


@given(header_lists(), st.binary(max_size=50))
def test_the_exchange_writes_a_request_only_as_urllib3_would(
    headers: list[tuple[str, str | bytes]], body: bytes
) -> None:
    fields = {
        name: str(len(body)) if name == "Content-Length" else value for name, value in headers
    }
    plain = exchange._plain(fields)
    lowered = [name.lower() for name in fields]
    expected_plain = (
        len(set(lowered)) == len(lowered)
        and {"content-length", "user-agent"} <= set(lowered)
        and not {"host", "accept-encoding", "transfer-encoding", "expect"} & set(lowered)
    )
    assert (plain is not None) == expected_plain
    if plain is not None:
        ours = request_head("127.0.0.1:8000", plain) + body
        assert _urllib3_writes(fields, body) == ours  # type: ignore[arg-type]
