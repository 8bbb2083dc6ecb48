#!/usr/bin/env python3
"""Generate man pages (man/) and shell completions (completions/) from the click command tree.

    python scripts/gen_docs.py          # rewrite man/ and completions/
    python scripts/gen_docs.py --check  # exit 1 when a committed file is stale

Output is deterministic (no dates), so the committed files change only when the commands do.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from typing import Any

import click

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from habitus import __version__  # noqa: E402
from habitus.cli import COMMANDS, root  # noqa: E402
from habitus.errors import CODES, Exit  # noqa: E402

ENVIRONMENT = [
    ("HABITUS_HOME", "The state root, when --root is not given."),
    (
        "XDG_DATA_HOME",
        "When neither --root nor HABITUS_HOME is set, the state root is $XDG_DATA_HOME/habitus "
        "(default ~/.local/share/habitus).",
    ),
    ("HABITUS_DEBUG", "When set, an internal error also prints a Python traceback on stderr."),
    (
        "NO_COLOR",
        "When set and not empty, tables, errors and progress bars on a terminal are drawn without colour.",
    ),
    (
        "TERM",
        "dumb: no colour and no cursor movement on a terminal. Off a terminal (a pipe, a file, a hook) "
        "habitus writes JSON whatever it says.",
    ),
]

EXIT_MEANINGS = {
    Exit.OK: "success",
    Exit.FAILED: "failed: bad data, I/O, a model that failed; or a report-only check found issues",
    Exit.USAGE: "usage: bad command line or request",
    Exit.REFUSED: "refused, fails closed: state from a newer version, corrupt or tampered state, checksum "
    "mismatch, stale review",
    Exit.BUSY: "busy: a lock was not acquired within --wait",
    Exit.INTERRUPTED: "interrupted",
}

DEFAULT_MAN = {
    "stdin": "One JSON request object (empty or a terminal means {}); see DESCRIPTION.",
    "stdout": 'One JSON result object with "v": 1, or nothing on failure.',
    "files": "The state root (see habitus(1)).",
}


# -- the command tree --------------------------------------------------------------------------


def command_tree() -> list[tuple[list[str], click.Command]]:
    """(path, command) for the root, every top-level command, and every subcommand, in order."""
    ctx = click.Context(root, info_name="habitus")
    nodes: list[tuple[list[str], click.Command]] = [([], root)]

    def walk(path: list[str], command: click.Command) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is None or sub.hidden:
                    continue
                nodes.append(([*path, name], sub))
                walk([*path, name], sub)

    walk([], root)
    return nodes


def module_man(name: str) -> dict[str, str]:
    module_name = COMMANDS[name][0].partition(":")[0]
    module = importlib.import_module(module_name)
    man = dict(DEFAULT_MAN)
    if not module_name.endswith(".stubs"):
        man.update(getattr(module, "MAN", {}))
    return man


def split_help(text: str) -> tuple[list[str], list[str]]:
    """Split a docstring into description paragraphs and example lines."""
    description: list[str] = []
    examples: list[str] = []
    in_examples = False
    for raw in (text or "").splitlines():
        line = raw.rstrip()
        if line.strip() == "\b":
            continue
        match = re.match(r"^\s*Examples?:\s*(.*)$", line)
        if match:
            in_examples = True
            if match.group(1):
                examples.append(match.group(1).strip())
            continue
        if in_examples:
            if line.strip():
                examples.append(line.strip())
                continue
            in_examples = False
        description.append(line.strip())
    paragraphs = "\n".join(description).strip().split("\n\n")
    return [" ".join(p.split()) for p in paragraphs if p.strip()], examples


def params(command: click.Command) -> list[click.Parameter]:
    return [p for p in command.params if not getattr(p, "hidden", False)]


def option_rows(command: click.Command) -> list[tuple[str, str]]:
    ctx = click.Context(command, info_name=command.name)
    rows = []
    for param in params(command):
        if not isinstance(param, click.Option):
            continue
        record = param.get_help_record(ctx)
        if record:
            rows.append(record)
    rows.append(("-h, --help", "Show the help and exit."))
    return rows


def usage(path: list[str], command: click.Command) -> str:
    ctx = click.Context(command, info_name=" ".join(["habitus", *path]))
    return " ".join(["habitus", *path, *command.collect_usage_pieces(ctx)])


# -- man pages ---------------------------------------------------------------------------------


def roff(text: str) -> str:
    text = text.replace("\\", "\\\\").replace("-", "\\-")
    lines = []
    for line in text.splitlines() or [""]:
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def man_page(name: str | None, nodes: list[tuple[list[str], click.Command]]) -> str:
    if name is None:
        command: click.Command = root
        title, page = "HABITUS", "habitus"
        man = {
            "stdin": "Each command reads one JSON request object (empty stdin or a terminal means {}); "
            "with --nl, one object per line. Requests larger than 8 MiB are refused (request_too_large). "
            "Unknown keys are ignored so that commands compose in pipes.",
            "stdout": 'JSON only: one result object with "v": 1 and a newline (one per line with --nl); '
            "--pretty indents it. Progress and colour go to stderr, and only to a terminal. On failure stdout "
            'stays empty and stderr gets one line: {"error": {"code", "message", "exit", "hint"}}.',
            "files": "The state root holds config.toml, ledger.sqlite, memory.sqlite, observations/, law.md, "
            "models/, errors.jsonl and locks/. Folders are 0700, files 0600; symlinked state files are refused.",
        }
        subs = [(p, c) for p, c in nodes if len(p) == 1]
    else:
        command = next(c for p, c in nodes if p == [name])
        title, page = f"HABITUS-{name.upper()}", f"habitus-{name}"
        man = module_man(name)
        subs = [(p, c) for p, c in nodes if len(p) == 2 and p[0] == name]
    description, examples = split_help(command.help or "")
    out = [
        f'.TH {title} 1 "" "habitus {__version__}" "habitus manual"',
        ".SH NAME",
        f"{page} \\- {roff(command.get_short_help_str(200))}",
        ".SH SYNOPSIS",
        ".nf",
        roff(usage([] if name is None else [name], command)),
        ".fi",
        ".SH DESCRIPTION",
    ]
    for paragraph in description:
        out += [roff(paragraph), ".PP"]
    if out[-1] == ".PP":
        out.pop()
    if hooks_note := _hook_note(command):
        out += [".PP", roff(hooks_note)]
    if subs:
        out.append(".SH COMMANDS")
        for path, sub in subs:
            out += [".TP", f"\\fB{roff(' '.join(path))}\\fR", roff(sub.get_short_help_str(200))]
    out.append(".SH OPTIONS")
    for opts, text in option_rows(command):
        out += [".TP", f"\\fB{roff(opts)}\\fR", roff(text)]
    for path, sub in subs:
        sub_description, sub_examples = split_help(sub.help or "")
        out += [f".SS {roff(' '.join(['habitus', *path]))}", ".nf", roff(usage(path, sub)), ".fi"]
        for paragraph in sub_description:
            out += [".PP", roff(paragraph)]
        for opts, text in option_rows(sub):
            out += [".TP", f"\\fB{roff(opts)}\\fR", roff(text)]
        examples += sub_examples
    out += [".SH STDIN", roff(man["stdin"]), ".SH STDOUT", roff(man["stdout"])]
    human = _human_forms(name, subs)
    if human:
        out += [".PP", roff(human)]
    out += [".SH EXIT STATUS"]
    for status, meaning in EXIT_MEANINGS.items():
        out += [".TP", f"\\fB{int(status)}\\fR", roff(meaning)]
    out += [".PP", "Error codes (the \\fBcode\\fR field of the error object on stderr):"]
    for code, (status, meaning) in CODES.items():
        out += [".TP", f"\\fB{roff(code)}\\fR ({int(status)})", roff(meaning)]
    out += [".SH FILES", roff(man["files"]), ".SH ENVIRONMENT"]
    for var, text in ENVIRONMENT:
        out += [".TP", f"\\fB{var}\\fR", roff(text)]
    if examples:
        out += [".SH EXAMPLES", ".nf"]
        out += [roff(e) for e in examples]
        out.append(".fi")
    see_also = ["habitus(1)"] if name else [f"habitus-{p[0]}(1)" for p, _ in subs]
    out += [".SH SEE ALSO", roff(", ".join(see_also))]
    return "\n".join(out) + "\n"


def _human_forms(name: str | None, subs: list[tuple[list[str], click.Command]]) -> str:
    """The sentence naming which of these commands print for a person on a terminal (habitus.render)."""
    from habitus.render import RENDERERS

    if name is None:
        return ""  # the root page: each command's own page says
    paths = [[name], *(p if p[:1] == [name] else [name, *p] for p, _ in subs)]
    shown = sorted({" ".join(p) for p in paths if ".".join(p) in RENDERERS})
    if not shown:
        return ""
    which = " and ".join(f"habitus {s}" for s in shown)
    verb = "prints" if len(shown) == 1 else "print"
    return (
        f"On a terminal (stdout a TTY, neither --json nor --pretty given, not a hook) {which} {verb} a "
        "table or summary for a person instead; anywhere else, or with --json, the JSON above."
    )


def _hook_note(command: click.Command) -> str:
    if any(p.name == "harness" for p in command.params):
        return (
            "With --harness, input and output follow that harness's hook protocol, and every failure exits 0 "
            "with no output (nothing injected, nothing blocked); the error is appended to <root>/errors.jsonl."
        )
    return ""


# -- completions -------------------------------------------------------------------------------


def completion_model(nodes: list[tuple[list[str], click.Command]]) -> dict[str, dict[str, Any]]:
    """node path ('' for root, 'config', 'config get') -> subcommands, options, option choices."""
    model: dict[str, dict[str, Any]] = {}
    for path, command in nodes:
        opts: list[str] = ["--help"]
        takes_value: list[str] = []
        choices: dict[str, list[str]] = {}
        for param in params(command):
            if isinstance(param, click.Option):
                names = [*param.opts, *param.secondary_opts]
                opts += names
                if not param.is_flag:
                    takes_value += param.opts
                    if isinstance(param.type, click.Choice):
                        for opt in param.opts:
                            choices[opt] = [str(c) for c in param.type.choices]
        if command is root:
            opts += ["--version"]
        subs = [p[-1] for p, _ in nodes if len(p) == len(path) + 1 and p[: len(path)] == path]
        model[" ".join(path)] = {
            "subs": subs,
            "opts": sorted(set(opts)),
            "takes_value": sorted(set(takes_value)),
            "choices": choices,
            "help": {p[-1]: c.get_short_help_str(80) for p, c in nodes if p[:-1] == path and p},
        }
    return model


def bash_completion(model: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# bash completion for habitus (generated by scripts/gen_docs.py; do not edit)",
        "_habitus() {",
        '    local cur prev node="" word i',
        '    cur="${COMP_WORDS[COMP_CWORD]}"',
        '    prev="${COMP_WORDS[COMP_CWORD-1]}"',
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        word="${COMP_WORDS[i]}"',
        '        case "$node|$word" in',
    ]
    for node, entry in model.items():
        for sub in entry["subs"]:
            child = f"{node} {sub}".strip()
            lines.append(f'            "{node}|{sub}") node="{child}" ;;')
    lines += ["        esac", "    done", '    case "$node|$prev" in']
    for node, entry in model.items():
        for opt, values in entry["choices"].items():
            lines.append(
                f'        "{node}|{opt}") COMPREPLY=($(compgen -W "{" ".join(values)}" -- "$cur")); return ;;'
            )
        for opt in entry["takes_value"]:
            if opt not in entry["choices"]:
                lines.append(f'        "{node}|{opt}") COMPREPLY=($(compgen -f -- "$cur")); return ;;')
    lines += ["    esac", '    case "$node" in']
    for node, entry in model.items():
        words = " ".join(entry["subs"] + entry["opts"])
        lines.append(f'        "{node}") COMPREPLY=($(compgen -W "{words}" -- "$cur")) ;;')
    lines += ["    esac", "}", "complete -o default -F _habitus habitus", ""]
    return "\n".join(lines)


def zsh_completion(model: dict[str, dict[str, Any]]) -> str:
    lines = [
        "#compdef habitus",
        "# zsh completion for habitus (generated by scripts/gen_docs.py; do not edit)",
        "_habitus() {",
        '    local node="" word prev i',
        "    local -a candidates",
        "    for ((i = 2; i < CURRENT; i++)); do",
        '        word="${words[i]}"',
        '        case "$node|$word" in',
    ]
    for node, entry in model.items():
        for sub in entry["subs"]:
            child = f"{node} {sub}".strip()
            lines.append(f'            "{node}|{sub}") node="{child}" ;;')
    lines += ["        esac", "    done", '    prev="${words[CURRENT-1]}"', '    case "$node|$prev" in']
    for node, entry in model.items():
        for opt, values in entry["choices"].items():
            lines.append(f'        "{node}|{opt}") compadd -- {" ".join(values)}; return ;;')
        for opt in entry["takes_value"]:
            if opt not in entry["choices"]:
                lines.append(f'        "{node}|{opt}") _files; return ;;')
    lines += ["    esac", '    case "$node" in']
    for node, entry in model.items():
        described = [f"'{sub}:{_zsh_quote(entry['help'][sub])}'" for sub in entry["subs"]]
        lines.append(f'        "{node}")')
        if described:
            lines.append(f"            candidates=({' '.join(described)})")
            lines.append("            _describe 'command' candidates")
        lines.append(f"            compadd -- {' '.join(entry['opts'])} ;;")
    lines += ["    esac", "}", '_habitus "$@"', ""]
    return "\n".join(lines)


def _zsh_quote(text: str) -> str:
    return text.replace("'", "'\\''").replace(":", "\\:")


def fish_completion(model: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# fish completion for habitus (generated by scripts/gen_docs.py; do not edit)",
        "function __habitus_node",
        "    set -l node ''",
        "    for word in (commandline -opc)[2..-1]",
        '        switch "$node|$word"',
    ]
    for node, entry in model.items():
        for sub in entry["subs"]:
            child = f"{node} {sub}".strip()
            lines += [f"            case '{node}|{sub}'", f"                set node '{child}'"]
    lines += ["        end", "    end", "    echo $node", "end", "complete -c habitus -f"]
    for node, entry in model.items():
        cond = f"test (__habitus_node) = '{node}'"
        for sub in entry["subs"]:
            help_text = entry["help"][sub].replace("'", "\\'")
            lines.append(f"complete -c habitus -n \"{cond}\" -a {sub} -d '{help_text}'")
        for opt in entry["opts"]:
            if not opt.startswith("--"):
                continue
            flag = f"-l {opt[2:]}"
            if opt in entry["choices"]:
                flag += f" -x -a '{' '.join(entry['choices'][opt])}'"
            elif opt in entry["takes_value"]:
                flag += " -r"
            lines.append(f'complete -c habitus -n "{cond}" {flag}')
    return "\n".join(lines) + "\n"


# -- main --------------------------------------------------------------------------------------


def render_all() -> dict[Path, str]:
    nodes = command_tree()
    outputs: dict[Path, str] = {Path("man/habitus.1"): man_page(None, nodes)}
    for path, _ in nodes:
        if len(path) == 1:
            outputs[Path(f"man/habitus-{path[0]}.1")] = man_page(path[0], nodes)
    model = completion_model(nodes)
    outputs[Path("completions/habitus.bash")] = bash_completion(model)
    outputs[Path("completions/_habitus")] = zsh_completion(model)
    outputs[Path("completions/habitus.fish")] = fish_completion(model)
    return outputs


def stale_files() -> list[str]:
    """Committed files that differ from what the generator would write now (or should not exist)."""
    outputs = render_all()
    stale = [
        str(p) for p, text in outputs.items() if not (REPO / p).is_file() or (REPO / p).read_text() != text
    ]
    for folder in ("man", "completions"):
        for existing in sorted((REPO / folder).glob("*")):
            if existing.relative_to(REPO) not in outputs:
                stale.append(f"{existing.relative_to(REPO)} (no longer generated)")
    return stale


def main(argv: list[str]) -> int:
    if "--check" in argv:
        stale = stale_files()
        for path in stale:
            print(f"stale: {path}", file=sys.stderr)
        return 1 if stale else 0
    outputs = render_all()
    for folder in ("man", "completions"):
        for existing in (REPO / folder).glob("*"):
            if existing.relative_to(REPO) not in outputs:
                existing.unlink()
    for path, text in outputs.items():
        (REPO / path).parent.mkdir(parents=True, exist_ok=True)
        (REPO / path).write_text(text)
    print(f"wrote {len(outputs)} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
