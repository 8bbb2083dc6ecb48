"""Protected paths: files and folders whose names, paths or contents never reach a model or a note.

Built in (as Pi Advisor's defaults): `.env` and `.env.*`, `.ssh`, `.gnupg`, `.aws`, `.azure`, `.kube`,
`private-keys-v1.d`, `.npmrc`, `.pypirc`, `.netrc`, `.git-credentials`, `.credentials`, `credentials`,
`credentials.json`, `auth.json`, `docker-config.json`, `login data`, `keychain-db`, `id_rsa*`, `id_dsa*`,
`id_ecdsa*`, `id_ed25519*`, and files ending in `.pem`, `.key`, `.p12`, `.pfx`, `.jks`; plus
`~/.config/gcloud` and `~/.docker/config.json`. Any path component counts, so a file under `.ssh/` is
protected. The user (and a project file) add paths: each protects itself and everything under it.
Exceptions (user config only) exempt one exact path from the built-in rules, never its descendants and
never a user- or project-added path.

A path is checked in three forms, so that `..` and symbolic links cannot hide it: as written, lexically
normalised against the working folder (`src/../.env` -> `<cwd>/.env`), and with every symbolic link
resolved (`notes.txt -> ~/.ssh/id_rsa`). Glob patterns are checked too: `cat .en*` may read `.env`.

`mask(text)` replaces every path-like token that is protected with `[protected path]`;
`touches(text)` says whether any is there. Both are stdlib only and cost one `realpath` per path-like
token. Read-only checks, redaction and masking are defences, not a sandbox: a hard link, a path built at
run time, or a file's contents quoted without its name cannot be recognised.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

MARK = "[protected path]"

NAMES = (
    ".env",
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    "private-keys-v1.d",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    ".credentials",
    "credentials",
    "credentials.json",
    "auth.json",
    "docker-config.json",
    "login data",
    "keychain-db",
)
NAME_PATTERNS = (".env.*", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*")
SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks")
HOME_PATHS = ("~/.config/gcloud", "~/.docker/config.json")

# A path-like token: anything between whitespace, quotes, brackets and shell punctuation.
_TOKEN = re.compile(r"[^\s'\"`<>|;&(){}\[\],]+")
_GLOB = re.compile(r"[*?\[]")


def _looks_like_path(token: str) -> bool:
    return "/" in token or "." in token or token.startswith("~") or "\\" in token


_PATTERNS = re.compile("|".join(fnmatch.translate(p) for p in NAME_PATTERNS))


@lru_cache(maxsize=16_384)
def _name_protected(name: str) -> bool:
    lowered = name.lower()
    if lowered in NAMES or lowered.endswith(SUFFIXES):
        return True
    if _PATTERNS.match(lowered):
        return True
    if _GLOB.search(lowered) and len(re.sub(r"[*?]|\[[^\]]*\]", "", lowered)) >= 2:
        # a glob that could expand to a protected name (`.en*`, `*.pem`); a bare `*` is not one
        candidates = (
            *NAMES,
            ".env.local",
            "id_rsa",
            "id_ed25519",
            "x.pem",
            "x.key",
            "x.p12",
            "x.pfx",
            "x.jks",
        )
        return any(fnmatch.fnmatchcase(c, lowered) for c in candidates)
    return False


@dataclass
class ProtectedPaths:
    """Protected paths for one review: built-ins plus extra paths, minus exact exceptions. Paths are
    absolute, lexically normalised strings."""

    cwd: str
    extra: list[str] = field(default_factory=list)
    exceptions: set[str] = field(default_factory=set)
    home: str = field(default_factory=lambda: str(Path.home()))
    _seen: dict[str, bool] = field(default_factory=dict, repr=False)  # token -> protected, per review

    @classmethod
    def build(
        cls,
        cwd: str | os.PathLike[str] | None,
        *,
        repo: Path | None,
        user_paths: Iterable[str] = (),
        project_paths: Iterable[str] = (),
        exceptions: Iterable[str] = (),
    ) -> ProtectedPaths:
        base = os.path.abspath(cwd or os.getcwd())
        paths = cls(base)
        for raw in user_paths:
            paths.extra.append(paths._absolute(raw, base))
        for raw in project_paths:  # relative to the repository, where the project file lives
            paths.extra.append(paths._absolute(raw, str(repo) if repo else base))
        paths.extra.extend(paths._absolute(p, base) for p in HOME_PATHS)
        paths.exceptions = {paths._absolute(raw, base) for raw in exceptions}
        return paths

    def _absolute(self, raw: str, base: str) -> str:
        text = raw.strip().strip("'\"")
        if text == "~" or text.startswith(("~/", "~\\")):
            text = self.home + text[1:]
        return os.path.normpath(os.path.join(base, text.replace("\\", "/")))

    # -- checks ---------------------------------------------------------------------------------

    def _forms(self, token: str) -> list[str]:
        lexical = self._absolute(token, self.cwd)
        forms = [lexical]
        try:
            real = os.path.realpath(lexical)
        except (OSError, ValueError):
            return forms
        if real != lexical:
            forms.append(real)
        return forms

    def _under_extra(self, path: str) -> bool:
        return any(path == root or path.startswith(root.rstrip("/") + "/") for root in self.extra)

    def protected(self, token: str) -> bool:
        """Is this path (as written, normalised, or resolved through links) protected?"""
        token = token.strip().rstrip(".,:;!?")
        if not token or "\x00" in token:
            return False
        raw_parts = re.split(r"[/\\]+", token)
        builtin = any(_name_protected(part) for part in raw_parts if part not in ("", ".", ".."))
        forms = self._forms(token)
        for form in forms:
            if self._under_extra(form):
                return True
            if any(_name_protected(part) for part in form.split("/") if part):
                builtin = True
        if builtin:
            # An exception exempts one exact target, and only when every form of it is that target.
            return not all(str(form) in self.exceptions for form in forms)
        return False

    def _token_protected(self, token: str) -> bool:
        known = self._seen.get(token)
        if known is None:
            known = self._seen[token] = self._check_token(token)
        return known

    def _check_token(self, token: str) -> bool:
        pieces = [token]
        if "=" in token or ":" in token:  # --env-file=.env, KEY=~/.aws/credentials, host:path
            pieces += [p for p in re.split(r"[=:]", token) if p]
        for piece in pieces:
            # A bare word is a path when it names a file here, or is unmistakably a file name
            # ("id_rsa", "keychain-db"); "credentials" in a sentence is a word.
            if _looks_like_path(piece) or os.path.lexists(os.path.join(self.cwd, piece)):
                if self.protected(piece):
                    return True
            elif not piece.isalpha() and _name_protected(piece):
                return True
        return False

    def touches(self, text: str) -> bool:
        """Does text mention any protected path?"""
        return any(self._token_protected(m.group(0)) for m in _TOKEN.finditer(text))

    def mask(self, text: str) -> tuple[str, int]:
        """text with every protected path-like token replaced by MARK, and how many were."""
        count = 0

        def replace(match: re.Match[str]) -> str:
            nonlocal count
            token = match.group(0)
            if self._token_protected(token):
                count += 1
                return MARK
            return token

        return _TOKEN.sub(replace, text), count
