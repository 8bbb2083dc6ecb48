"""Protected paths never reach a model or a note: built-ins, user and project paths, `..`, symlinks, globs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advise_helpers import Transcript, enable, review, setting
from habitus.advise.protect import MARK, ProtectedPaths
from model_doubles import ModelServer, Reply, configure

BUILTIN = [
    ".env", ".env.local", "config/.env.production", ".ENV", "~/.ssh/id_ed25519", "/home/u/.ssh/config",
    "~/.gnupg/pubring.kbx", "~/.aws/credentials", "~/.azure/accessTokens.json", "~/.kube/config",
    "certs/server.pem", "tls/server.key", "keystore.jks", "cert.p12", "cert.pfx", ".npmrc", ".pypirc",
    ".netrc", ".git-credentials", "credentials.json", "auth.json", "docker-config.json",
    "~/.config/gcloud/application_default_credentials.json", "~/.docker/config.json", "id_rsa", "id_rsa.pub",
    "--env-file=.env", "DB=$(cat .env)", "'./secrets/../.env'",
]  # fmt: skip
HARMLESS = ["src/environment.py", "README.md", "docs/keys.md", "the .envelope", "monkey.py", "tests/test_env.py",
            "e.g.", "v1.2.0", "https://example.com/docs", "*", "**/*.py", "credentials"]  # fmt: skip


@pytest.mark.parametrize("token", BUILTIN)
def test_builtin_protected_paths(tmp_path: Path, token: str) -> None:
    paths = ProtectedPaths.build(tmp_path, repo=None)
    assert paths.touches(f"cat {token}")
    masked, count = paths.mask(f"cat {token} now")
    assert count == 1 and MARK in masked and masked.endswith(" now")
    assert not paths.touches(masked)  # nothing protected is left


@pytest.mark.parametrize("token", HARMLESS)
def test_ordinary_paths_and_words_pass(tmp_path: Path, token: str) -> None:
    paths = ProtectedPaths.build(tmp_path, repo=None)
    assert not paths.touches(f"see {token} here")
    assert paths.mask(f"see {token} here") == (f"see {token} here", 0)


@pytest.mark.parametrize("glob", [".en*", ".e?v", "*.pem", "~/.ss?/*", "id_*"])
def test_globs_that_could_expand_to_a_protected_file(tmp_path: Path, glob: str) -> None:
    assert ProtectedPaths.build(tmp_path, repo=None).touches(f"cat {glob}")


def test_dot_dot_cannot_hide_a_protected_path(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / "src").mkdir(parents=True)
    paths = ProtectedPaths.build(project / "src", repo=project, project_paths=["customer-data"])
    assert paths.touches("cat ../customer-data/list.csv")
    assert paths.touches("cat ../src/../customer-data")
    assert paths.touches(f"cat {project}/src/../customer-data/x")
    assert not paths.touches("cat ../customer-database.md")  # a sibling name is not under it


def test_symlinks_cannot_hide_a_protected_path(tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".ssh"
    secret.mkdir(parents=True)
    (secret / "id_rsa").write_text("key")
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").symlink_to(secret / "id_rsa")
    (work / "docs").symlink_to(secret)
    (work / "data").mkdir()
    extra = tmp_path / "vault"
    extra.mkdir()
    (extra / "plan.md").write_text("plan")
    (work / "plan-link").symlink_to(extra / "plan.md")
    (work / "bare").symlink_to(secret / "id_rsa")
    paths = ProtectedPaths.build(work, repo=None, user_paths=[str(extra)])
    assert paths.touches("cat notes.txt")  # a file link
    assert paths.touches("cat docs/known_hosts")  # a folder link, to a path that need not exist
    assert paths.touches("cat ./data/../notes.txt")  # both at once
    assert paths.touches("cat plan-link")  # a link into a user-protected folder
    assert paths.touches("cat bare")  # a bare word that is a link
    assert not paths.touches("cat data/readme.txt")


def test_exceptions_are_exact_and_never_cover_added_paths(tmp_path: Path) -> None:
    paths = ProtectedPaths.build(
        tmp_path,
        repo=None,
        user_paths=["private"],
        exceptions=["fixtures/.env.example", "private/readme.md", "fixtures/.ssh"],
    )
    assert not paths.touches("cat fixtures/.env.example")
    assert paths.touches("cat fixtures/.env")
    assert paths.touches("cat fixtures/.ssh/id_rsa")  # not a descendant of an exception
    assert paths.touches("cat private/readme.md")  # user-added paths have no exceptions


# -- end to end: nothing protected reaches the model or a note ---------------------------------------------

SECRET_VALUE = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"


def leaky_session(tmp_path: Path) -> tuple[Transcript, Path]:
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / ".habitus").mkdir()
    (work / ".habitus" / "advise.toml").write_text('protected_paths = ["customer-data"]\n')
    (work / "customer-data").mkdir()
    (work / "customer-data" / "accounts.csv").write_text("alice,bob\n")
    (work / ".env").write_text(f"OPENAI_API_KEY={SECRET_VALUE}\n")
    (work / "settings.txt").symlink_to(work / ".env")
    t = Transcript(tmp_path / "session.jsonl")
    t.prompt("why does the app not start?")
    t.tool("Read", {"file_path": str(work / ".env")})
    t.tool("Bash", {"command": "cat settings.txt | grep KEY"})
    t.tool("Bash", {"command": "head src/../customer-data/accounts.csv"})
    t.say(
        f"Found it: .env sets OPENAI_API_KEY={SECRET_VALUE} and settings.txt points at it; customer-data/accounts.csv is fine."
    )
    return t, work


def test_a_model_reviewer_never_sees_protected_paths_or_their_secrets(
    tmp_path: Path, state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t, work = leaky_session(tmp_path)
    enable(state_root)
    with ModelServer([Reply.answer("openai", {"schema_version": 1, "advice": None})]) as server:
        configure(state_root, "m", kind="openai", url=server.url("/v1"), model="test")
        setting(state_root, "advise.model", "m")
        monkeypatch.chdir(work)
        result = review({}, "--transcript", str(t.path))
        sent = server.requests[0].body.decode()
    assert result["reviewed"] and result["reviewers"]["model"] == {"status": "ok", "silent": True}
    assert result["slice"]["protected"] >= 4
    for leak in (".env", "settings.txt", "customer-data", "accounts.csv", SECRET_VALUE):
        assert leak not in sent, leak
    assert MARK in sent and "[tool Read ok] [protected path]" in json.loads(sent)["messages"][-1]["content"]


def test_a_note_naming_a_protected_path_is_dropped(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    note = {
        "note": "Do not print the contents of .env into the chat.",
        "severity": "concern",
        "findingKey": "env leak",
    }
    with ModelServer([Reply.answer("openai", {"schema_version": 1, "advice": note})]) as server:
        configure(state_root, "m", kind="openai", url=server.url("/v1"), model="test")
        setting(state_root, "advise.model", "m")
        result = review({"user": "check config", "assistant": "The config loads fine.", "session": "p"})
    assert result["note"] is None
    assert result["candidates"] == [
        {"reviewer": "model", "severity": "concern", "decision": "dropped", "why": "protected_path"}
    ]
