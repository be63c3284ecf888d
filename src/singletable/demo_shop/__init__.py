"""The demo shop that ``singletable demo`` runs: customers, orders, order items, products and
payments on one table (``models``), its repository with ``seed(repo)`` and ``EXAMPLE_CALLS``
(``repository``), and the seed data (``data.json``).

It ships inside the package so the demo works wherever singletable is installed. The worked
example in the repository, ``examples/ecommerce``, imports it from here; its README explains
every key and every acknowledged lint finding.
"""
