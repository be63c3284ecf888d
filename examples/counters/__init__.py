"""A page-view counter sharded across ten sort keys: cheap writes, one Query to read."""
