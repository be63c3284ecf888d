"""The environment switches of singletable's botocore extensions.

Each extension has one variable, read on every use (so a test or an operator can flip it
without restarting anything): ``SINGLETABLE_FAST_PATH`` (on unless switched off) and
``SINGLETABLE_SIGNING`` (off unless switched on).
"""

from __future__ import annotations

import os

__all__ = ["FAST_PATH", "SIGNING", "switch", "switch_on"]

FAST_PATH = "SINGLETABLE_FAST_PATH"
"""The response fast path: on unless ``0`` (or ``false``/``no``/``off``)."""

SIGNING = "SINGLETABLE_SIGNING"
"""singletable's SigV4 signer on the default client: off unless ``1`` (or
``true``/``yes``/``on``); ``0`` also keeps an explicit request for it from installing it."""

_ON = frozenset({"1", "true", "yes", "on"})
_OFF = frozenset({"0", "false", "no", "off"})


def switch(env_var: str) -> bool | None:
    """True when ``env_var`` is ``1``/``true``/``yes``/``on``, False when it is
    ``0``/``false``/``no``/``off`` (any case, surrounding blanks ignored), None when it is
    unset or says neither."""
    value = os.environ.get(env_var, "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    return None


def switch_on(env_var: str) -> bool:
    """False only when ``env_var`` is switched off (:func:`switch` is False)."""
    return switch(env_var) is not False
