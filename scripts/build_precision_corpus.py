"""Assemble the redaction precision corpus (tests/fixtures/redaction/precision/) from real code and prose.

    python scripts/build_precision_corpus.py --npm DIR

Sources (see tests/fixtures/redaction/README.md for licences): the running interpreter's standard library
(PSF-2.0: code that names passwords, tokens and keys without holding any, and the language reference's
prose from pydoc_data/topics.py), click and huggingface_hub from site-packages (BSD-3-Clause, Apache-2.0),
and express, lodash and axios from the npm registry (MIT), unpacked in DIR by:

    npm pack express@4.21.2 lodash@4.17.21 axios@1.7.9   # then tar xzf each into DIR/<name>-<version>/

Each output file is gzip-compressed text: a `### <source path>` line before each source file's lines.
"""

from __future__ import annotations

import argparse
import ast
import gzip
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
    parser.add_argument("--npm", type=Path, required=True, help="folder with the unpacked npm packages")
    args = parser.parse_args()
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
