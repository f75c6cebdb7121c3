"""What the CLI prints reaches a terminal: strings from capsules, folder names and dump text are someone else's, and a
control sequence in them (`\\x1b[2K\\r` erases the line; U+202E reverses what follows) could rewrite what the user
reads — the replay command above all, the one thing checked before a run. Every C0 control but tab and newline, DEL,
every C1 control and the bidi overrides and isolates are written as `\\uXXXX`: visible, and still valid inside a JSON
string (`--json` output passes through the same writer). One helper, used by every command (__main__.main)."""

from __future__ import annotations

from typing import TextIO

_CONTROLS = [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)]
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_ESCAPES = {code: f"\\u{code:04x}" for code in (*_CONTROLS, *_BIDI)}


def escape(text: str) -> str:
    """`text` with terminal controls and bidi overrides written as `\\uXXXX` (newline and tab kept)."""
    return text.translate(_ESCAPES)


class SafeWriter:
    """A text stream that escapes what is written to it (escape) and passes the rest to `stream`."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(escape(text))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()
