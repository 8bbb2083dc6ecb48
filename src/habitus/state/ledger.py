"""The ledger: habits, evidence, relations, audit, vectors, watermarks, findings, mutes, selection log.

Its migrations are an ordered list; a released migration is never edited, only followed by a new one.
"""

from __future__ import annotations

from habitus.state.db import Migration, Store, sql_migration
from habitus.state.root import StateRoot

MIGRATIONS: list[Migration] = [
    sql_migration(
        "0001_meta",
        """
        CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) STRICT;
        """,
    ),
    # Habits, their evidence, relations (possible duplicates and conflicts), audit trail, cached
    # embedding vectors and review snapshots. Every row carries `checksum` = SHA-256 over
    # the canonical JSON of its fields (see habitus.habits.rows); ids are never reused.
    sql_migration(
        "0002_habits",
        """
        CREATE TABLE habits (
            id TEXT PRIMARY KEY CHECK (id GLOB 'h-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]*'
                                       AND length(id) = 14),
            condition TEXT NOT NULL CHECK (length(condition) BETWEEN 1 AND 1000),
            behavior TEXT NOT NULL CHECK (length(behavior) BETWEEN 1 AND 1000),
            polarity INTEGER NOT NULL CHECK (polarity IN (-1, 1)),
            confidence_bp INTEGER NOT NULL CHECK (confidence_bp BETWEEN 0 AND 10000),
            status TEXT NOT NULL CHECK (status IN
                ('candidate', 'active', 'disabled', 'dormant', 'archived', 'suppressed_by_law')),
            origin TEXT NOT NULL CHECK (origin IN ('declared', 'analyzed')),
            candidate_key TEXT CHECK (candidate_key IS NULL OR length(candidate_key) BETWEEN 1 AND 200),
            wording TEXT NOT NULL,
            approved_wording TEXT,
            approved_at TEXT,
            law TEXT NOT NULL,
            law_findings TEXT NOT NULL,
            reason TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            checksum TEXT NOT NULL
        ) STRICT;
        CREATE INDEX habits_by_status ON habits (status, confidence_bp DESC, id);
        CREATE INDEX habits_by_wording ON habits (wording);
        CREATE INDEX habits_by_key ON habits (candidate_key);

        CREATE TABLE habit_evidence (
            id INTEGER PRIMARY KEY,
            habit_id TEXT NOT NULL REFERENCES habits (id),
            ref TEXT NOT NULL CHECK (length(ref) BETWEEN 1 AND 200),
            day TEXT NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
            note TEXT CHECK (note IS NULL OR length(note) <= 500),
            actor TEXT NOT NULL CHECK (actor IN ('user', 'analyze', 'system')),
            created_at TEXT NOT NULL,
            checksum TEXT NOT NULL,
            UNIQUE (habit_id, ref)
        ) STRICT;

        CREATE TABLE habit_relations (
            id TEXT PRIMARY KEY CHECK (id GLOB 'r-*' AND length(id) = 14),
            kind TEXT NOT NULL CHECK (kind IN ('duplicate', 'conflict')),
            habit_a TEXT NOT NULL REFERENCES habits (id),
            habit_b TEXT NOT NULL REFERENCES habits (id),
            wording_a TEXT NOT NULL,
            wording_b TEXT NOT NULL,
            similarity_bp INTEGER NOT NULL CHECK (similarity_bp BETWEEN -10000 AND 10000),
            condition_bp INTEGER NOT NULL CHECK (condition_bp BETWEEN -10000 AND 10000),
            behavior_bp INTEGER NOT NULL CHECK (behavior_bp BETWEEN -10000 AND 10000),
            strength TEXT NOT NULL CHECK (strength IN ('review', 'strong')),
            method TEXT NOT NULL,
            model_id TEXT NOT NULL,
            decision TEXT NOT NULL CHECK (decision IN
                ('pending', 'merged', 'superseded', 'archived', 'kept_separate', 'dismissed')),
            survivor TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            checksum TEXT NOT NULL,
            CHECK (habit_a < habit_b),
            UNIQUE (habit_a, habit_b)
        ) STRICT;
        CREATE INDEX habit_relations_b ON habit_relations (habit_b);
        CREATE INDEX habit_relations_pending ON habit_relations (decision);

        CREATE TABLE habit_audit (
            id INTEGER PRIMARY KEY,
            target TEXT NOT NULL,
            action TEXT NOT NULL,
            actor TEXT NOT NULL CHECK (actor IN ('user', 'analyze', 'system')),
            before TEXT,
            after TEXT,
            data TEXT NOT NULL,
            prev TEXT NOT NULL,
            created_at TEXT NOT NULL,
            checksum TEXT NOT NULL
        ) STRICT;
        CREATE INDEX habit_audit_by_target ON habit_audit (target, id);

        CREATE TABLE habit_vectors (
            habit_id TEXT NOT NULL REFERENCES habits (id),
            field TEXT NOT NULL CHECK (field IN ('condition', 'behavior')),
            model_id TEXT NOT NULL,
            dims INTEGER NOT NULL CHECK (dims BETWEEN 1 AND 8192),
            input TEXT NOT NULL,
            vector BLOB NOT NULL CHECK (length(vector) = dims * 4),
            created_at TEXT NOT NULL,
            checksum TEXT NOT NULL,
            PRIMARY KEY (habit_id, field, model_id)
        ) STRICT, WITHOUT ROWID;

        CREATE TABLE review_snapshots (
            kind TEXT PRIMARY KEY CHECK (kind IN ('habits', 'relations')),
            items TEXT NOT NULL,
            created_ms INTEGER NOT NULL,
            expires_ms INTEGER NOT NULL,
            checksum TEXT NOT NULL
        ) STRICT;
        """,
    ),
    # The selection log: metadata about each `habitus select` call, never the prompt, a hash
    # of it, vectors or guidance text. Bounded: select keeps the newest select_log.MAX_ROWS rows.
    sql_migration(
        "0003_select_log",
        """
        CREATE TABLE select_log (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            mode TEXT NOT NULL CHECK (mode IN
                ('cli', 'claude-code', 'codex', 'gemini', 'pi', 'generic', 'eval')),
            judge TEXT NOT NULL CHECK (length(judge) BETWEEN 1 AND 40),
            model_id TEXT CHECK (model_id IS NULL OR length(model_id) <= 200),
            outcome TEXT NOT NULL CHECK (outcome IN ('selected', 'none', 'failed')),
            reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 40),
            candidates INTEGER NOT NULL CHECK (candidates >= 0),
            retrieved INTEGER NOT NULL CHECK (retrieved >= 0),
            selected INTEGER NOT NULL CHECK (selected BETWEEN 0 AND 3),
            reasons TEXT NOT NULL CHECK (length(reasons) <= 1000),
            latency_ms INTEGER NOT NULL CHECK (latency_ms >= 0)
        ) STRICT;
        CREATE INDEX select_log_by_at ON select_log (at);
        """,
    ),
    # Analyze: the read watermark of each observation generation, batches that failed,
    # model answers that were refused (bounded: analyze keeps the newest QUARANTINE_KEEP), and a
    # bounded history of runs. Rows carry checksums like the habit tables (habitus.habits.rows).
    sql_migration(
        "0004_analyze",
        """
        CREATE TABLE analyze_watermarks (
            generation INTEGER PRIMARY KEY CHECK (generation >= 1),
            seq INTEGER NOT NULL CHECK (seq >= 0),
            record TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            checksum TEXT NOT NULL
        ) STRICT;

        CREATE TABLE analyze_failures (
            generation INTEGER NOT NULL CHECK (generation >= 1),
            seq_start INTEGER NOT NULL CHECK (seq_start >= 1),
            seq_end INTEGER NOT NULL CHECK (seq_end >= seq_start),
            attempts INTEGER NOT NULL CHECK (attempts >= 1),
            reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 64),
            skipped INTEGER NOT NULL CHECK (skipped IN (0, 1)),
            first_at TEXT NOT NULL,
            last_at TEXT NOT NULL,
            checksum TEXT NOT NULL,
            PRIMARY KEY (generation, seq_start)
        ) STRICT;

        CREATE TABLE analyze_quarantine (
            id INTEGER PRIMARY KEY,
            generation INTEGER NOT NULL,
            seq_start INTEGER NOT NULL,
            seq_end INTEGER NOT NULL,
            model TEXT NOT NULL CHECK (length(model) BETWEEN 1 AND 64),
            reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 64),
            detail TEXT NOT NULL CHECK (length(detail) <= 2000),
            answer TEXT NOT NULL CHECK (length(answer) <= 24000),
            created_at TEXT NOT NULL,
            checksum TEXT NOT NULL
        ) STRICT;

        CREATE TABLE analyze_runs (
            id INTEGER PRIMARY KEY,
            analyzer TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'failed')),
            batches INTEGER NOT NULL CHECK (batches >= 0),
            records INTEGER NOT NULL CHECK (records >= 0),
            proposals INTEGER NOT NULL CHECK (proposals >= 0),
            data TEXT NOT NULL,
            checksum TEXT NOT NULL
        ) STRICT;
        """,
    ),
    # Analyze quality: instructions said once, kept for a repeat in a later batch or run
    # (habitus.learn.queue.keep_pending bounds them by count and age). Rows carry checksums.
    sql_migration(
        "0005_analyze_pending",
        """
        CREATE TABLE analyze_pending (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('calm', 'loose')),
            ref TEXT NOT NULL CHECK (length(ref) BETWEEN 1 AND 200),
            day TEXT NOT NULL CHECK (length(day) = 10),
            text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 300),
            habitual INTEGER NOT NULL CHECK (habitual IN (0, 1)),
            created_at TEXT NOT NULL,
            checksum TEXT NOT NULL
        ) STRICT;
        CREATE INDEX analyze_pending_by_ref ON analyze_pending (ref);
        """,
    ),
    # advise: per-session review cursors and dedupe clocks, findings (per session scope),
    # notes waiting for delivery (their text is cleared once delivered or expired), and health counters.
    # No prompt, transcript path or slice text is stored: a scope names a session or a path's hash.
    sql_migration(
        "0006_advise",
        """
        CREATE TABLE advise_sessions (
            scope TEXT PRIMARY KEY CHECK (length(scope) BETWEEN 1 AND 300),
            source TEXT,
            head TEXT,
            offset INTEGER NOT NULL DEFAULT 0 CHECK (offset >= 0),
            turn_offset INTEGER NOT NULL DEFAULT 0 CHECK (turn_offset >= 0),
            turns INTEGER NOT NULL DEFAULT 0 CHECK (turns >= 0),
            reviews INTEGER NOT NULL DEFAULT 0 CHECK (reviews >= 0),
            last_review_at TEXT,
            last_block TEXT,
            updated_at TEXT NOT NULL
        ) STRICT;

        CREATE TABLE advise_findings (
            scope TEXT NOT NULL,
            finding TEXT NOT NULL CHECK (length(finding) = 64),
            label TEXT NOT NULL CHECK (length(label) <= 128),
            reviewer TEXT NOT NULL CHECK (reviewer IN ('local', 'model')),
            severity TEXT NOT NULL CHECK (severity IN ('nit', 'concern', 'blocker')),
            signature TEXT NOT NULL CHECK (length(signature) = 16),
            delivered_turn INTEGER NOT NULL,
            deliveries INTEGER NOT NULL DEFAULT 0,
            suppressed INTEGER NOT NULL DEFAULT 0,
            muted INTEGER NOT NULL DEFAULT 0,
            first_at TEXT NOT NULL,
            last_seen_at TEXT NOT NULL,
            last_delivered_at TEXT NOT NULL,
            PRIMARY KEY (scope, finding)
        ) STRICT;
        CREATE INDEX advise_findings_recent ON advise_findings (last_delivered_at);
        CREATE INDEX advise_findings_by_hash ON advise_findings (finding);

        CREATE TABLE advise_notes (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,
            finding TEXT NOT NULL CHECK (length(finding) = 64),
            severity TEXT NOT NULL CHECK (severity IN ('nit', 'concern', 'blocker')),
            tag TEXT CHECK (tag IS NULL OR tag IN ('re-raised', 'possible-duplicate')),
            reviewer TEXT NOT NULL CHECK (reviewer IN ('local', 'model')),
            note TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'expired', 'muted')),
            channel TEXT CHECK (channel IS NULL OR channel IN ('result', 'block', 'context', 'prompt')),
            created_at TEXT NOT NULL,
            delivered_at TEXT,
            CHECK (status = 'pending' OR note = '')
        ) STRICT;
        CREATE INDEX advise_notes_pending ON advise_notes (scope, status);

        CREATE TABLE advise_health (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            reviews INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0,
            consecutive_failures INTEGER NOT NULL DEFAULT 0,
            delivered INTEGER NOT NULL DEFAULT 0,
            suppressed INTEGER NOT NULL DEFAULT 0,
            muted INTEGER NOT NULL DEFAULT 0,
            dropped INTEGER NOT NULL DEFAULT 0,
            held INTEGER NOT NULL DEFAULT 0,
            expired INTEGER NOT NULL DEFAULT 0,
            last_review_at TEXT,
            last_failure TEXT,
            paused_at TEXT,
            pause_reason TEXT,
            pause_warned INTEGER NOT NULL DEFAULT 0 CHECK (pause_warned IN (0, 1))
        ) STRICT;
        INSERT INTO advise_health (id) VALUES (1);
        """,
    ),
    # Exemplars: prompts a habit is known to apply to, so that retrieval compares a new prompt
    # with them as well as with the condition. `text` is redacted before it is stored; `source` says
    # where it came from (the evidence of a learned habit, `habit declare --example`, or a prompt the
    # user confirmed with `habit example add`). Rows are checksummed like every habit row; they do not
    # enter the approved wording's checksum, and each addition or removal is an audit row.
    sql_migration(
        "0007_habit_examples",
        """
        CREATE TABLE habit_examples (
            id INTEGER PRIMARY KEY,
            habit_id TEXT NOT NULL REFERENCES habits (id),
            text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 300),
            source TEXT NOT NULL CHECK (source IN ('evidence', 'declared', 'confirmed')),
            actor TEXT NOT NULL,
            created_at TEXT NOT NULL,
            checksum TEXT NOT NULL,
            UNIQUE (habit_id, text)
        ) STRICT;

        CREATE TABLE habit_example_vectors (
            example_id INTEGER NOT NULL REFERENCES habit_examples (id),
            model_id TEXT NOT NULL,
            dims INTEGER NOT NULL CHECK (dims BETWEEN 1 AND 8192),
            input TEXT NOT NULL,
            vector BLOB NOT NULL CHECK (length(vector) = dims * 4),
            created_at TEXT NOT NULL,
            checksum TEXT NOT NULL,
            PRIMARY KEY (example_id, model_id)
        ) STRICT, WITHOUT ROWID;
        """,
    ),
    # Project scope: NULL for a personal habit (it applies everywhere, as every habit before this
    # migration, whose rows and checksums are untouched); else a JSON list of the repository top
    # folders it applies in (habitus.habits.scope). The row checksum covers it whenever it is set.
    # (The check avoids JSON functions: the ledger is opened with trusted_schema off.)
    sql_migration(
        "0008_habit_projects",
        """
        ALTER TABLE habits ADD COLUMN projects TEXT
            CHECK (projects IS NULL OR (projects GLOB '[[]"*"]' AND length(projects) <= 100000));
        """,
    ),
]


def store(root: StateRoot, *, wait: float = 5.0) -> Store:
    return Store(root.ledger, MIGRATIONS, label="ledger", wait=wait)
