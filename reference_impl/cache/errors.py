"""Errors the cache returns to a committing session."""


class CacheError(Exception):
    """The cache refused a bind or an eviction (the statement undoes it in session)."""
