"""A customer's name copied onto every order, kept in sync from the table's stream."""
