"""Assemble the redaction precision corpus (tests/fixtures/redaction/precision/) from real code and prose.

    python scripts/build_precision_corpus.py --npm DIR

Sources (see tests/fixtures/redaction/README.md for licences): the running interpreter's standard library
(PSF-2.0: code that names passwords, tokens and keys without holding any, and the language reference's
prose from pydoc_data/topics.py), click and huggingface_hub from site-packages (BSD-3-Clause, Apache-2.0),
and express, lodash and axios from the npm registry (MIT), unpacked in DIR by:

    npm pack express@4.21.2 lodash@4.17.21 axios@1.7.9   # then tar xzf each into DIR/<name>-<version>/

Each output file is gzip-compressed text: a `### <source path>` line before each source file's lines.

    python scripts/build_precision_corpus.py --git DIR

builds identifiers.txt.gz instead: identifiers that look random and are not secrets (lock-file hashes,
commit ids, UUIDs), from MIT-licensed repositories at pinned commits, read from bare git folders in DIR
named `<owner>+<name>/repo` (the layout a mirror of them has): see IDENTIFIERS.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import subprocess
import sysconfig
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "redaction" / "precision"

STDLIB = (
    "getpass.py",
    "smtplib.py",
    "ftplib.py",
    "imaplib.py",
    "poplib.py",
    "netrc.py",
    "urllib/request.py",
    "urllib/parse.py",
    "http/client.py",
    "http/cookies.py",
    "http/cookiejar.py",
    "secrets.py",
    "hmac.py",
    "hashlib.py",
    "ssl.py",
    "tokenize.py",
    "base64.py",
    "uuid.py",
    "json/decoder.py",
    "json/encoder.py",
    "argparse.py",
    "logging/handlers.py",
    "email/utils.py",
    "configparser.py",
    "shlex.py",
    "string.py",
    "textwrap.py",
    "datetime.py",
    "xmlrpc/client.py",
    "telnetlib.py",
    "nntplib.py",
    "crypt.py",
    "smtpd.py",
    "http/server.py",
)
SITE = (
    "click/termui.py",
    "click/types.py",
    "huggingface_hub/_login.py",
    "huggingface_hub/utils/_auth.py",
    "huggingface_hub/utils/_headers.py",
    "huggingface_hub/utils/_http.py",
)
NPM = (
    "express-4.21.2/package/lib/request.js",
    "express-4.21.2/package/lib/response.js",
    "express-4.21.2/package/lib/application.js",
    "express-4.21.2/package/lib/utils.js",
    "lodash-4.17.21/package/lodash.js",
    "axios-1.7.9/package/lib/core/Axios.js",
    "axios-1.7.9/package/lib/core/AxiosHeaders.js",
    "axios-1.7.9/package/lib/adapters/http.js",
    "axios-1.7.9/package/lib/adapters/xhr.js",
    "axios-1.7.9/package/lib/helpers/buildURL.js",
    "axios-1.7.9/package/lib/helpers/cookies.js",
    "axios-1.7.9/package/lib/defaults/index.js",
)
PROSE_NPM = (
    "express-4.21.2/package/Readme.md",
    "lodash-4.17.21/package/README.md",
    "axios-1.7.9/package/README.md",
)


# (repository, commit, path or "git log", lines kept): all MIT
IDENTIFIERS = (
    ("gitleaks/gitleaks", "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b", "go.sum", 423),
    ("gitleaks/gitleaks", "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b", "git log", 1300),
    ("Hmbown/CodeWhale", "75dca2cfbe1b5e0e9fd58c9eed27dbc1b4705c48", "Cargo.lock", 3000),
    (
        "Hmbown/CodeWhale",
        "75dca2cfbe1b5e0e9fd58c9eed27dbc1b4705c48",
        "crates/tui/src/session_manager.rs",
        5000,
    ),
    (
        "jfmoe/react-native-live-text-view",
        "7f10231a608fa6d230fc2062177f5c897fcf3d2e",
        "package-lock.json",
        4000,
    ),
    ("HexRaysSA/ida-hcli", "63162eb064b2f9183cf06568573ddbd73d803ca3", "uv.lock", 1600),
    (
        "entireio/cli",
        "f446dcfc09fda981a5c373a5f47c54363761fa6e",
        "docs/architecture/sessions-and-checkpoints.md",
        5000,
    ),
    ("kvsankar/agent-history", "56c766ad182689c887e575a1a387dfec2e4a5ebd", "docs/claude-format.md", 5000),
)


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(folder), *args], capture_output=True, text=True, check=True
    ).stdout


def _identifiers(mirrors: Path) -> list[tuple[str, str]]:
    files = []
    for repo, commit, path, keep in IDENTIFIERS:
        folder = mirrors / repo.replace("/", "+") / "repo"
        if path == "git log":  # commit ids and subjects, no author names or addresses
            text = _git(folder, "log", "--format=%H %h %s", commit)
        else:
            text = _git(folder, "show", f"{commit}:{path}")
        files.append((f"{repo}@{commit[:10]}/{path}", "\n".join(text.splitlines()[:keep])))
    return files


def _bundle(files: list[tuple[str, str]]) -> bytes:
    lines: list[str] = []
    for name, text in files:
        lines.append(f"### {name}")
        lines += text.splitlines()
    return gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0)


def _topics(stdlib: Path) -> str:
    """The language reference's prose: the string values of pydoc_data.topics.topics."""
    tree = ast.parse((stdlib / "pydoc_data" / "topics.py").read_text())
    texts = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 200
    ]
    return "\n".join(texts)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--npm", type=Path, help="folder with the unpacked npm packages")
    parser.add_argument("--git", type=Path, help="folder with the identifier sources' git folders")
    args = parser.parse_args()
    if args.git:
        (OUT / "identifiers.txt.gz").write_bytes(_bundle(_identifiers(args.git)))
    if not args.npm:
        return
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    site = Path(sysconfig.get_paths()["purelib"])
    OUT.mkdir(parents=True, exist_ok=True)
    python = [(f"cpython/Lib/{n}", (stdlib / n).read_text()) for n in STDLIB]
    python += [(n, (site / n).read_text()) for n in SITE]
    (OUT / "code-python.txt.gz").write_bytes(_bundle(python))
    (OUT / "code-js.txt.gz").write_bytes(_bundle([(n, (args.npm / n).read_text()) for n in NPM]))
    prose = [("cpython/Lib/pydoc_data/topics.py (string values)", _topics(stdlib))]
    prose += [(n, (args.npm / n).read_text()) for n in PROSE_NPM]
    (OUT / "prose.txt.gz").write_bytes(_bundle(prose))


if __name__ == "__main__":
    main()
