"""Reading an evidence upload off the request stream, within the size limits.

The body is read in chunks and never held uncompressed: a ``Content-Encoding: gzip`` body is
inflated chunk by chunk only to hash it and to count its size against the decompressed limit,
and kept as the client's gzip bytes; a plain body is hashed and gzip-compressed as it arrives.
So a compression bomb is refused after inflating at most the limit (plus one chunk), and a
large upload costs its compressed size in memory, not its inflated size.
"""

import hashlib
import zlib
from dataclasses import dataclass
from typing import Protocol

CHUNK_SIZE = 1 << 16
# The start of the content kept apart, inflated: the evidence's meta is judged from it before
# the run is stored (the plugin writes meta before the records).
HEAD_SIZE = 1 << 16
# gzip framing for zlib (header and CRC trailer), as gzip(1) writes and reads it.
_GZIP_WBITS = 16 + zlib.MAX_WBITS
# Level 1: uploads are stored once and read once or twice; the speed matters more than the
# last few per cent of size (evidence JSON compresses about 8:1 even at level 1).
STORE_LEVEL = 1

GZIP = "gzip"
IDENTITY = "identity"
# x-gzip is the old spelling that RFC 9110 still asks servers to accept as gzip.
_ENCODINGS = {"gzip": GZIP, "x-gzip": GZIP, "identity": IDENTITY, "": IDENTITY}


class Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


class CountingStream:
    """A stream that counts the bytes read from it (the body as sent)."""

    def __init__(self, stream: Readable) -> None:
        self.stream = stream
        self.count = 0

    def read(self, size: int, /) -> bytes:
        data = self.stream.read(size)
        self.count += len(data)
        return data


class UploadError(Exception):
    """Why a body was refused; ``kind`` says which answer fits."""

    TOO_LARGE = "too_large"
    MALFORMED = "malformed"

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True, slots=True)
class ReceivedBody:
    """An upload as stored: ``raw`` is gzip, ``sha256`` and ``size`` describe the inflated
    content (what the client meant, whichever encoding carried it)."""

    raw: bytes
    sha256: str
    size: int
    head: bytes = b""


def content_coding(header: str | None) -> str | None:
    """The coding named by a Content-Encoding header (gzip or identity), or None when unknown.

    Stacked codings ("gzip, gzip") are refused like any other unknown one.
    """
    return _ENCODINGS.get((header or "").strip().lower())


def read_body(
    stream: Readable, *, coding: str, max_bytes: int, max_decompressed: int
) -> ReceivedBody:
    """Read, check, hash and compress the whole body of an upload.

    ``max_bytes`` caps the bytes as sent, ``max_decompressed`` the content once inflated.
    Raises :class:`UploadError` (too large, or gzip that cannot be inflated).
    """
    if coding == GZIP:
        return _read_gzip(stream, max_bytes=max_bytes, max_decompressed=max_decompressed)
    return _read_plain(stream, max_bytes=min(max_bytes, max_decompressed))


def _too_large(limit: int, what: str) -> UploadError:
    return UploadError(UploadError.TOO_LARGE, f"The body is larger than {limit} bytes {what}.")


def _read_plain(stream: Readable, *, max_bytes: int) -> ReceivedBody:
    digest = hashlib.sha256()
    compressor = zlib.compressobj(STORE_LEVEL, zlib.DEFLATED, _GZIP_WBITS)
    stored: list[bytes] = []
    size = 0
    head = b""
    while chunk := stream.read(CHUNK_SIZE):
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(max_bytes, "(the upload limit)")
        digest.update(chunk)
        if len(head) < HEAD_SIZE:
            head += chunk[: HEAD_SIZE - len(head)]
        stored.append(compressor.compress(chunk))
    stored.append(compressor.flush())
    return ReceivedBody(raw=b"".join(stored), sha256=digest.hexdigest(), size=size, head=head)


class _Inflater:
    """Incremental gzip inflation that hashes and counts the output, across gzip members."""

    def __init__(self, max_decompressed: int) -> None:
        self.max_decompressed = max_decompressed
        self.digest = hashlib.sha256()
        self.size = 0
        self.head = b""
        self.member = zlib.decompressobj(_GZIP_WBITS)
        # True between members: only NUL padding or the start of another member may follow.
        self.between = False

    def feed(self, data: bytes) -> None:
        while True:
            if self.between:
                data = data.lstrip(b"\x00")
                if not data:
                    return
                self.member = zlib.decompressobj(_GZIP_WBITS)
                self.between = False
            try:
                # Bounded output per call, so a bomb's expansion is checked as it happens.
                out = self.member.decompress(data, CHUNK_SIZE)
            except zlib.error as exc:
                raise UploadError(
                    UploadError.MALFORMED,
                    f"The body is declared gzip but is not valid gzip data ({exc}).",
                ) from None
            self._count(out)
            if self.member.eof:
                self.between = True
                data = self.member.unused_data
                continue
            data = self.member.unconsumed_tail
            # A full output chunk may leave more output pending even with no input left.
            if not data and len(out) < CHUNK_SIZE:
                return

    def _count(self, out: bytes) -> None:
        self.size += len(out)
        if self.size > self.max_decompressed:
            raise _too_large(self.max_decompressed, "once decompressed (the decompressed limit)")
        self.digest.update(out)
        if len(self.head) < HEAD_SIZE:
            self.head += out[: HEAD_SIZE - len(self.head)]

    def finish(self) -> None:
        if not self.between:
            raise UploadError(UploadError.MALFORMED, "The gzip body is truncated.")


def _read_gzip(stream: Readable, *, max_bytes: int, max_decompressed: int) -> ReceivedBody:
    inflater = _Inflater(max_decompressed)
    stored: list[bytes] = []
    size = 0
    while chunk := stream.read(CHUNK_SIZE):
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(max_bytes, "(the upload limit)")
        stored.append(chunk)
        inflater.feed(chunk)
    if size == 0:
        return ReceivedBody(raw=b"", sha256=inflater.digest.hexdigest(), size=0)
    inflater.finish()
    return ReceivedBody(
        raw=b"".join(stored),
        sha256=inflater.digest.hexdigest(),
        size=inflater.size,
        head=inflater.head,
    )
