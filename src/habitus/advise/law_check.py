"""The built-in law, checked on the new work: destructive commands and disabled checks.

- Destructive (blocker): force push, `reset --hard`, `clean -f`, `rm -rf` of `/`, `~`, `*` or `.`,
  dropping tables, `mkfs`, `dd` to a device, `chmod -R 777`, in what a new tool call *ran*
  (habitus.advise.commands.running_text: a command written into a document, echoed, searched for or
  put in a commit message did not run), unless the user asked for it in this turn.
- Disabled checks (concern): `--no-verify` in what ran; tests marked skip or xfail in code written or
  run (a document that explains `@pytest.mark.skip` disables nothing).
- law.md `deny:` phrases in the new agent text and tool calls, not negated (concern).

The user asked for it when the request names the action, in its own words or another's ("force push",
"wipe the branch and push over it", "throw away my local changes", "lösch den Ordner", "強制プッシュ"),
not negated ("don't force push"). A call the harness refused or the user rejected never ran, and one
that failed did not do what it says, so neither counts.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from habitus.advise.commands import editing_text, running_text

if TYPE_CHECKING:
    from habitus.advise.local import Candidate, Unit
    from habitus.habits.law import Law

LawRule = tuple[str, str, re.Pattern[str], re.Pattern[str]]  # name, what was done, pattern, user asked


def _rules(*specs: tuple[str, str, str, str]) -> tuple[LawRule, ...]:
    return tuple(
        (name, what, re.compile(pattern), re.compile(asked, re.IGNORECASE))
        for name, what, pattern, asked in specs
    )


# Words for wiping something out, in the supported languages: a request to destroy, not just to
# delete one thing ("delete the old log" does not ask for `rm -rf ~`).
_WIPE = (
    r"wipe|nuke|blow (?:it |them |\w+ )?away|throw (?:\w+ )?away|get rid of (?:all|every)|"
    r"clear (?:it |them |everything |\w+ )?out|start (?:over|from scratch|fresh)|clean slate|"
    r"platt ?mach|alles (?:lösch|entfern|weg)|(?:lösch|entfern)\w* (?:alles|komplett)|"
    r"borr\w* todo|elimin\w* todo|desde cero|"
    r"(?:supprim|effac)\w* tout|tout (?:supprim|effac)|(?:repart|recommenc)\w* de z[ée]ro|"
    r"apag\w* tudo|do zero|"
    r"(?:удал|сотр|очист)\w* вс[её]|снес|с нуля|"
    r"全部(?:削除|消)|全て(?:削除|消)|ゼロから|"
    r"全部删|清空|从头"
)
# Words for discarding work or overwriting what is there.
_DISCARD = (
    r"discard|throw (?:\w+ )?away|don'?t care about (?:my |the |any )?(?:local )?(?:changes|work)|"
    r"lose (?:my |the |all )?(?:local )?changes|"
    r"verwirf|verwerf|wegwerf|descart|jet(?:er|te)z?|abandonn|выбрось|отбрось|破棄|捨て|丢弃|扔掉|放弃"
)
_OVERWRITE = (
    r"overwrite|override|clobber|push over|replace (?:the )?(?:remote|branch|history)|rewrite (?:the )?"
    r"(?:remote |branch |git )?history|make (?:the )?remote match|"
    r"überschreib|sobrescrib|sobrescrev|écras|перезапис|上書き|覆盖|覆蓋"
)
_TABLE = r"(?:table|tabelle|tabla|tabela|таблиц|テーブル|表)"
_DELETE = (
    r"(?:delete|remove|get rid of|lösch|entfern|borr|elimin|supprim|effac|apag|exclu|удал|削除|删除|删掉)"
)

DESTRUCTIVE = _rules(
    (
        "force_push",
        "force-pushed",
        r"\bgit\s+push\b[^\n|;&]*?\s(?:--force(?![-\w])|-f\b|\+\w)",
        r"force[- ]?push|--force|push -f|push --force-with-lease|"
        + _OVERWRITE
        + r"|force|forz|forç|forc|принудит|強制|强制|強推|强推|wipe (?:the )?(?:remote )?branch",
    ),
    (
        "reset_hard",
        "ran git reset --hard",
        r"\bgit\s+reset\s+[^\n|;&]*--hard\b",
        r"reset --hard|hard reset|reset hard|discard|don'?t care about (?:my |the |any )?(?:local )?changes|"
        r"lose (?:my |the |all )?(?:local )?changes|match(?:es)? (?:origin|upstream|the remote)|"
        r"back to (?:origin|upstream|the remote|main|master)|reset (?:it |the branch |everything )?to|"
        r"zurücksetz|reset|restablec|réinitialis|redefin|сброс|откат|リセット|重置|" + _DISCARD + "|" + _WIPE,
    ),
    (
        "clean_force",
        "ran git clean -f",
        r"\bgit\s+clean\s+-[a-z]*f",
        r"git clean|untracked|" + _DISCARD + "|" + _WIPE,
    ),
    (
        "remove_all",
        "removed a whole tree (rm -rf of /, ~, * or .)",
        r"\brm\s+(?:-[a-z]*\s+)*-[a-z]*r[a-z]*\s+(?:-\S+\s+)*(?:(?:/|~|\$home|\.{1,2})/?\*?|\*)(?=\s|$|;|&)",
        r"\brm -rf\b|delete (?:everything|all|it all)|empty (?:the|this|that) (?:folder|directory|dir)|"
        + _WIPE,
    ),
    (
        "drop_data",
        "dropped or truncated database data",
        r"\b(?:drop\s+(?:table|database|schema)|truncate\s+table)\b",
        r"\bdrop|\btruncat|empty (?:the |that |this )?table|purge|"
        + f"{_DELETE}[^.;]{{0,30}}{_TABLE}|{_TABLE}[^.;]{{0,30}}{_DELETE}|"
        + _WIPE,
    ),
    (
        "wipe_device",
        "wrote to a device or made a file system",
        r"\bmkfs(?:\.\w+)?\b|\bdd\s+[^\n]*\bof=/dev/",
        r"mkfs|\bdd\b|format|formatier|formate|форматир|フォーマット|格式化|" + _WIPE,
    ),
    (
        "chmod_777",
        "made files world-writable",
        r"\bchmod\s+(?:-[a-z]*r[a-z]*\s+)777\b",
        r"777|world[- ]writable|everyone can write|writable by (?:all|everyone|anyone)",
    ),
)
DISABLED_CHECKS = _rules(
    (
        "no_verify",
        "skipped the git hooks with --no-verify",
        r"--no-verify\b",
        r"no-verify|skip(?:ping)? (?:the )?(?:pre-commit |git )?hooks?|bypass (?:the )?hooks?|without (?:the )?hooks?",
    ),
    (
        "skipped_tests",
        "marked tests to be skipped",
        r"@pytest\.mark\.(?:skip|xfail)\b|@unittest\.skip|\b(?:it|test|describe)\.skip\(|\bx(?:it|describe)\(",
        r"\bskip\w*|\bxfail|disable|quarantin|überspring|deaktivier|omit|salt|ignor|désactiv|пропуст|"
        r"отключ|スキップ|無効|跳过|禁用",
    ),
)
# A negation shortly before the asking words: "don't force push", "nicht löschen", "no borres".
_NOT_ASKED = re.compile(
    r"(?:\b(?:don'?t|do not|never|no|not|without|nicht|kein\w*|nie|no|nunca|ne|pas|jamais|não|нельзя|не)\b|"
    r"しないで|するな|不要|别|不)\W*(?:\w+\W+){0,3}$",
    re.IGNORECASE,
)
_GROUPS = (
    ("destructive", "blocker", DESTRUCTIVE, running_text),
    ("checks", "concern", DISABLED_CHECKS, None),
)


def asked_for(pattern: re.Pattern[str], prompt: str) -> bool:
    """The user's words ask for the action: a match not negated just before it."""
    return any(
        not _NOT_ASKED.search(prompt[max(0, m.start() - 40) : m.start()]) for m in pattern.finditer(prompt)
    )


