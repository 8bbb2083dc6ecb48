"""habitus eval memory: recall@k and MRR of memory retrieve on labelled memories and queries."""

from __future__ import annotations

from pathlib import Path

import click

from habitus import io
from habitus.dispatch import StateCommand
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read.",
    "stdout": '{"v":1,"memories","k","hybrid","vectors","queries","found","recall_at_k","mrr",'
    '"categories":{CATEGORY:{"queries","found","recall_at_k","mrr"}},"langs":{LANG:{...}},"modes",'
    '"misses":[{"id","category","lang","expected","got"}]}. A query is found when one of its expected '
    "memories is in the top k; its reciprocal rank is that of the first expected memory in the top 20.",
    "files": "Reads the memories and queries files, config.toml (embed.model) and the embedding model. "
    "Writes only a temporary store, removed afterwards.",
}


@click.command(cls=StateCommand)
@click.option(
    "--memories",
    "memories_path",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help='Memories, JSON lines {"id","content","kind","tags"} (kind and tags optional).',
)
@click.option(
    "--queries",
    "queries_path",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help='Queries, JSON lines {"id","query","expected":[memory ids],"category","lang"}.',
)
@click.option("-k", "--top", "k", type=click.IntRange(1, 20), default=5, show_default=True,
              help="A query is found when an expected memory is in this many first results.")  # fmt: skip
@click.option(
    "--hybrid/--no-hybrid",
    default=None,
    help="Force hybrid ranking on or off (default: what `memory retrieve` with no flags does).",
)
@state_options
@output_options
def cli(
    memories_path: Path,
    queries_path: Path,
    k: int,
    hybrid: bool | None,
    root: StateRoot,
    wait: float,
    pretty: bool,
) -> None:
    """Measure memory retrieve: recall@k and MRR by category and language.

    The memories go into a fresh temporary store through the retain path and
    get their vectors; each query then runs as `habitus memory retrieve QUERY`
    with no flags. Nothing is written to the state root.

    \b
    Example:
      habitus eval memory --memories tests/fixtures/memory/memories.jsonl \\
          --queries tests/fixtures/memory/queries.jsonl --pretty
    """
    from habitus.memory import evaluate

    memories = evaluate.load_memories(memories_path)
    queries = evaluate.load_queries(queries_path, {m["id"] for m in memories})
    io.write_result(evaluate.evaluate(root, memories, queries, k=k, hybrid=hybrid), pretty=pretty)
