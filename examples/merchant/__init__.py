"""Merchants, their order queues and payments, and point-of-sale device telemetry."""
