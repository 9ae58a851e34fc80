"""Transparent, bounded gzip handling shared by every reader."""

from __future__ import annotations

import zlib

from .errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16


def is_gzip(data: bytes) -> bool:
    return data[:2] == GZIP_MAGIC


def gunzip_limited(data: bytes, *, source: str, limit: int | None = None) -> bytes:
    """Decompress a gzip document, refusing one that inflates past ``limit`` bytes.

    Inflating in chunks keeps a compression bomb from ever being held in memory whole.
    Concatenated gzip members (as ``cat a.gz b.gz`` makes) are read one after another.
    """
    out = bytearray()
    rest = data
    while rest:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        fed = 0
        try:
            # The input goes in by slices too: what a bounded call leaves unread is copied
            # into unconsumed_tail, and with the whole input each time that copying would
            # cost more than the inflating.
            while not inflater.eof and fed < len(rest):
                pending = rest[fed : fed + _CHUNK]
                fed += len(pending)
                while True:
                    room = _CHUNK if limit is None else max(min(_CHUNK, limit - len(out) + 1), 1)
                    chunk = inflater.decompress(pending, room)
                    out += chunk
                    if limit is not None and len(out) > limit:
                        raise InputError.single(
                            source, "", f"decompresses to more than {limit} bytes (the limit)"
                        )
                    pending = inflater.unconsumed_tail
                    if inflater.eof or (not pending and not chunk):
                        break
            if not inflater.eof:
                raise InputError.single(source, "", "gzip stream is truncated")
        except zlib.error as exc:
            raise InputError.single(source, "", f"not valid gzip data ({exc})") from None
        rest = (inflater.unused_data + rest[fed:]).lstrip(b"\x00")
        if rest and not is_gzip(rest):
            raise InputError.single(source, "", "trailing bytes after the gzip stream")
    return bytes(out)


def maybe_gunzip(data: bytes, *, source: str, limit: int | None = None) -> bytes:
    """Return ``data`` decompressed when it is gzip, unchanged otherwise."""
    return gunzip_limited(data, source=source, limit=limit) if is_gzip(data) else data