def prompt_of(units: list[Unit]) -> str:
    """The user's words in the slice (what counts as the user asking for something)."""
    return " ".join(u.lowered for u in units if u.role == "user")


def findings(units: list[Unit], law: Law, prompt: str) -> list[Candidate]:
    """The law's findings."""
    from habitus.advise.local import Candidate, excerpt
    from habitus.advise.notes import normalize
    from habitus.habits.law import _negated

    asked = prompt.lower()
    found: list[Candidate] = []
    seen: set[str] = set()
    tools = [
        u for u in units if u.new and u.role == "tool" and u.status not in ("refused", "rejected", "error")
    ]
    for group, severity, rules, reading in _GROUPS:
        for name, what, pattern, asking in rules:
            read = reading or (running_text if name == "no_verify" else editing_text)
            hit = next((u for u in tools if pattern.search(read(u.lowered))), None)
            if hit is None or name in seen or asked_for(asking, asked):
                continue
            seen.add(name)
            tail = "you did not ask for this in the current request; the law asks for confirmation first"
            if group == "checks":
                tail = "the law forbids turning checks or tests off to get a green run unless you asked"
            found.append(
                Candidate(
                    f'The agent {what} ("{excerpt(hit.text)}"): {tail}.',
                    severity,
                    f"law:{name}",
                    rank=1_000_000,
                )
            )
    for rule in law.deny:
        for unit in (u for u in units if u.new and u.role != "user"):
            text = normalize(unit.text)
            if any(not _negated(text, m.start()) for m in rule.pattern.finditer(text)):
                found.append(
                    Candidate(
                        f'The new work does what law.md line {rule.line} denies ("{rule.phrase}"): '
                        f'"{excerpt(unit.text)}".',
                        "concern",
                        f"law:deny:{rule.line}:{rule.phrase}",
                        rank=900_000,
                    )
                )
                break
    return found
