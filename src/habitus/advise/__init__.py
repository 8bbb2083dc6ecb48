"""advise: a watchdog review of the agent's recent work that delivers one useful, deduplicated note.

    review.run(root, Source(...), wait=, route=)   one review: policy, slice, reviewers, dedupe, delivery
    review.take_pending(root, session, ...)       the notes waiting for a session's next prompt
    mutes.load / mutes.change / mutes.resolve     <root>/mutes.json, fail-closed
    health.report(root, wait=)                    what `habitus status` shows under "advise"

Modules: `policy` (user config narrowed by `<repo>/.habitus/advise.toml`), `protect` (protected paths),
`slice` (bounded, masked, redacted recent work from a session cursor), `local` (habits and law, offline),
`model` (optional model reviewer, strict JSON), `notes` (content-free filter, finding hash, SimHash,
dedupe decision), `store` (ledger tables). Importing this package loads nothing heavy.
"""
