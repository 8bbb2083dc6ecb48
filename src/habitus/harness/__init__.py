"""Harness adapters: hook events in, hook replies out, and transcript readers.

    from habitus.harness import parse_event, context_output, block_output, HookEvent
    from habitus.harness.transcripts import read_transcript, read_tail, last_turn, Turn

See `events` for the hook protocols each harness publishes (and the client versions tested),
`transcripts` for the file formats (one module per format) and `provenance` for who wrote a prompt.
The transcript readers import nothing heavy but are only loaded when asked for.
"""

from habitus.harness.events import KINDS, HookEvent, block_output, context_output, parse_event

__all__ = ["KINDS", "HookEvent", "block_output", "context_output", "parse_event"]
