"""Calibrate the local analyzer's clustering threshold on the labelled conversations.

    .venv/bin/python scripts/calibrate_analyze.py [LABELS.json ...]
    (default: tests/fixtures/analyze/labels.json tests/fixtures/analyze_heldout/labels.json;
     never the blind set, tests/fixtures/analyze_blind/, which is measured once, not tuned on)

For every pair of correction groups (habitus.learn.local) from two different observations of one
conversation, at least one of them cited by a labelled habit: a positive when both are evidence of the
same labelled habit, a negative otherwise. It prints how many positives and negatives reach each
threshold for each weight of the shared distinctive terms, scoring pairs exactly as the analyzer does
(`local._scores`: the best over the gists of the whole correction and of its first request), and the
setting in force. Pairs are counted, not clusters: the analyzer links clusters transitively.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from habitus.learn import gist as gists  # noqa: E402
from habitus.learn import local  # noqa: E402
from habitus.learn.evaluate import keywords_match, load_labels  # noqa: E402
from habitus.models.embedders import load_embedder  # noqa: E402
from habitus.state.root import StateRoot  # noqa: E402

DEFAULT = [REPO / "tests/fixtures/analyze/labels.json", REPO / "tests/fixtures/analyze_heldout/labels.json"]
WEIGHTS = (0.0, 0.2, 0.3, 0.4, 0.5)
THRESHOLDS = tuple(range(4000, 7001, 500))


def records(path: Path) -> list[dict]:
    out = []
    for seq, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        row = json.loads(line)
        payload = {k: row[k] for k in ("user", "assistant", "session")} | {"user_at": row["at"]}
        out.append({"gen": 1, "seq": seq, "checksum": "x", "at": row["at"], "payload": payload})
    return out


def pairs(
    labels_path: Path, vectors: local.Vectors
) -> list[tuple[bool, list[tuple[float, frozenset, frozenset]]]]:
    """(same habit?, [(cosine, terms a, terms b) for each pair of views]) for each labelled pair."""
    out = []
    for conversation in load_labels(labels_path)["conversations"]:
        if conversation.get("transcript_format"):
            continue  # real sessions are labelled by quotes, not by the timestamps pairs are built from
        rows = records(labels_path.parent / conversation["file"])
        observations = [local.observation(i, r) for i, r in enumerate(rows)]
        readings = [local._read(observations, i) for i in range(len(observations))]
        links = local._link_rejections(observations, readings)
        for i in links:
            readings[i] = local._read(observations, i, after_rejection=True)
        groups = [g for g in local._groups(observations, readings, links) if g.friction]
        habits = conversation["habits"]

        def habit(group: local.Group, rows: list[dict] = rows, habits: list[dict] = habits) -> int | None:
            at = rows[group.observation]["at"]
            found = [k for k, h in enumerate(habits) if at in h["evidence_ats"]]
            if len(found) > 1:  # one message, two habits: the one whose keywords it carries
                found = [
                    k for k in found if any(keywords_match([w], group.gist) for w in habits[k]["keywords"])
                ]
            return found[0] if found else None

        views = [(g, text, terms) for g, group in enumerate(groups) for text, terms in group.views()]
        matrix = vectors.of([text for _, text, _ in views])
        cosine = matrix @ matrix.T
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                if groups[a].observation == groups[b].observation:
                    continue
                ha, hb = habit(groups[a]), habit(groups[b])
                if ha is None and hb is None:
                    continue
                found = [
                    (float(cosine[i, j]), views[i][2], views[j][2])
                    for i in range(len(views))
                    for j in range(len(views))
                    if views[i][0] == a and views[j][0] == b
                ]
                out.append((ha is not None and ha == hb, found))
    return out


def main(argv: list[str]) -> None:
    paths = [Path(a) for a in argv] or DEFAULT
    if any("analyze_blind" in str(p) or "fixtures/blind" in str(p) for p in paths):
        sys.exit("the blind set is measured, never calibrated on")
    with tempfile.TemporaryDirectory() as folder:
        root = StateRoot.at(Path(folder) / "state")
        root.ensure()
        vectors = local.Vectors(load_embedder(root))
        found = [p for path in paths for p in pairs(path, vectors)]
    positives = sum(same for same, _ in found)
    print(f"{positives} positive and {len(found) - positives} negative pairs of corrections")
    print("weight " + " ".join(f"{t:>9}" for t in THRESHOLDS) + "   (positives/negatives at or above)")
    for weight in WEIGHTS:
        cells = []
        for threshold in THRESHOLDS:
            scored = [
                (same, max((c + weight * gists.shared(ta, tb)) * 10_000 for c, ta, tb in views))
                for same, views in found
            ]
            pos = sum(1 for same, s in scored if same and s >= threshold)
            neg = sum(1 for same, s in scored if not same and s >= threshold)
            cells.append(f"{pos:>4}/{neg:<4}")
        print(f"{weight:>6} " + " ".join(cells))
    print(f"in force: LEXICAL_WEIGHT {local.LEXICAL_WEIGHT}, CLUSTER_BP {local.CLUSTER_BP}")


if __name__ == "__main__":
    main(sys.argv[1:])
