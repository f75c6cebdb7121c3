"""Writing TFRecord-framed records independently of the reader under test (its own CRC table, its own protobuf
encoding), for the fuzz and hostile-content tests: a bug shared by the writer and the reader cannot hide itself."""

from __future__ import annotations

import struct


def _crc_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()


def masked_crc(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    c ^= 0xFFFFFFFF
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def frame(payload: bytes, length: int | None = None) -> bytes:
    head = struct.pack("<Q", len(payload) if length is None else length)
    return head + struct.pack("<I", masked_crc(head)) + payload + struct.pack("<I", masked_crc(payload))


def spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of every record of a pristine file."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        end = pos + 16 + struct.unpack_from("<Q", data, pos)[0]
        assert end <= len(data), "the pristine dump must be whole"
        out.append((pos, end))
        pos = end
    assert pos == len(data)
    return out


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def source_record(path: bytes, lines: list[bytes]) -> bytes:
    """A DebugEvent{source_file} encoded by hand, so its strings may hold bytes that are not UTF-8."""
    body = _field(1, path) + _field(2, b"host") + b"".join(_field(3, line) for line in lines)
    return frame(b"\x09" + struct.pack("<d", 1.5e9) + _field(4, body))
