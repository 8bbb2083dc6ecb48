"""Run the Pi extension (integrations/pi/habitus.ts) under node: its TypeScript as CommonJS, types removed."""

from __future__ import annotations

import re

from conftest import REPO

_TYPES = re.compile(
    r"(?<=[\w)\]])\s*:\s*(?:any|boolean|void|number|string\[\]|string|Buffer|ExtensionAPI|Promise<string>|Promise<any>)(?=[\s,)=;{])"
)


def extension_as_commonjs(file_name: str, function: str) -> str:
    """integrations/pi/<file_name> with its imports and type annotations rewritten for plain node."""
    source = (REPO / "integrations" / "pi" / file_name).read_text()
    source = re.sub(r"^import type .*$", "", source, flags=re.M)
    source = source.replace(
        'import { spawn } from "node:child_process";', 'const { spawn } = require("node:child_process");'
    )
    source = source.replace('import { connect } from "node:net";', 'const { connect } = require("node:net");')
    source = source.replace(f"export default function {function}", f"module.exports = function {function}")
    return _TYPES.sub("", source)
