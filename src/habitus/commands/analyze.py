"""habitus analyze: propose candidate habits from the observations not analysed yet."""

from __future__ import annotations

import click

from habitus import io
from habitus.dispatch import StateCommand
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read (a request object piped in, e.g. from capture, is ignored).",
    "stdout": 'One object: {"v":1,"analyzer":"local"|"model:NAME","dry_run","queue":{"generations":'
    '[{"generation","after_seq","through_seq"}],"records"},"batches":[{"generation","seq_start","seq_end",'
    '"records","bytes","proposals","outcome"}],"records","proposals":[{"id","outcome","status","stage",'
    '"condition","behavior","polarity","confidence_bp","friction","evidence","evidence_added","checksum"}],'
    '"memory_suggestions":[{"content","kind","refs","day"}],"dormant":[{"id","ref","note","similarity_bp"}],'
    '"rotated"}. outcome is created, evidence_added, '
    "reworded or rejected_before; stage is reviewable (>= 3 cited observations over >= 2 days) or "
    "collecting. dormant lists the active habits the user explicitly reversed (they went dormant). "
    "With nothing unread it answers at once with empty lists.",
    "files": "Reads observations/ and config.toml (analyze.model, analyze.batch_max_records, "
    "analyze.batch_max_bytes, capture.retention_days); writes ledger.sqlite (candidates, evidence, audit, "
    "analyze_watermarks, analyze_failures, analyze_quarantine, analyze_runs, analyze_pending; an active "
    "habit the user explicitly reverses goes dormant); rotates fully analysed "
    "generations into observations/archive/; holds locks/analyze.lock.",
}


@click.command(cls=StateCommand)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Analyse and report as usual, but write nothing (an in-memory copy of the ledger, no lock).",
)
@state_options
@output_options
def cli(dry_run: bool, root: StateRoot, wait: float, pretty: bool) -> None:
    """Propose candidate habits from unread observations.

    Reads the observations captured since the last run (a snapshot taken at
    the start), in batches of at most analyze.batch_max_records records and
    analyze.batch_max_bytes bytes. Each batch commits its candidates, their
    evidence and the read watermark in one transaction. Nothing becomes active:
    review candidates with `habitus habit list`. A candidate is reviewable with
    >= 3 cited observations over >= 2 days, else it keeps collecting evidence.
    Facts go to memory_suggestions in the result; nothing is written to memory.
    An active habit the user explicitly reverses ("actually, X is fine now")
    goes dormant (audited; `habitus habit enable` brings it back).

    The local analyzer (default) works offline; with analyze.model = NAME the
    configured model analyses each batch and an invalid answer is quarantined.
    A batch that fails is retried by the next run and skipped after its third
    failure. One analyze runs at a time (exit 75 when another holds the lock).

    On a terminal, stdout gets a summary (--json: the JSON) and stderr a
    progress bar.

    \b
    Examples:
      habitus analyze --pretty
      habitus analyze --dry-run | jq '.proposals[] | {condition, behavior, stage}'
    """
    io.read_request()  # validate and ignore: `habitus capture ... | habitus analyze` composes
    from habitus.learn.run import run
    from habitus.render.progress import bar

    with bar("analyze") as report:
        progress = (
            None if report is None else (lambda done, total, batches: report(done, total, batches=batches))
        )
        result = run(root, wait=wait, dry_run=dry_run, progress=progress)
    io.write_result(result, pretty=pretty, human="analyze")
