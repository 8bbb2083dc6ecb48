"""What a habit names (a file to update, a command to run, a line to write, files not to edit, a commit
convention) is read in the turn's tool calls without a model: shown means done, absent means missing,
and a named break is a note whatever the judge reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run
from habitus.advise import artifacts, commits, local, markers, pins, written_code
from habitus.advise.slice import Entry, Slice
from habitus.habits.store import ActiveHabit

CHANGELOG = ("When you bump the package version", "Do add an entry for it to CHANGELOG.md", 1)
GO = ("When you've changed Go code", "Do run gofmt and go vet before you say you're done", 1)
BASH = ("When you create a new bash script", "Do start it with set -euo pipefail", 1)
RUFF = (
    "When you've changed Python code under backend/",
    "Do run ruff check and mypy before telling me it's done",
    1,
)
VENDOR = (
    "When a fix seems to need changes inside vendored code (vendor/, third_party/)",
    "Do not edit the vendored files; put the change in our own code or as a patch file under patches/.",
    -1,
)
SCHEMA = (
    "When the database schema needs to change",
    "Do write a new migration file (alembic, Flyway, etc.) instead of editing schema.sql by hand",
    1,
)
CONVENTIONAL = (
    "When committing",
    "Do use a Conventional Commits prefix (feat:, fix:, chore:) in the message",
    1,
)
MAIN = (
    "When you're on main or master and need to commit",
    "Do not commit there; create a feature branch first",
    -1,
)
SUBJECT = (
    "When writing a commit message",
    "Do write an imperative subject line of at most 72 characters, then a body that says why.",
    1,
)


def _units(*entries: tuple[str, str, str | None]) -> list[local.Unit]:
    return local.units_of(Slice(entries=[Entry(role, text, True, name) for role, text, name in entries]))


def _notes(
    habit: tuple[str, str, int], *entries: tuple[str, str, str | None], status: str = "ok"
) -> set[str]:
    """The habit keys the local reviewer raises on these entries (role, text, tool name) without a model."""
    active = ActiveHabit("x1", habit[0], habit[1], habit[2], 8000, "", "")
    s = Slice(entries=[Entry(role, text, True, name, status) for role, text, name in entries])
    return {c.key for c in local.review(s, [active], None, embed=None)}


def test_what_a_do_habit_names_is_read_from_its_asked_clause() -> None:
    assert artifacts.asked(CHANGELOG[1], 1).files == ("changelog.md",)
    assert artifacts.asked(GO[1], 1).commands == ("gofmt", "go vet")
    assert artifacts.asked(RUFF[1], 1).commands == ("ruff", "mypy")
    assert artifacts.asked(BASH[1], 1).lines == ("set -euo pipefail",)
    assert artifacts.asked("Do update api/openapi.yaml in the same change", 1).files == ("api/openapi.yaml",)
    # a glob, a leading-dot name and a placeholder name are kinds of file
    assert artifacts.asked("Do put it in the locale files (src/locales/*.json)", 1).files == (
        "src/locales/*.json",
    )
    assert artifacts.asked("Do add it to .env.example", 1).files == ("*.env.example",)
    assert artifacts.asked("Do add a story next to it (Component.stories.tsx)", 1).files == ("*.stories.tsx",)
    # what the avoided clause names is not asked for; "e.g.", versions and calls are not files
    assert artifacts.asked(SCHEMA[1], 1).files == ()
    assert not artifacts.asked("Do pin it, e.g. 3.1.0, and use t() for text", 1)
    assert not artifacts.asked("Do run the full test suite after each", 1)
    assert not artifacts.asked(VENDOR[1], -1)


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ([("tool", "Edit", "CHANGELOG.md\n## 2.4.0\n- new export")], artifacts.SHOWN),
        ([("tool", "Bash", "echo '- fix' >> docs/CHANGELOG.md")], artifacts.SHOWN),
        ([("assistant", None, "CHANGELOG.md already lists this release.")], artifacts.MENTIONED),
        ([("tool", "Edit", 'package.json\n"version": "2.4.0"')], artifacts.ABSENT),
        ([("tool", "Bash", "git add " + "src/module.py " * 40 + "CHANGELOG.md")], artifacts.MENTIONED),
        # a file's text that names the file is not an update of it
        ([("tool", "Edit", "scripts/release.py\n# see CHANGELOG.md")], artifacts.MENTIONED),
    ],
)
def test_a_named_file_is_shown_mentioned_or_absent(
    entries: list[tuple[str, str | None, str]], expected: str
) -> None:
    units = _units(*[(role, text, name) for role, name, text in entries])
    assert artifacts.state(artifacts.asked(CHANGELOG[1], 1), units) == expected


def test_a_call_that_never_ran_shows_nothing() -> None:
    s = Slice(entries=[Entry("tool", "gofmt -w . && go vet ./...", True, "Bash", "rejected")])
    assert artifacts.state(artifacts.asked(GO[1], 1), local.units_of(s)) == artifacts.ABSENT


def test_a_change_of_the_named_kind_without_the_named_command_is_a_note() -> None:
    edit = ("tool", "internal/cache/lru.go\nfunc (c *Cache) Get(key string) (any, bool) {", "Edit")
    assert _notes(GO, ("user", "make the cache thread-safe", None), edit) == {"habit:x1"}
    done = ("tool", "gofmt -l . && go vet ./...", "Bash")
    assert _notes(GO, ("user", "make the cache thread-safe", None), edit, done) == set()
    # not Go code: the condition's kind of file is not written
    other = ("tool", "web/src/cache.ts\nexport const cache = new Map()", "Edit")
    assert _notes(GO, ("user", "cache it", None), other) == set()


def test_a_folder_and_kind_both_count() -> None:
    inside = ("tool", "backend/app/jobs.py\ndef run():\n    return 1", "Edit")
    outside = ("tool", "scripts/jobs.py\ndef run():\n    return 1", "Edit")
    assert _notes(RUFF, ("user", "add the job", None), inside) == {"habit:x1"}
    assert _notes(RUFF, ("user", "add the job", None), outside) == set()
    assert (
        _notes(
            RUFF,
            ("user", "add the job", None),
            inside,
            ("tool", "ruff check backend && mypy backend", "Bash"),
        )
        == set()
    )


def test_a_new_script_without_its_line_is_a_note_but_an_edit_of_an_old_one_is_not() -> None:
    new = ("tool", "scripts/backup.sh\n#!/usr/bin/env bash\npg_dump app > /tmp/app.sql", "Write")
    assert _notes(BASH, ("user", "write a backup script", None), new) == {"habit:x1"}
    good = ("tool", "scripts/backup.sh\n#!/usr/bin/env bash\nset -euo pipefail\npg_dump app", "Write")
    assert _notes(BASH, ("user", "write a backup script", None), good) == set()
    edit = ("tool", "scripts/backup.sh\npg_dump app | gzip > /tmp/app.sql.gz", "Edit")
    assert _notes(BASH, ("user", "compress the backup", None), edit) == set()
    # a long script cut before its line: unknown, no note
    long = (
        "tool",
        "scripts/backup.sh\n#!/usr/bin/env bash\n" + "# a comment line\n" * 30 + "set -euo pipefail",
        "Write",
    )
    assert _notes(BASH, ("user", "write a backup script", None), long) == set()


def test_an_edit_of_a_file_the_habit_says_not_to_edit_is_a_note() -> None:
    assert artifacts.avoided_paths(*VENDOR) == ("vendor/", "third_party/")
    assert artifacts.avoided_paths(*SCHEMA) == ("schema.sql",)
    vendored = ("tool", "vendor/github.com/acme/retry/retry.go\nif attempt > max {", "Edit")
    assert _notes(VENDOR, ("user", "the retry lib panics, fix it", None), vendored) == {"habit:x1"}
    ours = ("tool", "patches/retry-max.patch\n--- a/retry.go", "Write")
    assert _notes(VENDOR, ("user", "the retry lib panics, fix it", None), ours) == set()
    shown = ("tool", "cat vendor/github.com/acme/retry/retry.go", "Bash")
    assert _notes(VENDOR, ("user", "why does it panic", None), shown) == set()
    schema = ("tool", "db/schema.sql\n  archived_at TIMESTAMPTZ NULL", "Edit")
    assert _notes(SCHEMA, ("user", "add archived_at to projects", None), schema) == {"habit:x1"}
    migration = ("tool", "db/migrations/0042_archived_at.sql\nALTER TABLE projects ADD archived_at", "Write")
    assert _notes(SCHEMA, ("user", "add archived_at to projects", None), migration) == set()


def test_a_habit_that_does_not_avoid_editing_names_no_paths() -> None:
    assert (
        artifacts.avoided_paths("When working on anything under infra/", "Do not run terraform apply", -1)
        == ()
    )


def test_commit_conventions_are_read_from_the_habit() -> None:
    assert commits.rule_of(*CONVENTIONAL).prefixes[:3] == ("feat", "fix", "chore")
    assert commits.rule_of(*MAIN).branches == ("main", "master")
    assert commits.rule_of(*SUBJECT).longest == 72
    assert not commits.rule_of("When fixing a bug", "Do add a regression test", 1)


@pytest.mark.parametrize(
    ("command", "subject", "whole"),
    [
        ("git commit -am 'signup subject typo'", "signup subject typo", True),
        ('git add -A && git commit -m "fix: x" -m "body"', "fix: x", True),
        # Claude Code's heredoc, as a transcript joins its lines: the start only
        (
            "git commit -m \"$(cat <<'EOF' feat: add the review page (gqc.5) New page. EOF )\"",
            "feat: add the review page (gqc.5) New page. EOF )",
            False,
        ),
        ("git commit -m \"$(cat <<'EOF'\nfeat: add x\n\nbody\nEOF\n)\"", "feat: add x", True),
        ("git commit -F msg.txt", "", False),
    ],
)
def test_a_commit_subject_is_read_from_the_command(command: str, subject: str, whole: bool) -> None:
    (made,) = commits.made(_units(("tool", command, "Bash")))
    assert (made.subject, made.whole) == (subject, whole)


def test_commit_notes() -> None:
    ask = ("user", "commit it", None)
    assert _notes(CONVENTIONAL, ask, ("tool", "git commit -am 'signup subject typo'", "Bash")) == {"habit:x1"}
    assert (
        _notes(CONVENTIONAL, ask, ("tool", "git commit -am 'fix(auth): signup subject typo'", "Bash"))
        == set()
    )
    # the heredoc's start is enough for a prefix
    heredoc = "git commit -m \"$(cat <<'EOF' add the review page EOF )\""
    assert _notes(CONVENTIONAL, ask, ("tool", heredoc, "Bash")) == {"habit:x1"}
    assert _notes(MAIN, ask, ("tool", "git checkout main && git commit -am 'fix: typo'", "Bash")) == {
        "habit:x1"
    }
    assert (
        _notes(MAIN, ask, ("tool", "git switch -c fix/typo && git commit -am 'fix: typo'", "Bash")) == set()
    )
    assert _notes(MAIN, ask, ("tool", "git commit -am 'fix: typo'", "Bash")) == set()  # branch unknown
    long = "git commit -m 'Fixed the bug with the login timeout issue that was happening when people left the tab'"
    assert _notes(SUBJECT, ask, ("tool", long, "Bash")) == {"habit:x1"}
    assert _notes(SUBJECT, ask, ("tool", "git commit -m 'Fix the login timeout'", "Bash")) == set()
    # a commit that failed or was refused made nothing
    assert _notes(CONVENTIONAL, ask, ("tool", "git commit -am 'typo'", "Bash"), status="error") == set()
    assert _notes(CONVENTIONAL, ask, ("tool", "git commit -am 'typo'", "Bash"), status="refused") == set()
    # a message shown or quoted is not a commit
    assert _notes(CONVENTIONAL, ask, ("tool", "git log -1 --format=%s", "Bash")) == set()
    # a call cut before its message ends says nothing of the message (Codex's exec, 400 characters)
    cut = (
        "git add " + "docs/implementation.md " * 16 + "&& git commit -m 'docs(token-exchange): clarify usage'"
    )
    assert _notes(CONVENTIONAL, ask, ("tool", cut, "Bash")) == set()
    # quoted once more inside a tool's own code
    js = 'const r = await tools.exec_command({"cmd":"git commit -m \\"fix(auth): x\\""})'
    assert _notes(CONVENTIONAL, ask, ("tool", js, "exec")) == set()


def _eval(tmp_path: Path, catalog: list[tuple[str, str, int]], entries: list[dict[str, str]]) -> list[str]:
    """What `habitus eval advise` raises on one turn against a catalog (ids x1, x2, ...)."""
    habits = tmp_path / "habits.jsonl"
    habits.write_text(
        "".join(
            json.dumps({"id": f"x{i}", "condition": c, "behavior": b, "polarity": p}) + "\n"
            for i, (c, b, p) in enumerate(catalog, 1)
        )
    )
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"id": "c1", "category": "applies", "expected": [], "entries": entries}) + "\n"
    )
    done = run(["eval", "advise", "--cases", str(cases), "--habits", str(habits), "--json"])
    assert done.exit == 0, done.stderr
    misses = json.loads(done.stdout)["misses"]
    return misses[0]["raised"] if misses else []


def test_through_the_judge_a_version_bump_without_the_changelog_is_a_note(tmp_path: Path) -> None:
    """The production path with the packaged model: the judge reads the situation, the named file's
    absence stands for the behaviour."""
    bump = [
        {"role": "user", "text": "cut a 2.4.0 release"},
        {"role": "tool", "name": "Edit", "text": 'package.json\n  "version": "2.4.0",'},
        {"role": "tool", "name": "Bash", "text": "npm run build && npm test"},
        {"role": "assistant", "text": "Bumped to 2.4.0; build and tests pass."},
    ]
    catalog = [CHANGELOG, GO, CONVENTIONAL]  # the judge reads a habit against the others
    assert _eval(tmp_path, catalog, bump) == ["habit:x1"]
    with_log = [
        *bump[:3],
        {"role": "tool", "name": "Edit", "text": "CHANGELOG.md\n## 2.4.0\n- export to CSV"},
        bump[3],
    ]
    assert _eval(tmp_path, catalog, with_log) == []


PIN = (
    "When adding a new npm or pip dependency",
    "Do pin it to an exact version (no ^, no ~, no bare package name)",
    1,
)
NPM_PIN = (
    "When you add an npm dependency",
    "Do pin the exact version (npm i -E), no ^ or ~ ranges in package.json",
    1,
)
TODO = ("When you leave a TODO or FIXME in code", "Do put a ticket number in it, like TODO(PAY-123).", 1)


@pytest.mark.parametrize(
    ("habit", "command", "noted"),
    [
        (PIN, "npm install dayjs\nadded 1 package", True),
        (PIN, "pnpm add zod", True),
        (PIN, "yarn add axios axios-retry", True),
        (PIN, "poetry add httpx\nUsing version ^0.27.0 for httpx", True),
        (PIN, "npm i -E dayjs", False),
        (PIN, "npm install dayjs@1.11.10", False),
        (PIN, "poetry add httpx==0.27.0", False),
        (PIN, "npm install", False),  # installs what the manifest says
        (PIN, "npm ci", False),
        (PIN, "echo 'npm install dayjs' >> NOTES.md", False),  # shown, not run
        # the habit names npm: another ecosystem's manager is not its situation
        (NPM_PIN, "uv add httpx", False),
        (NPM_PIN, "npm install dayjs", True),
    ],
)
def test_a_dependency_added_with_a_range_against_a_pinning_habit(
    habit: tuple[str, str, int], command: str, noted: bool
) -> None:
    assert _notes(habit, ("user", "add it", None), ("tool", command, "Bash")) == (
        {"habit:x1"} if noted else set()
    )


def test_a_requirements_line_that_pins_nothing_is_a_note_and_a_range_pinned_by_hand_is_not() -> None:
    ask = ("user", "parse the yaml safely", None)
    assert _notes(PIN, ask, ("tool", "requirements.txt\nflask==3.0.3\nruamel.yaml", "Edit")) == {"habit:x1"}
    assert _notes(PIN, ask, ("tool", "requirements.txt\nflask==3.0.3\nruamel.yaml==0.18.6", "Edit")) == set()
    # as a transcript keeps it: the file's lines joined
    assert _notes(PIN, ask, ("tool", "requirements.txt flask==3.0.3 ruamel.yaml", "Edit")) == {"habit:x1"}
    assert _notes(PIN, ask, ("tool", "requirements.txt flask==3.0.3 ruamel.yaml==0.18.6", "Edit")) == set()
    fixed = ("tool", 'package.json\n-    "echarts": "^5.4.3",\n+    "echarts": "5.4.3",', "Edit")
    assert _notes(PIN, ask, ("tool", "yarn add echarts", "Bash"), fixed) == set()
    assert not pins.managers(*VENDOR)


def test_a_marker_without_the_examples_shape_is_a_note() -> None:
    rule = markers.rule_of(*TODO)
    assert rule.markers == ("TODO", "FIXME") and rule.shape is not None
    assert rule.shape.pattern == "[A-Z]+\\-[0-9]+"
    ask = ("user", "batch the pricing calls", None)
    bare = (
        "tool",
        "services/pricing/client.ts\n// TODO: replace with cursor pagination\nconst PAGE = 100;",
        "Edit",
    )
    assert _notes(TODO, ask, bare) == {"habit:x1"}
    german = ("tool", "src/Money.kt\n// FIXME: Rundungsmodus aus den Einstellungen lesen", "Edit")
    assert _notes(TODO, ask, german) == {"habit:x1"}
    tagged = ("tool", "services/pricing/client.ts\n// TODO(PAY-482): replace with cursor pagination", "Edit")
    assert _notes(TODO, ask, tagged) == set()
    removed = (
        "tool",
        "services/pricing/client.ts\n-// TODO: replace with cursor pagination\n+const PAGE = 50;",
        "Edit",
    )
    assert _notes(TODO, ask, removed) == set()
    doc = ("tool", "docs/NOTES.md\n- TODO: write the pricing section", "Edit")  # not code
    assert _notes(TODO, ask, doc) == set()
    assert not markers.rule_of("When you leave a TODO", "Do explain it", 1)


SQL = (
    "When writing SQL in application code",
    "Do not build queries with string formatting or concatenation",
    -1,
)
LOGS = (
    "When adding log lines",
    "Do not log secrets or personal data (tokens, passwords, API keys, emails)",
    -1,
)


@pytest.mark.parametrize(
    ("line", "noted"),
    [
        ("cur = conn.execute(f\"SELECT id FROM products WHERE name ILIKE '%{term}%'\")", True),
        (
            'const { rows } = await pool.query("SELECT id FROM customers WHERE city = \'" + city + "\'");',
            True,
        ),
        ("q := fmt.Sprintf(\"SELECT id, total FROM orders WHERE no = '%s'\", no)", True),
        ('String sql = "SELECT * FROM orders WHERE user_id = " + userId;', True),
        ("cur.execute(\"DELETE FROM sessions WHERE id = '%s'\" % sid)", True),
        # bound parameters, a value wrapped in Python, a sort column from an allow-list: not built
        (
            "rows = db.execute('SELECT id FROM products WHERE name ILIKE %s', (f'%{name}%',)).fetchall()",
            False,
        ),
        ("sql = f'SELECT * FROM reports WHERE created_at >= %s ORDER BY {col} DESC'", False),
        ("const { rows } = await pool.query('SELECT id FROM users WHERE id = $1', [id]);", False),
        ('log.info(f"loaded {n} rows")', False),
    ],
)
def test_sql_built_from_strings(line: str, noted: bool) -> None:
    edit = ("tool", f"app/repo.py\n{line}", "Edit")
    assert _notes(SQL, ("user", "add the search", None), edit) == ({"habit:x1"} if noted else set())


@pytest.mark.parametrize(
    ("line", "noted"),
    [
        ("logger.info('password reset mail sent to %s (token=%s)', user.email, token)", True),
        ("log.warn(`login failed for ${body.email} with password ${body.password}`);", True),
        ("logger.info('charge', { customer: input.customerEmail, card: input.card.number });", True),
        ("log.debug('mapbox request q=%s token=%s', query, MAPBOX_TOKEN)", True),
        # the words only in the message, an id, a masked or reduced value: not the value
        ("logger.info('token refreshed for user %s', user.id)", False),
        ("logger.warn('login failed', { userId: user.id, emailDomain: email.split('@')[1] });", False),
        ("logger.info('reset sent to %s', mask_email(user.email))", False),
        ("send_mail(to=user.email, context={'token': token})", False),  # not a logging call
    ],
)
def test_a_secret_or_personal_value_logged(line: str, noted: bool) -> None:
    edit = ("tool", f"app/auth.py\n{line}", "Edit")
    assert _notes(LOGS, ("user", "add logging", None), edit) == ({"habit:x1"} if noted else set())


def test_which_habits_the_code_readers_serve() -> None:
    assert written_code.avoids_built_sql(*SQL)
    assert not written_code.avoids_built_sql("When writing SQL", "Do run EXPLAIN on it", 1)
    assert {"email", "token", "password", "apikey"} <= written_code.avoided_in_logs(*LOGS)
    # the values may be named in the condition
    named = (
        "When adding a log line that includes user data (emails, phone numbers)",
        "Do not log the raw value",
        -1,
    )
    assert {"email", "phone"} <= written_code.avoided_in_logs(*named)
    assert not written_code.avoided_in_logs("When adding logging", "Do not use print; use the logger", -1)


def test_the_code_readers_read_a_file_joined_into_one_line_as_a_transcript_keeps_it() -> None:
    """A Claude Code transcript's tool detail is the file's path and text with whitespace joined: a
    logging call's arguments end at its parenthesis, a diff-less literal is still read."""
    joined = "app/auth.py def refresh(user): logger.info('refreshing') token = make_token(user) return token"
    assert _notes(LOGS, ("user", "refresh it", None), ("tool", joined, "Edit")) == set()
    leaked = "app/auth.py def refresh(user): logger.info('refreshing %s', user.email) return make_token(user)"
    assert _notes(LOGS, ("user", "refresh it", None), ("tool", leaked, "Edit")) == {"habit:x1"}
    sql = "app/repo.py def find(conn, term): return conn.execute(f\"SELECT id FROM items WHERE name = '{term}'\")"
    assert _notes(SQL, ("user", "search", None), ("tool", sql, "Edit")) == {"habit:x1"}
    # a diff's added lines: the marker is not a `+` of concatenation
    diff = 'admin/q.py\n+    cur.execute(\n+        "SELECT id FROM orders "\n+        "WHERE customer_id = %s", (cid,))'
    assert _notes(SQL, ("user", "add the query", None), ("tool", diff, "Edit")) == set()


