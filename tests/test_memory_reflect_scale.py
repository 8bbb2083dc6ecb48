"""reflect at scale: the all-pairs judgements equal the pairwise ones, and large runs say how they judged."""

from __future__ import annotations

import random
from pathlib import Path

from habitus.memory import semantic, text
from memory_helpers import mem


def brute(sets: list[set[str]], threshold: float) -> list[set[int]]:
    out: list[set[int]] = [set() for _ in sets]
    for i, a in enumerate(sets):
        for j, b in enumerate(sets):
            if i != j and a and b and len(a & b) >= threshold * len(a | b) - 1e-9:
                out[i].add(j)
    return out


def test_similar_pairs_at_scale_stays_linear_and_still_groups_exact_repeats() -> None:
    common = [f"c{i}" for i in range(6)]
    sets = [set(common) | {f"r{i}"} for i in range(text.COMMON * 3)] + [set(common)] * 4
    found = text.similar_pairs(sets, 0.6)
    # every set shares 6 of 7 words with every other, but only through words too common to propose
    # pairs: none is compared, except the exact repeats, paired with the first of their words
    assert all(not found[i] for i in range(text.COMMON * 3))
    head = text.COMMON * 3
    assert found[head] == {head + 1, head + 2, head + 3} and found[head + 2] == {head}


def test_similar_pairs_finds_exactly_the_pairs_a_full_comparison_finds() -> None:
    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(40)]
    for _ in range(30):
        sets = [set(rng.sample(vocabulary, rng.randint(0, 7))) for _ in range(rng.randint(2, 90))]
        sets += [set(s) for s in rng.sample(sets, 3)]  # exact repeats
        for threshold in (0.5, 0.6, 0.8, 1.0):
            found, expected = text.similar_pairs(sets, threshold), brute(sets, threshold)
            # all pairs are found (no word is common in sets this few), exact repeats included
            assert found == expected


def test_measure_neighbours_agree_with_the_pairwise_judgements(state_root: Path) -> None:
    from habitus.models.embedders import load_embedder
    from habitus.state.root import StateRoot

    texts = [
        "create a custom theme and open it with the code command",
        "make a custom colour theme, then open it in the editor with code",
        "write some markdown in chat",
        "please write some markdown in the chat window",
        "the deploy runs on tuesdays",
        "use the dark theme",
    ]
    for measure in (text.WORDS, semantic.EmbeddingMeasure(load_embedder(StateRoot.at(str(state_root))))):
        for judgement, pairwise in (("same", measure.same), ("related", measure.related)):
            found = measure.neighbours(texts, judgement)
            for i, a in enumerate(texts):
                assert found[i] == {j for j, b in enumerate(texts) if j != i and pairwise(a, b)}, (
                    judgement,
                    a,
                )


def test_a_run_over_more_texts_than_it_embeds_says_it_judged_by_words(state_root: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(semantic.EmbeddingMeasure, "MAX_EMBED", 3)
    messages = [{"role": "user", "text": f"I prefer the {word} theme for every editor window"}
                for word in ("dark", "light", "blue", "green", "solarized")]  # fmt: skip
    assert mem("observe", request={"stream": "s", "messages": messages}).result["observed"] == 5
    result = mem("reflect", "--stream", "s").result
    assert result["similarity"] == "words+embeddings" and result["similarity_limited"] is True
    assert result["reflected"] >= 1 and result["considered"] == 5
    small = mem("observe", request={"stream": "t", "messages": messages[:2]})
    assert small.exit == 0 and "similarity_limited" not in mem("reflect", "--stream", "t").result
