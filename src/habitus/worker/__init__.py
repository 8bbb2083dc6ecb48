"""The warm worker: one long-lived process per state root that answers hook calls with everything loaded.

A hook process (`habitus hook|select|capture|advise|memory index --harness NAME`) is a thin client
(`habitus.worker.client`, standard library only): it hands its command line, working directory,
environment and stdin to the worker over `<root>/worker.sock` and prints the worker's reply. The worker
(`habitus.worker.server`) runs the very same command in a process forked for that call from one where
the code, numpy, onnxruntime and the verified embedding model stay loaded, so calls run side by side
and none changes the next one's process; stores are opened per call, so a restore never leaves it
reading a file that was swapped away.

The worker is a cache, never a source of truth: no socket, a stale socket, a refused or timed-out
connection, a bad reply or another habitus version all mean the client does the work in its own
process, with the same result. The first hook call that finds no worker starts one, detached (its own
session, no inherited descriptors), and does its own work meanwhile.

Security: the socket is 0600 in the 0700 root; the client refuses a socket file that is not a socket,
not its user's, or open to others, and checks the server's peer credentials; the server serves only
peers of its own uid (SO_PEERCRED). Requests carry prompts: neither side logs them.

Wire format (both directions): two big-endian uint32 (header length, body length), a header in
`marshal` format (built into the interpreter, so the client imports no json; both ends are the same
interpreter, which `code` checks, and the peer is checked to be the same user before anything is
decoded), the body bytes. A client that is not Python (Pi's extension, in node) sets the top bit of the
header length (JSON_FRAME) and writes its header as a JSON object; the worker answers it in JSON too. Request header {"op": "run"|"status"|"stop", "protocol", "code", "argv", "cwd",
"env", "deadline"}, body = stdin. Reply header {"status": "done"|"mismatch"|"busy"|..., "exit"},
body = stdout.
"""

from __future__ import annotations

import marshal
import os
import struct

from habitus import __version__

SOCKET_NAME = "worker.sock"
LOCK_NAME = "worker.lock"  # under <root>/locks/: held by the live worker for its whole life
PROTOCOL = 1
MAX_HEADER = 1 << 20
MAX_BODY = 16 << 20
MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes with the terminating NUL
JSON_FRAME = 1 << 31  # in a frame's header length: the header is JSON, not marshal
_SIZES = struct.Struct(">II")

# Hook commands the worker answers: the ones that load models, vectors and stores.
SERVED = (("hook",), ("select",), ("capture",), ("advise",), ("memory", "index"))


def code_id() -> str:
    """Which habitus this is: its version and where its code lives (another install is another worker)."""
    return f"{__version__}:{os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}"


def socket_path(root: str) -> str:
    return os.path.join(root, SOCKET_NAME)


def encode(header: bytes, body: bytes, *, json: bool = False) -> bytes:
    return _SIZES.pack(len(header) | (JSON_FRAME if json else 0), len(body)) + header + body


def sizes(prefix: bytes) -> tuple[int, int, bool]:
    """(header length, body length, whether the header is JSON) from a frame's 8-byte prefix;
    ValueError when out of bounds."""
    header, body = _SIZES.unpack(prefix)
    json = bool(header & JSON_FRAME)
    header &= ~JSON_FRAME
    if header > MAX_HEADER or body > MAX_BODY:
        raise ValueError("frame too large")
    return header, body, json


def dump_header(header: dict[str, object]) -> bytes:
    return marshal.dumps(header)


def load_header(data: bytes) -> dict[str, object]:
    """ValueError unless data is one marshalled dict (marshal raises EOFError/TypeError/ValueError)."""
    try:
        header = marshal.loads(data)
    except (EOFError, TypeError, ValueError):
        raise ValueError("bad header") from None
    if not isinstance(header, dict):
        raise ValueError("header is not a dict")
    return header
