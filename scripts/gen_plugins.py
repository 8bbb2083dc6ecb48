#!/usr/bin/env python3
"""Generate the plugins and packages that install habitus through each client's own mechanism.

    python scripts/gen_plugins.py          # rewrite plugins/ and the marketplace files
    python scripts/gen_plugins.py --check  # exit 1 when a committed file is stale

What is written (paths from the repository root):

    .claude-plugin/marketplace.json    Claude Code marketplace: `claude plugin marketplace add OWNER/habitus`
    plugins/claude-code/               the Claude Code plugin (hooks, /habitus:review, MCP server)
    .agents/plugins/marketplace.json   Codex marketplace: `codex plugin marketplace add OWNER/habitus`
    plugins/codex/                     the Codex plugin (hooks, the habitus-review skill, MCP server)
    plugins/gemini/habitus/            the Gemini CLI extension (hooks, /habitus:review, MCP server)
    package.json, plugins/pi/          the Pi package: the repository itself (the extension, the MCP server,
                                       /habitus-review)

Every hook is the entry `habitus hooks install` writes for that harness, from the same function
(habitus.harness.plan.snippet), with the program named portably instead of this machine's path, so the
files can be committed and installed anywhere. The Pi package names integrations/pi/habitus.ts itself.
Output is deterministic, so the committed files change only when the hooks or this script do.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from habitus import __version__  # noqa: E402
from habitus.harness.plan import snippet  # noqa: E402

NAME = "habitus"
DESCRIPTION = (
    "Reviewed habits, durable memory and a watchdog reviewer for coding agents: capture, approved "
    "habits before each prompt, advice, the memory index, and habit review. Needs the habitus "
    "command (pipx install habitus)."
)
AUTHOR = {"name": "habitus"}
KEYWORDS = ["habits", "memory", "review", "hooks", "mcp"]
# The MCP server (`habitus mcp`, an optional extra) as every client's mcpServers entry names it.
MCP = {"command": "habitus", "args": ["mcp"]}
PI_EXTENSION = "integrations/pi/habitus.ts"  # the extension, in the repository (the wheel carries it too)

# What every review command says, in each client's own template language. A command only shows: approval,
# rejection and every change to a habit stay the human's act, typed by them in their own terminal.
REVIEW_RULES = """\
Present every candidate above as a short numbered list: its number `n`, the \"When …\" condition, the \
\"Do …\" behaviour, and its evidence (how many observations on how many days, and its stage). If the \
list is empty, say that nothing is waiting for review. To show one candidate's cited evidence and audit \
trail, run `habitus habit show N --json` (read-only).

Then tell the user the exact commands they can run themselves, in their own terminal:

- `habitus habit approve N` to make a habit active (the number is valid for 15 minutes),
- `habitus habit reject N` to reject it,
- `habitus review` to go through every candidate in the interactive review.

Approval is the user's act, never yours: do not run `habitus habit approve`, `reject`, `disable`, \
`enable`, `archive`, `declare`, `example` or any other command that changes a habit, and do not call a \
tool that does, even when asked to; give the user the command instead."""

# --json: an agent's shell may be a terminal (Gemini CLI runs !{…} in a pty), where habitus draws a table.
LIST = "habitus habit list --status candidate --json"
# The review acts that make or keep a habit active, or decide a candidate: a person's, never the agent's.
HUMAN_ONLY = ("approve", "reject", "enable", "declare")


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def hooks(harness: str) -> dict[str, Any]:
    """The hooks of `harness`, as `habitus hooks install` merges them: portable, each runs the habitus on
    PATH (or $HABITUS_BIN) and says so in one line when there is none."""
    return snippet(harness)


def _manifest() -> dict[str, object]:
    """The fields Claude Code's plugin.json and Codex's share, in the order both files write them."""
    return {
        "name": NAME,
        "version": __version__,
        "description": DESCRIPTION,
        "author": AUTHOR,
        "license": "Apache-2.0",
        "keywords": KEYWORDS,
    }


# -- Claude Code -----------------------------------------------------------------------------------------


