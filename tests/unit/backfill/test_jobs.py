"""How long a worker that finds every unfinished segment leased waits before it looks again."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from singletable._backfill.jobs import next_look


@given(
    st.floats(1, 3600),  # the lease period
    st.floats(0, 1),  # how far into its lease the earliest holder is (0: just claimed)
)
def test_a_waiting_worker_looks_again_within_a_tenth_of_a_lease(lease: float, into: float) -> None:
    now = 1_000_000.0
    earliest = now + lease * (1 - into)  # when the earliest lease runs out
    wait = next_look(earliest, now, lease)
    assert 0 < wait <= lease / 10
    assert wait <= earliest - now + lease / 20  # no later than just after that lease runs out


def test_a_lease_about_to_run_out_is_looked_at_just_after_it_does() -> None:
    assert next_look(earliest=100.5, now=100.0, lease=60) == 0.5 + 3.0
    assert next_look(earliest=160.0, now=100.0, lease=60) == 6.0  # not the whole minute
