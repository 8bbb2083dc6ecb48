"""habitus eval: measure a capability on a labelled set (precision, recall, confusion table).

Each subcommand lives in its own module (commands/eval_<name>.py) and is loaded only when it runs.
"""

from __future__ import annotations

import click

from habitus.lazygroup import LazyGroup

# name -> (module, one-line help); the help is repeated so `habitus eval --help` imports nothing.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "advise": (
        "habitus.commands.eval_advise",
        "Measure the local advise reviewer: precision, recall, misses by category.",
    ),
    "analyze": ("habitus.commands.eval_analyze", "Measure the local analyzer on labelled conversations."),
    "memory": (
        "habitus.commands.eval_memory",
        "Measure memory retrieve: recall@k and MRR by category and language.",
    ),
    "select": (
        "habitus.commands.eval_select",
        "Measure the select judge: precision, recall, confusion by category.",
    ),
}


@click.group(cls=LazyGroup, table=SUBCOMMANDS)
def cli() -> None:
    """Measure habitus on a labelled set: precision, recall and a confusion table.

    Labelled sets are JSON lines; each subcommand documents its format.

    \b
    Example:  habitus eval select --cases tests/fixtures/select/cases.jsonl
    """