def _repo(tmp_path: Path, head: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text(head)
    (repo / "src").mkdir()
    return repo


def test_the_checked_out_branch_is_read_from_the_repository(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "ref: refs/heads/main\n")
    assert commits.head_branch(str(repo)) == "main"
    assert commits.head_branch(str(repo / "src")) == "main"  # from a subfolder
    assert commits.head_branch(str(tmp_path / "elsewhere")) is None
    assert commits.head_branch(None) is None
    (repo / ".git" / "HEAD").write_text("4b825dc642cb6eb9a060e54bf8d69288fbee4904\n")
    assert commits.head_branch(str(repo)) is None  # detached
    (repo / ".git" / "HEAD").write_bytes(b"\xff\xfe")
    assert commits.head_branch(str(repo)) is None  # unreadable: nothing guessed
    # a linked worktree: .git is a file pointing at its git folder
    tree = tmp_path / "tree"
    tree.mkdir()
    gitdir = repo / ".git" / "worktrees" / "tree"
    gitdir.mkdir(parents=True)
    (gitdir / "HEAD").write_text("ref: refs/heads/fix/typo\n")
    (tree / ".git").write_text(f"gitdir: {gitdir}\n")
    assert commits.head_branch(str(tree)) == "fix/typo"


def test_a_commit_is_on_the_branch_checked_out_unless_the_turn_switched() -> None:
    def branches(*commands: str) -> list[str | None]:
        return [c.branch for c in commits.made(_units(*[("tool", c, "Bash") for c in commands]), "main")]

    assert branches("git commit -am 'fix: typo'") == ["main"]
    assert branches("git switch -c fix/typo && git commit -am 'fix: typo'") == ["fix/typo"]
    # made before a switch: on the branch the turn started on, which nothing shows
    assert branches("git commit -am 'wip'", "git checkout main") == [None]
    assert branches("git commit -am 'a' && git checkout -b x && git commit -am 'b'") == [None, "x"]


def test_a_commit_on_main_in_a_real_review(tmp_path: Path, state_root: Path) -> None:
    """The review a hook runs: the session's cwd is a repository on main, the agent commits there."""
    from advise_helpers import declare, enable
    from habitus.advise import review
    from habitus.harness.transcripts import ToolUse, Turn
    from habitus.state.root import StateRoot

    enable(state_root)
    habit = declare(MAIN[0], MAIN[1], MAIN[2])
    repo = _repo(tmp_path, "ref: refs/heads/main\n")

    def reviewed(session: str, command: str) -> dict | None:
        turn = Turn(user="commit it", assistant="Committed.", tools=[ToolUse("Bash", detail=command)])
        source = review.Source(session, turns=[turn], cwd=str(repo))
        return review.run(StateRoot(state_root), source, wait=5, route=lambda _: "result").note

    note = reviewed("s1", "git add -A && git commit -m 'fix: typo'")
    assert note is not None and note["habit"] == habit
    assert reviewed("s2", "git switch -c fix/typo && git commit -m 'fix: typo'") is None


def test_a_codex_patch_names_its_files() -> None:
    """Codex writes files with apply_patch; a transcript joins the patch's lines into one."""
    from habitus.advise import commands

    joined = "*** Begin Patch *** Update File: src/app.go @@ -x := 1 +x := 2 *** Add File: CHANGELOG.md +## 2.4.0 *** End Patch"
    assert commands.written_paths(joined) == ["src/app.go", "CHANGELOG.md"]
    assert commands.written_path(joined) == "src/app.go" and commands.is_patch(joined)
    # the judge reads a patch's files in words too
    from habitus.advise import actions

    assert {"edited the CHANGELOG", "edited source code"} <= set(actions.of(f"apply_patch: {joined}"))
    # the second file of a patch is an update of it: the habit was followed
    units = _units(("tool", joined, "apply_patch"))
    assert artifacts.state(artifacts.asked(CHANGELOG[1], 1), units) == artifacts.SHOWN
    # a patch of Go code without gofmt: its kind of file is written
    patch = "*** Begin Patch *** Update File: internal/cache/lru.go @@ -func a() +func b() *** End Patch"
    assert _notes(GO, ("user", "rename it", None), ("tool", patch, "apply_patch")) == {"habit:x1"}
    vendored = "*** Begin Patch *** Update File: vendor/github.com/acme/retry/retry.go @@ -a +b *** End Patch"
    assert _notes(VENDOR, ("user", "fix the retry", None), ("tool", vendored, "apply_patch")) == {"habit:x1"}
    # a joined patch's removed and added lines cannot be told apart: the code readers do not guess
    todo = "*** Begin Patch *** Update File: src/a.py @@ -# TODO: drop this +x = 1 *** End Patch"
    assert _notes(TODO, ("user", "tidy", None), ("tool", todo, "apply_patch")) == set()