def claude_code() -> dict[str, str]:
    plugin = "plugins/claude-code"
    manifest = _manifest()
    marketplace = {
        "name": NAME,
        "owner": AUTHOR,
        "metadata": {"description": "habitus for Claude Code", "version": __version__},
        "plugins": [
            {
                "name": NAME,
                "source": f"./{plugin}",
                "description": DESCRIPTION,
                "version": __version__,
                "category": "productivity",
                "keywords": KEYWORDS,
            }
        ],
    }
    review = (
        "---\n"
        "description: List habitus's candidate habits with their evidence, and the commands to approve or "
        "reject them yourself\n"
        "allowed-tools: Bash(habitus habit list:*), Bash(habitus habit show:*)\n"
        "---\n"
        "## Candidate habits waiting for review\n\n"
        f"!`{LIST}`\n\n"
        f"{REVIEW_RULES}\n"
    )
    return {
        ".claude-plugin/marketplace.json": _json(marketplace),
        f"{plugin}/.claude-plugin/plugin.json": _json(manifest),
        f"{plugin}/hooks/hooks.json": _json(
            {
                "description": "habitus: capture, approved habits, advice and the memory index",
                **hooks("claude-code"),
            }
        ),
        f"{plugin}/.mcp.json": _json({"mcpServers": {NAME: MCP}}),
        f"{plugin}/commands/review.md": review,
    }


# -- Codex -----------------------------------------------------------------------------------------------


def codex() -> dict[str, str]:
    plugin = "plugins/codex"
    manifest = {
        **_manifest(),
        "hooks": "./hooks/hooks.json",
        "mcpServers": "./.mcp.json",
        "skills": "./skills/",
        "interface": {
            "displayName": "habitus",
            "shortDescription": "Reviewed habits, durable memory and a watchdog reviewer",
            "developerName": AUTHOR["name"],
            "category": "Productivity",
            "defaultPrompt": ["Show the habits waiting for my review"],
        },
    }
    marketplace = {
        "name": NAME,
        "interface": {"displayName": "habitus"},
        "plugins": [
            {
                "name": NAME,
                "source": {"source": "local", "path": f"./{plugin}"},
                "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
                "category": "Productivity",
            }
        ],
    }
    # Codex plugins have no slash commands of their own (a plugin's commands/ become skills, and only
    # those without shell injection), so review is a skill: the model runs the read-only listing.
    skill = (
        "---\n"
        "name: review\n"
        "description: Show the candidate habits habitus proposed, with their evidence, and the commands the "
        "user runs to approve or reject them. Use when the user asks what habits are waiting for review.\n"
        "---\n\n"
        "# Review habitus's candidate habits\n\n"
        f"Run `{LIST}` (read-only; it prints JSON whose `items` are the candidates).\n\n"
        f"{REVIEW_RULES}\n"
    )
    return {
        ".agents/plugins/marketplace.json": _json(marketplace),
        f"{plugin}/.codex-plugin/plugin.json": _json(manifest),
        f"{plugin}/hooks/hooks.json": _json(hooks("codex")),
        f"{plugin}/.mcp.json": _json({"mcpServers": {NAME: MCP}}),
        f"{plugin}/skills/review/SKILL.md": skill,
    }


# -- Gemini CLI ------------------------------------------------------------------------------------------


def _toml_string(text: str) -> str:
    """A TOML multi-line literal string ('''…'''): no escapes to get wrong."""
    assert "'''" not in text
    return f"'''\n{text}'''"


def gemini() -> dict[str, str]:
    # Gemini CLI expects the extension's folder to bear its name.
    extension = f"plugins/gemini/{NAME}"
    manifest = {
        "name": NAME,
        "version": __version__,
        "description": DESCRIPTION,
        "mcpServers": {NAME: MCP},
    }
    prompt = f"## Candidate habits waiting for review\n\n!{{{LIST}}}\n\n{REVIEW_RULES}\n"
    review = (
        "description = \"List habitus's candidate habits with their evidence, and the commands to approve "
        'or reject them yourself"\n'
        f"prompt = {_toml_string(prompt)}\n"
    )
    # An extension's policy may deny (never allow): the model's shell tool cannot approve, reject,
    # re-enable or declare a habit, whatever a prompt says. The human still can, in their own terminal.
    policy = "".join(
        f'[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "habitus habit {verb}"\n'
        f'decision = "deny"\npriority = 100\n\n'
        for verb in HUMAN_ONLY
    )
    return {
        f"{extension}/gemini-extension.json": _json(manifest),
        f"{extension}/policies/habitus.toml": policy.rstrip("\n") + "\n",
        f"{extension}/hooks/hooks.json": _json(hooks("gemini")),
        f"{extension}/commands/{NAME}/review.toml": review,
    }


