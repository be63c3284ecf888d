"""The AWS Developer Guide's relational HR / order-entry model in one table: employees,
customers, orders and stock, with random write shards and "every status" fan-out reads."""
