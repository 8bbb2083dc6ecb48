"""One worker of test_load.py: runs real `habitus` processes back to back, ROUNDS times the seven-command
round, and records each outcome as a JSON line. Usage: load_worker.py HABITUS WORKER ROUNDS CANDIDATES_JSON OUT"""

from __future__ import annotations

import json
import subprocess
import sys
import time


def main() -> None:
    habitus, worker, rounds, candidates_json, out_path = sys.argv[1:6]
    candidates = json.loads(candidates_json)  # [[id, checksum], ...] this worker approves
    ops = ["capture", "retain", "retrieve", "approve", "select", "capture", "retain"]
    with open(out_path, "w") as out:
        for n in range(int(rounds) * len(ops)):
            op = ops[n % len(ops)]
            key = f"w{worker}-{n}"
            if op == "capture":
                args, request = (
                    ["capture"],
                    {"user": f"{key} prompt", "assistant": "ok", "session": f"w{worker}"},
                )
            elif op == "retain":
                args, request = ["memory", "retain"], {"content": f"{key} memory about load"}
            elif op == "retrieve":
                args, request = ["memory", "retrieve"], {"query": "load", "limit": 5}
            elif op == "approve":
                if not candidates:
                    continue
                habit_id, checksum = candidates.pop()
                key = habit_id
                args, request = ["habit", "approve"], {"id": habit_id, "checksum": checksum}
            else:
                args, request = ["select"], {"prompt": "write some Go code and run the tests"}
            started = time.monotonic()
            done = subprocess.run(
                [habitus, *args], input=json.dumps(request).encode(), capture_output=True, timeout=300
            )
            record = {
                "op": op,
                "key": key,
                "exit": done.returncode,
                "seconds": round(time.monotonic() - started, 3),
                "stdout": done.stdout.decode(errors="replace")[:1_000_000],  # whole: the test parses it
                "stderr": done.stderr.decode(errors="replace")[:2000],
            }
            out.write(json.dumps(record) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
