"""A scripted `command` model for tests: python model_program.py SCRIPT RECORD_DIR.

Reads the request object on stdin and records it as RECORD_DIR/request-N.json (and its pid as pid-N),
then plays step N of SCRIPT (a JSON list; the last step repeats): sleep, write `stdout` `repeat` times
(or the bytes of `raw_hex`), exit with `exit`. Uses only the standard library.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main() -> int:
    script = json.loads(Path(sys.argv[1]).read_text())
    record = Path(sys.argv[2])
    record.mkdir(parents=True, exist_ok=True)
    request = json.loads(sys.stdin.buffer.read())
    number = 0
    while True:  # claim the next request number atomically (O_EXCL), so steps advance per call
        try:
            fd = os.open(record / f"pid-{number}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            number += 1
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    (record / f"request-{number}.json").write_text(json.dumps(request))
    step = script[min(number, len(script) - 1)]
    if step.get("sleep"):
        time.sleep(step["sleep"])
    out = sys.stdout.buffer
    data = bytes.fromhex(step["raw_hex"]) if step.get("raw_hex") else step.get("stdout", "").encode()
    for _ in range(step.get("repeat", 1)):
        out.write(data)
    out.flush()
    return int(step.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
