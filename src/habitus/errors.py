"""The error-code enum and exit statuses: the one place that says what each failure means.

Every failure habitus reports is a `HabitusError` carrying a `code` from `CODES`; the exit status is a
property of the code, never chosen at the raise site, so the same failure always exits the same way.
Messages name files and fields, never the values in them (values may be secrets).
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    FAILED = 1  # bad data, I/O, a model that failed
    USAGE = 2  # bad command line or request
    REFUSED = 3  # fails closed: newer, corrupt, tampered or stale state
    BUSY = 75  # a lock was not acquired within --wait (EX_TEMPFAIL)
    INTERRUPTED = 130  # SIGINT


# code -> (exit status, what it means). Documented in the man pages and README; append, never rename.
CODES: dict[str, tuple[Exit, str]] = {
    "usage": (Exit.USAGE, "the command line is wrong: unknown option, missing or malformed argument"),
    "bad_json": (Exit.USAGE, "stdin is not one valid JSON object (or, with --nl, a line is not)"),
    "bad_utf8": (Exit.USAGE, "stdin is not valid UTF-8"),
    "bad_request": (Exit.USAGE, "the request is not an object, or a field has the wrong type or value"),
    "request_too_large": (Exit.USAGE, "the request exceeds the size cap (8 MiB per object)"),
    "unknown_key": (Exit.USAGE, "the configuration key does not exist"),
    "invalid_value": (Exit.USAGE, "the value is not valid for that configuration key"),
    "no_project": (Exit.USAGE, "a project store was named outside a git repository"),
    "sensitive_content": (
        Exit.USAGE,
        "the text still looks like a secret after redaction; nothing was stored",
    ),
    "ambiguous": (Exit.USAGE, "an ID prefix matches more than one record; the error lists the candidates"),
    "not_found": (Exit.FAILED, "the named record, file or id does not exist"),
    "io_error": (Exit.FAILED, "a file could not be read or written"),
    "model_error": (Exit.FAILED, "a configured language model failed, timed out or answered invalidly"),
    "issues_found": (Exit.FAILED, "a report-only check found issues (the report is on stdout)"),
    "failed": (Exit.FAILED, "an unexpected internal error"),
    "systemctl_failed": (
        Exit.FAILED,
        "systemctl could not reload or enable the habitus units (files are written)",
    ),
    "already_exists": (Exit.FAILED, "a record with that id already exists (import never overwrites)"),
    "not_installed": (
        Exit.FAILED,
        "an optional part of habitus is not installed (e.g. `habitus mcp` needs the habitus[mcp] extra)",
    ),
    "bad_transcript": (Exit.FAILED, "a transcript file is binary, not UTF-8, or not a format habitus reads"),
    "habits_file_invalid": (
        Exit.FAILED,
        "a shared habits file is not UTF-8, too large, or has no (or a malformed) habitus block",
    ),
    "export_stale": (Exit.FAILED, "export --check: the file's habitus block is not what export would write"),
    "schema_newer": (Exit.REFUSED, "the state was written by a newer habitus; it is left untouched"),
    "schema_unknown": (Exit.REFUSED, "the state's schema history is not one this habitus knows"),
    "schema_outdated": (Exit.REFUSED, "a read-only command found a schema that needs migrating first"),
    "state_corrupt": (Exit.REFUSED, "a state file is corrupt or unreadable as what it should be"),
    "checksum_mismatch": (Exit.REFUSED, "a stored row or file does not match its checksum (tampered?)"),
    "config_invalid": (Exit.REFUSED, "config.toml cannot be parsed or holds an invalid value"),
    "symlink_refused": (Exit.REFUSED, "a state file or folder is a symbolic link"),
    "special_file_refused": (
        Exit.REFUSED,
        "a state file is a FIFO, socket, device or folder where a regular file belongs",
    ),
    "hard_link_refused": (
        Exit.REFUSED,
        "a state file has more than one hard link (writes would leave the root)",
    ),
    "root_unsafe": (
        Exit.REFUSED,
        "the state root (or a folder above it) is owned by another user or writable by others",
    ),
    "stale": (Exit.REFUSED, "what was reviewed changed since; review it again"),
    "refused": (Exit.REFUSED, "refused by policy: law, a pending duplicate, or a safety rule"),
    "model_unavailable": (Exit.REFUSED, "the embedding model's files are missing or cannot be loaded"),
    "vectors_stale": (Exit.REFUSED, "cached vectors are missing or from another model; run habit recheck"),
    "disabled": (Exit.REFUSED, "the feature is turned off in config.toml (e.g. capture.enabled = false)"),
    "backup_invalid": (Exit.REFUSED, "a backup folder is incomplete, altered, or not a habitus backup"),
    "settings_invalid": (Exit.REFUSED, "a harness settings file is not one JSON object of the known shape"),
    "untrusted": (
        Exit.REFUSED,
        "a project memory store you did not create here (or changed since) is not read until `memory trust`",
    ),
    "state_locked": (Exit.BUSY, "another process holds the lock; retry or raise --wait"),
    "deadline": (Exit.BUSY, "hook mode: the hook's time budget (hooks.budget_ms) ran out"),
    "interrupted": (Exit.INTERRUPTED, "interrupted by a signal"),
}


class HabitusError(Exception):
    """A failure with a documented code. Domain code raises it; `cli` turns it into exit + error object."""

    def __init__(self, code: str, message: str, hint: str | None = None, **details: object) -> None:
        if code not in CODES:
            raise ValueError(f"undocumented error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.details = details

    @property
    def exit(self) -> int:
        return int(CODES[self.code][0])

    def as_object(self) -> dict[str, dict[str, object]]:
        body: dict[str, object] = {"code": self.code, "message": self.message, "exit": self.exit}
        if self.hint:
            body["hint"] = self.hint
        body.update(self.details)
        return {"error": body}


def bad_request(field: str, expected: str) -> HabitusError:
    """A request field has the wrong type or value. Names the field path, never the value."""
    return HabitusError("bad_request", f"request.{field}: {expected}")
