"""The test suite's DynamoDB backends (moto in-process, moto server, dynalite) and helpers.

The pytest plugin is ``moto_fixtures.plugin``; ``record(client)`` attaches a request recorder
to any boto3 DynamoDB client.
"""

from .backends import ALL_FEATURES, Backend, features_for
from .recorder import RequestRecorder, record
from .tables import NOW, Clock, create_table

__all__ = [
    "ALL_FEATURES",
    "NOW",
    "Backend",
    "Clock",
    "RequestRecorder",
    "create_table",
    "features_for",
    "record",
]
