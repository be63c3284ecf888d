"""singletable's botocore extensions, fenced in one package: the only code that sets up a
client for singletable or hooks into one.

* :mod:`~singletable.aws._client`: :func:`client_config` (the recommended botocore ``Config``)
  and :func:`default_client` (the client a repository creates when it is given none);
* :mod:`~singletable.aws.fastpath`: the response fast path (``before-parse`` hooks), active
  only on the botocore versions CI has verified;
* :mod:`~singletable.aws.signing`: the hand-written SigV4 signer (``choose-signer`` and
  ``request-created`` hooks), opt-in;
* :mod:`~singletable.aws.exchange`: the default client's HTTP exchange (botocore's HTTP
  session, writing and reading on its own urllib3 pool), active only on the botocore versions
  CI has verified;
* the direct transport (``_direct*``), opt-in;
* :mod:`~singletable.aws._switches`: their environment switches, ``SINGLETABLE_FAST_PATH``,
  ``SINGLETABLE_SIGNING``, ``SINGLETABLE_EXCHANGE`` and ``SINGLETABLE_TRANSPORT``.

Every extension changes one client at a time and steps aside (botocore does the work) on
anything it does not cover; the fast path and the signer through the client's public event
hooks, the exchange through its endpoint's HTTP session.
"""

from __future__ import annotations

from ._client import client_config, default_client

__all__ = ["client_config", "default_client"]
