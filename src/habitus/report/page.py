"""`habitus report`: one self-contained HTML page of recent activity and the habit list.

The page carries its CSS and SVG inline and no script; a Content-Security-Policy forbids scripts and
any fetch, so it opens from a file with no server and no network. Every piece of text from the state
is HTML-escaped, and evidence quotes (redacted when they were stored) are checked again with the
redactor: a quote that still looks sensitive is withheld, not shown.
"""

from __future__ import annotations

import os
import stat
import time
from html import escape
from pathlib import Path
from typing import Any

from habitus.errors import HabitusError
from habitus.state.root import StateRoot

SECTIONS = (
    ("active", "Active"),
    ("candidate", "Candidates"),
    ("disabled", "Disabled"),
    ("dormant", "Dormant"),
    ("suppressed_by_law", "Suppressed by the law"),
)
MAX_QUOTES = 20  # per habit; the rest are counted
CHARTS = (
    ("Habits selected", "habits_selected"),
    ("Prompts checked", "selects"),
    ("Notes delivered", "notes_delivered"),
    ("Notes muted", "notes_muted"),
    ("Observations captured", "observations"),
    ("Analyze runs", "analyze_runs"),
    ("Proposals", "proposals"),
)
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
WITHHELD = "[withheld: still looks sensitive]"

CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:60rem;
padding:0 1rem;color:#1b1f24;background:#fff}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{margin-top:2rem;border-bottom:1px solid #d0d7de}
.meta{color:#57606a;font-size:.9rem}.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(20rem,1fr));
gap:.5rem 1.5rem}figure{margin:0}figcaption{font-weight:600;font-size:.95rem}
figcaption .n{font-weight:400;color:#57606a}.chart{display:block;width:100%;height:auto}
.bar{fill:#2f81f7}.axis{stroke:#8c959f}.tick{font-size:10px;fill:#57606a}
.habit{border:1px solid #d0d7de;border-radius:6px;padding:.6rem .9rem;margin:.6rem 0}
.wording{font-weight:600}.tags span{display:inline-block;font-size:.8rem;background:#eaeef2;
border-radius:1rem;padding:0 .5rem;margin-right:.3rem}
blockquote{margin:.3rem 0 .3rem 1rem;color:#424a53;border-left:3px solid #d0d7de;padding-left:.6rem}
@media (prefers-color-scheme:dark){body{color:#e6edf3;background:#0d1117}.habit{border-color:#30363d}
.tags span{background:#30363d}blockquote{color:#9198a1;border-color:#30363d}.meta,.tick{color:#9198a1;fill:#9198a1}}
"""


def collect(root: StateRoot, *, days: int, wait: float, now: float | None = None) -> dict[str, Any]:
    """Activity and the habits with their evidence (one short read transaction each on the ledger)."""
    from habitus import __version__
    from habitus.report.activity import activity

    stamp = time.time() if now is None else now
    habits, archived = _habits(root, wait=wait)
    return {
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp)),
        "version": __version__,
        "root": _display_root(root.path),
        "activity": activity(root, days=days, wait=wait, now=stamp),
        "habits": habits,
        "archived": archived,
    }


def _habits(root: StateRoot, *, wait: float) -> tuple[list[dict[str, Any]], int]:
    """Every habit but archived ones, with stage and re-checked evidence quotes; and the archived count."""
    from habitus.habits import store
    from habitus.state import ledger
    from habitus.state.db import translate

    db = ledger.store(root, wait=wait)
    conn = db.open_current()
    if conn is None:
        return [], 0
    import sqlite3

    try:
        conn.execute("BEGIN")
        found = store.habits(conn)
        stats = store.evidence_stats(conn)
        out = []
        archived = 0
        for habit in found:
            if habit["status"] == "archived":
                archived += 1
                continue
            observations, day_count = stats.get(habit["id"], (0, 0))
            stage = "declared" if habit["origin"] == "declared" else store.stage(observations, day_count)
            quoted = [e for e in store.evidence(conn, habit["id"]) if e["note"]]
            out.append(
                {
                    "id": habit["id"],
                    "status": habit["status"],
                    "origin": habit["origin"],
                    "condition": habit["condition"],
                    "behavior": habit["behavior"],
                    "polarity": habit["polarity"],
                    "confidence_bp": habit["confidence_bp"],
                    "approved": store.is_approved(habit),
                    "stage": stage,
                    "observations": observations,
                    "days": day_count,
                    "quotes": [
                        {"day": e["day"], "actor": e["actor"], "text": _safe(e["note"])}
                        for e in quoted[:MAX_QUOTES]
                    ],
                    "more_quotes": max(0, len(quoted) - MAX_QUOTES),
                }
            )
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise translate(exc, db.path) from None
    finally:
        conn.close()
    return out, archived


def _display_root(path: Path) -> str:
    """The root with the home folder as ~ (the page may be passed around), then redacted like a quote."""
    home = os.environ.get("HOME")
    if home and os.path.isabs(home) and home != "/":
        try:
            path = Path("~") / Path(path).relative_to(home)
        except ValueError:
            pass
    return _safe(str(path))


def _safe(text: str) -> str:
    """Redact again before writing to a file a person may pass around; withhold what still looks sensitive."""
    from habitus.redact import looks_sensitive, redact

    clean, _ = redact(text)
    return WITHHELD if looks_sensitive(clean) else clean


def render(data: dict[str, Any]) -> str:
    """The page as one string."""
    from habitus.report.svg import bar_chart

    act = data["activity"]
    days = [row["day"] for row in act["series"]]
    e = escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{e(CSP)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>habitus report {e(data['generated_at'][:10])}</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>habitus report</h1>",
        f'<p class="meta" id="generated">Generated {e(data["generated_at"])} by habitus {e(data["version"])}'
        f" from {e(data['root'])}.</p>",
        f'<h2 id="activity">Last {act["days"]} days <span class="meta">({e(act["since"])} to {e(act["until"])}, UTC)</span></h2>',
    ]
    totals = act["totals"]
    out.append('<div class="charts">')
    for label, key in CHARTS:
        out.append(
            f'<figure><figcaption>{e(label)} <span class="n" data-total="{e(key)}">{totals[key]} in all</span>'
            "</figcaption>"
        )
        out.append(bar_chart(label, key, days, [row[key] for row in act["series"]]))
        out.append("</figure>")
    out.append("</div>")
    if not act["sources"].get("mutes", True):
        out.append(
            f'<p class="meta">mutes.json is unreadable: {e(str(act["sources"].get("mutes_problem")))}</p>'
        )

    out.append('<h2 id="habits">Habits</h2>')
    if not data["habits"]:
        out.append(
            '<p class="meta">No habits yet: `habitus analyze` proposes candidates, `habitus habit declare` adds one.</p>'
        )
    for status, title in SECTIONS:
        group = [h for h in data["habits"] if h["status"] == status]
        if not group:
            continue
        out.append(f'<h3 id="section-{e(status)}">{e(title)} ({len(group)})</h3>')
        for habit in group:
            out.append(_habit(habit))
    if data["archived"]:
        out.append(f'<p class="meta">{data["archived"]} archived habits are not shown.</p>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _habit(habit: dict[str, Any]) -> str:
    e = escape
    tags = [
        habit["status"].replace("_", " "),
        habit["stage"],
        habit["origin"],
        *(["avoid"] if habit["polarity"] == -1 else []),
        f"confidence {habit['confidence_bp'] / 100:.0f}%",
        f"{habit['observations']} observations over {habit['days']} days",
    ]
    if habit["status"] == "active" and not habit["approved"]:
        tags.append("wording changed since approval")
    parts = [
        f'<div class="habit" id="{e(habit["id"])}" data-status="{e(habit["status"])}">',
        f'<div class="wording"><span class="condition">{e(habit["condition"])}</span> '
        f'&rarr; <span class="behavior">{e(habit["behavior"])}</span></div>',
        '<div class="tags">'
        + "".join(f"<span>{e(t)}</span>" for t in tags)
        + f" <code>{e(habit['id'])}</code></div>",
    ]
    for quote in habit["quotes"]:
        parts.append(
            f'<blockquote class="quote"><span class="meta">{e(quote["day"])}</span> {e(quote["text"])}</blockquote>'
        )
    if habit["more_quotes"]:
        parts.append(
            f'<p class="meta">and {habit["more_quotes"]} more quotes (`habitus habit show {e(habit["id"])}`).</p>'
        )
    parts.append("</div>")
    return "\n".join(parts)


# -- writing ------------------------------------------------------------------------------------------


def check_target(root: StateRoot, out: Path) -> Path:
    """The absolute path to write: never inside the state root, never a symlink, folder or special
    file, in a folder that exists. Checked before anything is read, so a refusal writes nothing."""
    from habitus.state import files

    target = Path(os.path.abspath(out))
    files.refuse_symlink(target)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise HabitusError("io_error", f"{target}: {exc.strerror}") from None
    if st is not None:
        files.check_regular(target, st)
    parent = target.parent
    try:
        parent_st = os.stat(parent)
    except OSError as exc:
        raise HabitusError(
            "io_error", f"--out: {parent}: {exc.strerror}", hint="create the folder first"
        ) from None
    if not stat.S_ISDIR(parent_st.st_mode):
        raise HabitusError("io_error", f"--out: {parent} is not a folder")
    state = Path(os.path.realpath(root.path))
    real_parent = Path(os.path.realpath(parent))
    if real_parent == state or state in real_parent.parents:
        raise HabitusError(
            "bad_request", f"--out: {target} is inside the state root; write the report elsewhere"
        )
    return target


def write(target: Path, text: str) -> int:
    """Write the page atomically (temp file 0600, fsync, rename); returns its size in bytes."""
    from habitus.state import files

    data = text.encode("utf-8")
    files.atomic_write(target, data)
    return len(data)
