"""The index's errors (re-exported by protocol.py, which the layers above import them from)."""

from __future__ import annotations


class NotFound(LookupError):
    """An unknown run, index, graph, op or stack frame. The API turns it into a 404 with this message."""


class RecordGone(NotFound):
    """A record the index points at can no longer be read back: its file shrank or was replaced after it was
    indexed. A page shows such a row with an UNKNOWN health saying so; a single-record route answers 404."""
