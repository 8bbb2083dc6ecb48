"""habitus memory: retain, recall, retrieve, remove, pin, index, verify, repair, export and import memories."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any, cast

import click

from habitus import codec, io
from habitus.commands.memory_common import (
    STORE_CHOICE,
    each_by_id,
    merge,
    open_store,
    requests,
    store_option,
)
from habitus.dispatch import ReportCommand, StateCommand, StateGroup
from habitus.errors import HabitusError, bad_request
from habitus.options import harness_option, output_options, state_options, stream_options
from habitus.state.clock import utc_now
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Each subcommand reads one request object whose keys are its option names with underscores "
    '(for example {"content": "Use uv", "kind": "decision", "tags": ["python"]} for retain, or '
    '{"query": "uv", "kind": ["decision"], "limit": 5, "hybrid": true} for retrieve); options given on the '
    "command line win. When the positional argument (CONTENT, ID, QUERY) is given, stdin is not read. "
    "import reads JSON lines (one record per line) from FILE or stdin. index --harness and observe "
    "--harness read the harness's hook event. observe reads "
    '{"stream", "start", "messages": [{"role", "text", "at", "tool", "error"}]}, or nothing with --transcript.',
    "stdout": 'retain: {"v":1,"store","created","restored","memory"}. recall: {"v":1,"store","memory"|null}. '
    'retrieve: {"v":1,"total","items","mode","limit","offset","stores"}; over 50 KiB a summary with '
    '"truncated":true; with --hybrid also "hybrid":{"model","used"}, per store stores.NAME.hybrid '
    '{"used","computed","missing","reason","hint"}, and items with "score","bm25","similarity". remove: '
    '{"v":1,"store","id","removed","purged","memory"}. pin/unpin: {"v":1,"store","id","pinned","changed"}. '
    'index: {"v":1,"text","chars","budget","rows",...}, or in hook mode the harness\'s context-injection '
    "object (nothing when there is nothing to inject). index-vectors: "
    '{"v":1,"store","path","model","computed","stale_replaced","missing"}. verify: '
    '{"v":1,"ok","issues":[{"code","count","ids"}],...} (exit 1 when issues). export: JSON lines, one '
    'canonical record each, or with --out {"v":1,"path","count"}. import: {"v":1,"store","imported"}. '
    'trust: {"v":1,"path","trusted","changed"}. '
    'observe: {"v":1,"store","stream","observer","observed","duplicates","dropped_sensitive",'
    '"dropped_instruction","items",'
    '"remaining","watermark":{"before","after"},"unit"} (nothing in hook mode). reflect: {"v":1,"store",'
    '"stream","reflector","similarity","reflected","dropped_sensitive","dropped_instruction","items","considered","watermark"}. '
    'prune: {"v":1,"store","stream","dropper","similarity","budget","before_tokens","after_tokens",'
    '"within_budget","passes","dropped"}.',
    "files": "<root>/memory.sqlite (global store) and <repo>/.habitus/memory.sqlite (project store of the "
    "git repository around the current directory; its folder gets a .gitignore of *). A project store is "
    "read by index, retrieve and recall only when <root>/memory-trust.json trusts it: habitus trusts the "
    "stores it creates, `memory trust` the others (untrusted: index leaves it out, --both skips it, "
    "--store project is refused with untrusted). recall, retrieve, "
    "index, verify and export never create or migrate a store (retrieve --hybrid adds the vectors it "
    "computes to an existing one). Reads config.toml (memory.*, embed.model, models.NAME with "
    "memory.model).",
}


@click.group(cls=StateGroup)
def cli() -> None:
    """Retain, recall and retrieve durable memories.

    Two stores: global (<root>/memory.sqlite) and project (<repo>/.habitus/memory.sqlite,
    the git repository around the current directory). A record is identified by (store, id).
    Removal is soft (retain with the id restores it) unless --purge is given.

    \b
    Examples:
      habitus memory retain "Use uv, never pip, in this repo" --kind decision --store project
      habitus memory retrieve "uv OR pip" --both --limit 5
      habitus memory index --harness claude-code   # SessionStart hook: inject the index
    """


@cli.command("retain")
@click.argument("content", required=False)
@click.option(
    "--id",
    "memory_id",
    metavar="ID",
    help="Patch (and restore) this existing record instead of creating one.",
)
@click.option("--kind", help="note, decision, preference, fact, instruction, observation or reflection.")
@click.option(
    "--scope",
    type=STORE_CHOICE,
    help="Record scope; must match the store (it picks the store when --store is not given).",
)
@click.option("--namespace", help="Lowercase kebab-case slug (default: default).")
@click.option("--tags", help="Comma-separated slugs; replaces the record's tags.")
@click.option("--importance", type=float, help="0..1 (default 0.5).")
@click.option("--confidence", type=float, help="0..1 (default 1).")
@click.option("--relevance", help="For observations: low, medium, high or critical.")
@click.option(
    "--expires-at", metavar="TIMESTAMP", help="Expiry like 2030-01-01T00:00:00.000Z, or none to clear it."
)
@click.option("--metadata", metavar="JSON", help="A JSON object; replaces the record's metadata.")
@store_option
@state_options
@stream_options
@output_options
def retain_command(
    content: str | None,
    memory_id: str | None,
    kind: str | None,
    scope: str | None,
    namespace: str | None,
    tags: str | None,
    importance: float | None,
    confidence: float | None,
    relevance: str | None,
    expires_at: str | None,
    metadata: str | None,
    store: str | None,
    root: StateRoot,
    wait: float,
    nl: bool,
    pretty: bool,
) -> None:
    """Create a memory, or patch and restore one by --id.

    Omitted fields keep their values on a patch; --tags and --metadata replace.
    Content is redacted before it is stored.

    \b
    Examples:
      habitus memory retain "Prefer small commits" --kind preference --tags git,style
      echo '{"id": "…", "importance": 0.9}' | habitus memory retain
    """
    from habitus.memory import core

    given = {
        "content": content,
        "id": memory_id,
        "kind": kind,
        "scope": scope,
        "namespace": namespace,
        "tags": tags,
        "importance": importance,
        "confidence": confidence,
        "relevance": relevance,
    }
    options: dict[str, Any] = {key: value for key, value in given.items() if value is not None}
    if expires_at is not None:
        options["expires_at"] = None if expires_at.lower() == "none" else expires_at
    if metadata is not None:
        options["metadata"] = codec.parse_object(
            metadata.encode("utf-8", "surrogateescape"), what="--metadata"
        )
    for request in requests(content, nl):
        merged = {**request, **options}
        fallback = merged.get("scope") if merged.get("scope") in ("global", "project") else None
        target = open_store(root, wait, store, merged, fallback)
        try:
            io.write_result(core.retain(target, merged), pretty=pretty)
        finally:
            target.close()


@cli.command("recall")
@click.argument("memory_id", metavar="ID", required=False)
@store_option
@state_options
@stream_options
@output_options
def recall_command(
    memory_id: str | None, store: str | None, root: StateRoot, wait: float, nl: bool, pretty: bool
) -> None:
    """Print one active memory by id (null when absent, removed or expired).

    \b
    Example:  habitus memory recall 0b6f…-… --store project | jq -r .memory.content
    """
    from habitus.memory import core

    each_by_id(
        memory_id,
        nl,
        root,
        wait,
        store,
        pretty,
        lambda target, r: core.recall(target, r["id"]),
        human=None if nl else "memory.recall",
    )


@cli.command("retrieve")
@click.argument("query", required=False)
@click.option(
    "--both", is_flag=True, help="Search the project store (when in a repository) then the global store."
)
@click.option("--kind", multiple=True, help="Only this kind (repeatable: any of them).")
@click.option("--scope", multiple=True, type=STORE_CHOICE, help="Only this scope (repeatable).")
@click.option("--namespace", multiple=True, help="Only this namespace (repeatable).")
@click.option(
    "--tag", "tags", multiple=True, help="Only records carrying this tag (repeatable: all of them)."
)
@click.option("--source", multiple=True, help="Only records whose metadata.source is this (repeatable).")
@click.option("--importance-gte", type=float, help="Importance at least this.")
@click.option("--importance-lte", type=float, help="Importance at most this.")
@click.option("--confidence-gte", type=float, help="Confidence at least this.")
@click.option("--confidence-lte", type=float, help="Confidence at most this.")
@click.option(
    "--expires", type=click.Choice(["active", "expired", "any"]), help="Expiry filter (default active)."
)
@click.option(
    "--removed",
    type=click.Choice(["exclude", "only", "include"]),
    help="Soft-removed records (default exclude; only/include need no query).",
)
@click.option(
    "--order-by",
    type=click.Choice(["relevance", "updated_at", "created_at", "id", "importance", "confidence"]),
    help="Sort key (default relevance with a query, else updated_at).",
)
@click.option(
    "--order",
    type=click.Choice(["asc", "desc"]),
    help="Sort direction (default best first / newest first; asc for id).",
)
@click.option("--limit", type=int, help="Page size, 1..1000 (default 20).")
@click.option("--offset", type=int, help="Records to skip, 0..1000000 (default 0).")
@click.option("--full", is_flag=True, help="Never summarise: print every item whole even past 50 KiB.")
@click.option(
    "--hybrid/--no-hybrid",
    default=None,
    help="Embedding similarity joins BM25 (the models' z-scores plus the text matches' ranks). "
    "Default: whenever the model loads, falling back to BM25, flagged, when vectors are missing (see "
    "index-vectors); --hybrid requires the model, --no-hybrid ranks by BM25 alone.",
)
@store_option
@state_options
@output_options
def retrieve_command(
    query: str | None,
    both: bool,
    kind: tuple[str, ...],
    scope: tuple[str, ...],
    namespace: tuple[str, ...],
    tags: tuple[str, ...],
    source: tuple[str, ...],
    importance_gte: float | None,
    importance_lte: float | None,
    confidence_gte: float | None,
    confidence_lte: float | None,
    expires: str | None,
    removed: str | None,
    order_by: str | None,
    order: str | None,
    limit: int | None,
    offset: int | None,
    full: bool,
    hybrid: bool | None,
    store: str | None,
    root: StateRoot,
    wait: float,
    pretty: bool,
) -> None:
    """Search memories (BM25 and meaning) or list them with filters.

    QUERY is words as you would type them: any of them may match, stems count
    ("release" finds "releases"), a misspelt word finds its closest spelling,
    and records holding more of the rarer words rank first; lowercase or/and/not
    are words. Upper-case AND, OR, NOT, "phrases", prefix* and NEAR() are FTS5
    syntax; a query FTS5 cannot parse is searched as plain words, never refused,
    and so is a query of several lines (pasted text).
    The embedding model ranks by meaning too (fused with BM25) whenever it loads;
    stores.NAME.hybrid says whether each store used it or fell back to BM25.

    \b
    Examples:
      habitus memory retrieve "which database do we use"
      habitus memory retrieve "deploy NOT staging" --kind decision --no-hybrid
      habitus memory retrieve --both --tag python --order-by importance --limit 5
    """
    from habitus.memory import bound

    request = next(requests(query))
    ranges: dict[str, dict[str, float]] = {}
    for name, op, value in (
        ("importance", "gte", importance_gte),
        ("importance", "lte", importance_lte),
        ("confidence", "gte", confidence_gte),
        ("confidence", "lte", confidence_lte),
    ):
        if value is not None:
            ranges.setdefault(name, {})[op] = value
    merged = merge(
        request,
        query=query,
        kind=list(kind) or None,
        scope=list(scope) or None,
        namespace=list(namespace) or None,
        tags=list(tags) or None,
        source=list(source) or None,
        expires=expires,
        removed=removed,
        order_by=order_by,
        order=order,
        limit=limit,
        offset=offset,
        hybrid=hybrid,
        **ranges,
    )
    both = both or merged.get("both") is True
    if both and (store or merged.get("store")):
        raise HabitusError("usage", "--both and --store exclude each other")
    from habitus.memory.hybrid import retrieve_stores

    named = None if both else (store or merged.get("store") or "global")
    result = retrieve_stores(root, merged, store=named, wait=wait, now=utc_now())
    io.write_result(result if full else bound.bound(result), pretty=pretty, human="memory.retrieve")


@cli.command("remove")
@click.argument("memory_id", metavar="ID", required=False)
@click.option("--purge", is_flag=True, help="Delete the record for good (default: soft removal, reversible).")
@store_option
@state_options
@stream_options
@output_options
def remove_command(
    memory_id: str | None,
    purge: bool,
    store: str | None,
    root: StateRoot,
    wait: float,
    nl: bool,
    pretty: bool,
) -> None:
    """Remove a memory: soft by default (retain --id restores it), --purge to delete.

    \b
    Example:  habitus memory remove 0b6f…-… --store project
    """
    from habitus.memory import core

    def action(target: Any, request: dict[str, Any]) -> dict[str, Any]:
        return core.remove(target, request["id"], purge=purge or request.get("purge") is True)

    each_by_id(memory_id, nl, root, wait, store, pretty, action)


def _pin_command(name: str, summary: str, example: str) -> click.Command:
    @click.command(name, cls=StateCommand)
    @click.argument("memory_id", metavar="ID", required=False)
    @store_option
    @state_options
    @output_options
    def command(memory_id: str | None, store: str | None, root: StateRoot, wait: float, pretty: bool) -> None:
        from habitus.memory import core

        action = core.pin if name == "pin" else core.unpin
        each_by_id(memory_id, False, root, wait, store, pretty, lambda target, r: action(target, r["id"]))

    command.help = f"{summary}\n\n\b\nExample:  {example}"
    command.short_help = summary
    return command


cli.add_command(
    _pin_command("pin", "Pin an active memory so that index lists it first.", "habitus memory pin 0b6f…-…")
)
cli.add_command(
    _pin_command("unpin", "Unpin a memory (even one that no longer exists).", "habitus memory unpin 0b6f…-…")
)


@cli.command("index")
@click.option(
    "--budget",
    type=click.IntRange(0, 100_000),
    help="Character budget (default: the memory.index_budget setting, 2000).",
)
@click.option(
    "--per-store",
    type=click.IntRange(0, 1000),
    default=20,
    show_default=True,
    help="Most recent records listed per store after the pins.",
)
@store_option
@harness_option
@state_options
@output_options
def index_command(
    budget: int | None,
    per_store: int,
    store: str | None,
    harness: str | None,
    root: StateRoot,
    wait: float,
    pretty: bool,
) -> None:
    """Print the bounded memory index: pins first, then recent memories per store.

    Without --store: the project store (inside a repository) and the global store.
    In hook mode (--harness, for session-start or prompt hooks: Claude Code and Codex
    SessionStart/UserPromptSubmit, Gemini SessionStart/BeforeAgent, Pi session_start/
    before_agent_start, a generic {"user"}) the index is emitted as the harness's
    additional context, and nothing at all when it is empty or the event takes none.

    \b
    Examples:
      habitus memory index | jq -r .text
      habitus memory index --harness claude-code   # in .claude/settings.json hooks
    """
    from habitus.memory import index
    from habitus.state import config

    request = io.read_request()
    event = None
    if harness is not None:
        from habitus.harness.events import parse_event

        event = parse_event(harness, request)
        if event.kind not in ("session_start", "prompt"):
            return  # only these events take injected context: nothing to read or say
    cwd = event.cwd if event is not None else None
    cwd_path = Path(cwd) if isinstance(cwd, str) and os.path.isabs(cwd) else None
    if budget is None:
        budget = (
            request.get("budget")
            if not harness and "budget" in request
            else config.load(root).get("memory.index_budget")
        )
        if isinstance(budget, bool) or not isinstance(budget, int) or not 0 <= budget <= 100_000:
            raise bad_request("budget", "expected an integer from 0 to 100000")
    result = index.of_root(
        root, store=store, wait=wait, cwd=cwd_path, budget=budget, now=utc_now(), per_store=per_store
    )
    if harness is None or event is None:
        io.write_result(result, pretty=pretty)
        return
    from habitus.harness.reply import context_output

    io.write_reply(context_output(harness, event, result["text"]))


@cli.command("index-vectors")
@click.option(
    "--limit", type=click.IntRange(1, 10_000_000), help="Compute at most this many vectors in this run."
)
@store_option
@state_options
@output_options
def index_vectors_command(
    limit: int | None, store: str | None, root: StateRoot, wait: float, pretty: bool
) -> None:
    """Compute the embedding vectors that hybrid retrieval needs.

    Embeds every record (not removed) that lacks a vector of one of memory's
    embedding models (E5 and MiniLM while embed.model is default; see `habitus
    status`), model by model, the fastest first, on up to 4 cores, in batches committed one by one
    (an interrupted run keeps its progress; a terminal shows how far it got), and
    replaces vectors computed from content that has changed since. A search
    computes a few hundred missing vectors itself, and uses each model as soon as
    its vectors are complete; run this after importing more than that.

    \b
    Example:  habitus memory index-vectors --store project
    """
    from habitus.memory import embedding, vectors

    target = open_store(root, wait, store, io.read_request())
    try:
        if not target.exists():
            raise HabitusError("not_found", f"{target.path}: no {target.name} memory store")
        from habitus.render.progress import bar

        models = embedding.load_all(root, threads=embedding.bulk_threads())
        with bar("index-vectors", "records embedded") as progress:
            report = None if progress is None else (lambda model, d, t: progress(d, t, step=model))
            result = vectors.index(target, models, limit=limit, progress=report)
    finally:
        target.close()
    io.write_result(result, pretty=pretty)


@cli.command("verify", cls=ReportCommand)
@store_option
@state_options
@output_options
def verify_command(store: str | None, root: StateRoot, wait: float, pretty: bool) -> None:
    """Check a store's records, tags and FTS index; report issues (exit 1 when any).

    Report-only: nothing is changed. `repair --rebuild-fts` mends derived-index issues.

    \b
    Example:  habitus memory verify --store project | jq .issues
    """
    from habitus.memory import maintenance

    target = open_store(root, wait, store, io.read_request())
    try:
        report = maintenance.verify(target)
    finally:
        target.close()
    io.write_result(report, pretty=pretty)
    if not report["ok"]:
        raise HabitusError("issues_found", f"{target.path}: {len(report['issues'])} kind(s) of issue found")


@cli.command("repair")
@click.option(
    "--rebuild-fts",
    is_flag=True,
    required=True,
    help="Rebuild the full-text index and tag rows from the records.",
)
@store_option
@state_options
@output_options
def repair_command(rebuild_fts: bool, store: str | None, root: StateRoot, wait: float, pretty: bool) -> None:
    """Rebuild a store's derived indexes (FTS and tags), then verify it.

    \b
    Example:  habitus memory repair --rebuild-fts --store global
    """
    from habitus.memory import maintenance

    if not rebuild_fts:
        raise HabitusError("usage", "nothing to do: pass --rebuild-fts")
    target = open_store(root, wait, store, io.read_request())
    try:
        rebuilt = maintenance.rebuild_fts(target)
        report = maintenance.verify(target)
    finally:
        target.close()
    io.write_result({**rebuilt, "verification": report}, pretty=pretty)
    if not report["ok"]:
        raise HabitusError("issues_found", f"{target.path}: issues remain after the rebuild")


@cli.command("export")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the JSON lines to this file (atomically, 0600) and print a summary.",
)
@store_option
@state_options
@output_options
def export_command(out: Path | None, store: str | None, root: StateRoot, wait: float, pretty: bool) -> None:
    """Export every record (removed and expired too) as JSON lines, ordered by id.

    \b
    Examples:
      habitus memory export --store project > memories.jsonl
      habitus memory export --out backup.jsonl
    """
    import sys

    from habitus.memory import maintenance

    target = open_store(root, wait, store, io.read_request())
    try:
        if out is not None:
            count = maintenance.export_to(target, out)
            io.write_result({"store": target.name, "path": str(out), "count": count}, pretty=pretty)
            return
        sink = getattr(sys.stdout, "buffer", None)
        for line in maintenance.export_lines(target):
            if sink is None:
                sys.stdout.write(line.decode())
            else:
                sink.write(line)
        sys.stdout.flush()
    finally:
        target.close()


@cli.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path), required=False)
@store_option
@state_options
@output_options
def import_command(file: Path | None, store: str | None, root: StateRoot, wait: float, pretty: bool) -> None:
    """Import records from JSON lines (as export writes them), all or nothing.

    Every line must be a complete record; an id already in the store refuses the
    whole import (already_exists). Reads FILE, or stdin without it. On a
    terminal, stderr shows a progress bar.

    \b
    Example:  habitus memory export --store project | habitus memory import --store global
    """
    import sys

    from habitus.memory import maintenance

    if file is not None:
        from habitus.state import files

        files.refuse_symlink(file)
        handle: IO[bytes] = open(file, "rb")  # noqa: SIM115 - closed below
        what = str(file)
    else:
        handle = cast("IO[bytes]", getattr(sys.stdin, "buffer", None) or sys.stdin)
        what = "stdin"
    try:
        target = open_store(root, wait, store, {})
        try:
            from habitus.render.progress import bar

            with bar("import") as progress:
                result = maintenance.import_records(target, maintenance.read_lines(handle, what), progress)
        finally:
            target.close()
    finally:
        if file is not None:
            handle.close()
    io.write_result(result, pretty=pretty)


# Observational memory lives in its own module to keep this one small.
from habitus.commands.memory_observe import observe_command, prune_command, reflect_command  # noqa: E402
from habitus.commands.memory_trust import trust_command  # noqa: E402

for _command in (observe_command, reflect_command, prune_command, trust_command):
    cli.add_command(_command)