# -- Pi --------------------------------------------------------------------------------------------------

PI_MCP = f"""\
/**
 * habitus's MCP server for Pi (generated by scripts/gen_plugins.py): registers `habitus mcp` (an optional
 * extra of habitus) for the session, so the agent can retrieve and retain memory mid-task and read which
 * approved habits apply. Registrations are not saved, so this runs on every load. Without the extra the
 * server fails to start and Pi shows it in /mcp; the session goes on.
 */
import type {{ ExtensionAPI }} from "@earendil-works/pi-coding-agent";

export default function habitusMcp(pi: ExtensionAPI): void {{
\ttry {{
\t\t// Six small tools: declared to the model directly, not behind codemode or tool_search.
\t\tpi.registerMcpServer("{NAME}", {{ command: "{MCP["command"]}", args: {json.dumps(MCP["args"])}, exposure: "direct" }});
\t}} catch {{
\t\t// Pi without MCP support, or the name taken by mcp.json (which then wins): nothing to do.
\t}}
}}
"""


def pi() -> dict[str, str]:
    # The package is the repository itself (package.json at its root), so that `pi install
    # git:github.com/OWNER/habitus` works as it stands and the extension is integrations/pi/habitus.ts,
    # not a copy; the package's own files live in plugins/pi/.
    package = "plugins/pi"
    manifest = {
        "name": "habitus",
        "version": __version__,
        "description": DESCRIPTION,
        "keywords": ["pi-package", *KEYWORDS],
        "license": "Apache-2.0",
        "files": [PI_EXTENSION, f"{package}/", "LICENSE", "README.md"],
        "peerDependencies": {"@earendil-works/pi-coding-agent": "*"},
        "pi": {
            "extensions": [f"./{PI_EXTENSION}", f"./{package}/extensions/habitus-mcp.ts"],
            "prompts": [f"./{package}/prompts/*.md"],
        },
    }
    review = (
        "---\n"
        "description: List habitus's candidate habits with their evidence, and the commands to approve or "
        "reject them yourself\n"
        "---\n"
        f"Run `{LIST}` (read-only; it prints JSON whose `items` are the candidates).\n\n"
        f"{REVIEW_RULES}\n"
    )
    return {
        "package.json": _json(manifest),
        f"{package}/extensions/habitus-mcp.ts": PI_MCP,
        f"{package}/prompts/habitus-review.md": review,
    }


# -- all -------------------------------------------------------------------------------------------------

FOLDERS = ("plugins", ".claude-plugin", ".agents/plugins")


def render_all() -> dict[Path, str]:
    outputs: dict[str, str] = {}
    for part in (claude_code, codex, gemini, pi):
        outputs.update(part())
    return {Path(path): text for path, text in sorted(outputs.items())}


def _existing() -> list[Path]:
    return sorted(
        p.relative_to(REPO) for folder in FOLDERS for p in (REPO / folder).rglob("*") if p.is_file()
    )


def stale_files() -> list[str]:
    """Committed files that differ from what the generator would write now (or should not exist)."""
    outputs = render_all()
    stale = [
        str(p) for p, text in outputs.items() if not (REPO / p).is_file() or (REPO / p).read_text() != text
    ]
    stale += [f"{p} (no longer generated)" for p in _existing() if p not in outputs]
    return stale


def main(argv: list[str]) -> int:
    if "--check" in argv:
        stale = stale_files()
        for path in stale:
            print(f"stale: {path}", file=sys.stderr)
        return 1 if stale else 0
    outputs = render_all()
    for existing in _existing():
        if existing not in outputs:
            (REPO / existing).unlink()
    for path, text in outputs.items():
        (REPO / path).parent.mkdir(parents=True, exist_ok=True)
        (REPO / path).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
