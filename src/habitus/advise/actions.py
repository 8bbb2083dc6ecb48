"""What a tool call did, in plain words: "npm version 2.0.0" -> "bumped the version number".

An embedding model reads a shell command or a file path poorly, while a habit is written in words
("When bumping the version number", "Do add the matching CHANGELOG entry"). Each tool call gets the
generic coding actions its input shows (tool names, programs, well-known file names), the same list for
every habit: nothing here names a habit. The semantic judge (habitus.advise.judge) embeds a tool call
with its description, so both "is the situation here" and "does the work show the behaviour" can see it.
"""

from __future__ import annotations

import re

from habitus.advise.commands import kind, running_text, split_call, written_paths

# (what the tool call shows, regex on the lower-cased call) for shell commands that ran.
_RAN: tuple[tuple[str, str], ...] = (
    (
        "bumped the version number",
        r"\b(?:npm|yarn|pnpm|poetry|hatch|uv) version\b|bump(?:2|my)?version|"
        r"cargo (?:set-version|release)|version\s*=|\"version\"|s/\d+\.\d+\.\d+/\d+\.\d+\.\d+/",
    ),
    (
        "built the package",
        r"\bpython3? -m build\b|\b(?:npm|pnpm|yarn) (?:run )?(?:pack|build)\b|"
        r"\bcargo (?:build|package)\b|\bpoetry build\b|\bhatch build\b|\buv build\b|\bgo build\b|"
        r"\bdocker build\b|\bmake\b|\bgradle\w* (?:build|assemble)\b|\bmvn (?:package|install)\b",
    ),
    (
        "installed it in a fresh environment",
        r"\b(?:-m )?venv\b|virtualenv|/tmp/\S+/bin/pip|"
        r"pip install \S*(?:dist/|\.whl|\.tar\.gz)|npm install \S*\.tgz|docker run",
    ),
    (
        "installed a package",
        r"\b(?:pip|pip3|uv pip|npm|yarn|pnpm|cargo|gem|go) (?:install|add|get)\b|"
        r"\bpoetry add\b|\buv add\b|\bbrew install\b|\bapt(?:-get)? install\b",
    ),
    (
        "upgraded dependencies",
        r"\b(?:npm|yarn|pnpm) (?:update|upgrade|up)\b|pip install (?:-u|--upgrade)|"
        r"\bpoetry update\b|\bcargo update\b|\buv (?:lock --upgrade|sync --upgrade)|ncu -u|dependabot",
    ),
    (
        "ran the test suite",
        r"\b(?:pytest|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|nextest)\b|"
        r"\b(?:npm|yarn|pnpm|bun) (?:run )?test\b|\b(?:cargo|go|mix|dotnet|swift) test\b|make (?:test|check)|"
        r"unittest",
    ),
    ("ran the program", r"(?:/bin/|npx |\./)\S+ (?:--version|--help|-v|-h)\b|\s--version\b"),
    ("committed the change", r"\bgit commit\b"),
    ("amended a commit", r"\bgit commit\b[^;&|]*--amend\b"),
    ("pushed to the remote", r"\bgit push\b"),
    ("created a git branch", r"\bgit (?:checkout -b|switch -c|branch (?!-[dD]))\S*"),
    ("merged or rebased branches", r"\bgit (?:merge|rebase|cherry-pick)\b"),
    (
        "resolved merge conflicts",
        r"\bgit (?:add|checkout --(?:ours|theirs))\b.*(?:conflict|--ours|--theirs)|"
        r"<<<<<<<|>>>>>>>|\bmergetool\b",
    ),
    ("deleted files", r"\brm\s|\bgit rm\b|\bunlink\b|\brmdir\b|shutil\.rmtree|os\.remove"),
    ("opened a pull request", r"\bgh pr create\b|\bglab mr create\b"),
    ("reviewed a pull request", r"\bgh pr (?:review|diff|checkout|view)\b"),
    ("read the CI job log", r"\bgh run (?:view|watch)\b|--log(?:-failed)?\b|\bglab ci (?:view|trace)\b"),
    ("re-ran the CI pipeline", r"\bgh run rerun\b|\bglab ci retry\b|re-?run"),
    (
        "ran database migrations",
        r"\b(?:alembic upgrade|manage\.py migrate|rails db:migrate|rake db:migrate|"
        r"flyway migrate|knex migrate|prisma migrate|sqlx migrate|goose up|dbmate up)\b",
    ),
    ("took a database backup", r"\bpg_dump(?:all)?\b|\bmysqldump\b|\bbackup\b|\.dump\b|sqlite3 \S+ \.backup"),
    ("restored a backup", r"\bpg_restore\b|\brestore\b"),
    ("checked the licence", r"licen[cs]e|pip-licenses|license-checker|cargo deny"),
    ("ran the linter", r"\b(?:ruff|flake8|eslint|pylint|mypy|clippy|golangci-lint|shellcheck|hadolint)\b"),
    (
        "regenerated a generated file",
        r"\b(?:npm install|yarn install|poetry lock|uv lock|cargo generate-lockfile|"
        r"go mod tidy|make (?:docs|man|gen\w*)|gen_\w+\.py|generate)\b",
    ),
    ("read a file", r"\b(?:cat|less|head|tail|sed -n)\b"),
    ("searched the code", r"\b(?:grep|rg|ag|ack|find)\b"),
)
# (what the edit shows, regex on the written path) for tools that write files.
_WROTE: tuple[tuple[str, str], ...] = (
    ("edited the CHANGELOG", r"change(?:log|s)|history\.(?:md|rst)|news\.(?:md|rst)|release[-_ ]?notes"),
    (
        "edited the README or the docs",
        r"^(?!.*change(?:log|s))(?:.*readme|.*(?:^|/)docs?/|.*\.(?:md|rst|adoc)$|.*man/)",
    ),
    ("wrote a test", r"(?:^|/)tests?/|_test\.|\.test\.|\.spec\.|test_\w+\.\w+$|(?:^|/)spec/"),
    ("bumped the version number", r"pyproject\.toml|package\.json|cargo\.toml|setup\.(?:py|cfg)|version"),
    ("wrote a database migration", r"migrations?/|alembic/versions|db/migrate"),
    ("edited a CI workflow file", r"\.github/workflows|\.gitlab-ci|\.circleci|jenkinsfile|azure-pipelines"),
    ("wrote a Dockerfile", r"dockerfile|containerfile"),
    ("wrote a shell script", r"\.(?:sh|bash|zsh)$"),
    ("edited a lock file or a generated file", r"\.lock$|lock\.json$|lock\.ya?ml$|\.min\.|generated|\.\d$"),
    ("edited a terminal theme", r"theme|colou?rs?|\.itermcolors|alacritty|kitty|wezterm"),
    ("edited web UI styles", r"\.(?:css|scss|sass|less)$|\.(?:tsx|jsx|vue|svelte)$|tailwind"),
    ("edited configuration", r"config|settings|\.(?:ya?ml|toml|ini|env)$"),
    ("edited source code", r"\.(?:py|js|ts|go|rs|java|kt|rb|c|cc|cpp|h|cs|php|swift)$"),
)
# (what the written text shows, regex on the text) for tools that write files.
_WROTE_TEXT: tuple[tuple[str, str], ...] = (
    (
        "read an environment variable",
        r"\bos\.(?:getenv|environ)|\bprocess\.env\.|\benv::var|\bsystem\.getenv|\benv\[|\benv\.fetch\b|"
        r"\bdeno\.env\.|\bimport\.meta\.env\.|\bgetenv\(|\bos\.lookupenv\(",
    ),
    (
        "added or changed an HTTP endpoint",
        r"@(?:app|router|api|bp|blueprint|\w+_router)\.(?:get|post|put|patch|delete|route)\(|"
        r"\b(?:app|router|server|r)\.(?:get|post|put|patch|delete)\(\s*['\"`]/|"
        r"@(?:get|post|put|patch|delete|request)mapping\b|\bhandlefunc\(\s*\"/|\bpath\(\s*['\"]\w",
    ),
    (
        "added text users see",
        r">\s*[a-z][\w,.!?'’ -]*\s[\w,.!?'’ -]{3,}\s*</|"
        r"\b(?:placeholder|title|label|aria-label|alt)=[\"'][a-z][^\"'{}]*\s[^\"'{}]+[\"']|"
        r"\b(?:toast|alert|notify)(?:\.\w+)?\(\s*[\"'`][a-z][^\"'`]*\s",
    ),
    (
        "added a feature flag",
        r"\bfeature[_ -]?flags?\b|\buseflag\(|\bisenabled\(|\bflags\.\w+|launchdarkly|unleash",
    ),
    ("wrote a test", r"\bdef test_|\bit\(|\btest\(|\bdescribe\(|#\[test\]|func test"),
    ("added logging", r"\blog(?:ger|ging)?\.\w+\(|\bprint\(|console\.log|\bprintln!|fmt\.print"),
    ("caught an exception", r"\bexcept\b|\bcatch\s*\(|\brescue\b|\brecover\(\)"),
    ("built a SQL query", r"\b(?:select|insert|update|delete)\b.*\b(?:from|into|set|where)\b"),
    ("used a secret or API key", r"api[_-]?key|secret|token|password|getenv|environ"),
    ("wrote a comment", r"(?:^|\s)(?:#|//|/\*)\s*\w"),
    ("handled timestamps", r"datetime|timestamp|utcnow|\.now\(|timezone|date\.now|new date"),
    ("wrote an error message", r"raise \w+\(|throw new|error\(|errorf|\berr\b|exit\(\d|sys\.exit"),
    ("defined colours", r"#[0-9a-f]{6}\b|rgb\(|colou?r\d*\s*[:=]|\bansi\b|\b\d{1,3};5;\d"),
    ("added a dependency", r"\bdependencies\b|\brequires\b|\"[\w@/-]+\":\s*\"[\^~]?\d"),
    ("pinned a version", r"@[0-9a-f]{40}\b|:\d+\.\d+(?:\.\d+)?\b|==\d"),
)
_COMPILED = {
    "ran": tuple((d, re.compile(p)) for d, p in _RAN),
    "path": tuple((d, re.compile(p)) for d, p in _WROTE),
    "text": tuple((d, re.compile(p)) for d, p in _WROTE_TEXT),
}
MAX_ACTIONS = 4
_LOOKING = frozenset(("read a file", "searched the code"))


def of(tool_text: str) -> list[str]:
    """The actions a tool call ("Name: input") shows, at most MAX_ACTIONS, most specific first."""
    name, body = split_call(tool_text.lower())
    found = kind(name)
    out: list[str] = []
    if found == "write":
        paths = written_paths(body)  # a Codex patch writes several
        out += [d for d, p in _COMPILED["path"] if any(p.search(path) for path in paths)]
        first = paths[0] if paths else ""
        out += [d for d, p in _COMPILED["text"] if p.search(body[body.find(first) + len(first) :])]
    elif found == "read":
        out.append("searched the code" if re.search(r"grep|glob|search", name) else "read a file")
    else:
        # Only what ran shows an action, but reading and searching are done by the text programs
        # (`cat`, `grep`) that running_text leaves out.
        ran = running_text(tool_text.lower())
        out += [d for d, p in _COMPILED["ran"] if p.search(body if d in _LOOKING else ran)]
    return list(dict.fromkeys(out))[:MAX_ACTIONS]


def described(tool_text: str) -> str:
    """The tool call followed by its actions in words, for embedding."""
    actions = of(tool_text)
    return f"{tool_text} ({'; '.join(actions)})" if actions else tool_text
