"""Worked single-table designs, one small application package per domain.

Each package has ``models.py`` (the table and its entities), ``repository.py`` (the repository
with its named access patterns and transactions, ``seed(repo)`` and ``EXAMPLE_CALLS``),
``data.json`` (seed data), a README that starts with the access-pattern table and a test module
that runs every pattern against every local DynamoDB backend.
"""
