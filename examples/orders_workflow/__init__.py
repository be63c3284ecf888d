"""Users, orders (kept twice, in one transaction), teams, sessions and invites on one table."""
