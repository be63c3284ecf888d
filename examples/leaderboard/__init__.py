"""A game leaderboard on a table with custom key attribute names."""
