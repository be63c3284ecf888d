"""Errors botocore raises without a DynamoDB response are mapped to clear singletable errors."""

from __future__ import annotations

import pytest
from botocore.exceptions import EndpointConnectionError, NoCredentialsError, ParamValidationError

from singletable._executor import map_botocore_error
from singletable.errors import InvalidRequestError, ServiceError
from tests.models import Shop


def test_missing_region_says_how_to_configure_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_CONFIG_FILE", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(ServiceError, match="AWS_REGION") as caught:
        Shop().customer(customer_id="1")
    assert not caught.value.retryable


def test_botocore_errors_are_classified() -> None:
    assert isinstance(
        map_botocore_error(ParamValidationError(report="bad"), "Query"), InvalidRequestError
    )
    no_credentials = map_botocore_error(NoCredentialsError(), "GetItem")
    assert isinstance(no_credentials, ServiceError) and not no_credentials.retryable
    assert "credentials" in str(no_credentials)
    connection = map_botocore_error(EndpointConnectionError(endpoint_url="http://x"), "Query")
    assert isinstance(connection, ServiceError) and connection.retryable
