"""A minimal keep-alive HTTP/1.1 client for the hostile benchmark: the reads measured must not pay for a
client's own overhead, and the attacks need sockets they control byte by byte."""
import asyncio

HOST = "127.0.0.1"


class Connection:
    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: bytes = b"",
                      headers: dict[str, str] | None = None, timeout: float = 30.0) -> tuple[int, bytes]:
        if self.writer is None or self.writer.is_closing():
            self.reader, self.writer = await asyncio.open_connection(HOST, self.port)
        lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{self.port}", f"Content-Length: {len(body)}"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        try:
            return await asyncio.wait_for(self._answer(method), timeout)
        except (asyncio.TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            self.close()
            raise

    async def _answer(self, method: str) -> tuple[int, bytes]:
        assert self.reader is not None
        head = await self.reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines if h)}
        if method == "HEAD":
            body = b""
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = await self._chunks()
        else:
            length = int(headers.get("content-length", "0") or 0)
            body = await self.reader.readexactly(length) if length else b""
        if headers.get("connection", "").lower() == "close":
            self.close()
        return int(status_line.split()[1]), body

    async def _chunks(self) -> bytes:
        assert self.reader is not None
        parts = []
        while True:
            size = int((await self.reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await self.reader.readuntil(b"\r\n")  # no trailers are sent: the empty line
                return b"".join(parts)
            parts.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None
