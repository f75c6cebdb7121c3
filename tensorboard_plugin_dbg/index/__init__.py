"""The in-memory, columnar index of tfdbg2 runs (see protocol.py for what it offers the layers above)."""
