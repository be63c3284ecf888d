"""E-commerce on one table: customers, orders, order items, products and payments."""
