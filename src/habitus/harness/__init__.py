"""Harness adapters: hook events in, hook replies out, transcript readers, and the hook settings that
make each harness call habitus.

    from habitus.harness import parse_event, context_output, block_output, HookEvent
    from habitus.harness.transcripts import read_transcript, read_tail, last_turn, Turn

See `events` for the hook protocols each harness publishes (and the client versions tested),
`transcripts` for the file formats (one module per format), `reply` for what goes back, `provenance` for who wrote a prompt,
`plan` for which habitus command runs on which event (the settings `habitus hooks` prints) and
`settings` for merging them into, and out of, a harness's settings file.
The transcript readers import nothing heavy but are only loaded when asked for.
"""

from habitus.harness.events import KINDS, HookEvent, parse_event
from habitus.harness.reply import block_output, context_output

__all__ = ["KINDS", "HookEvent", "block_output", "context_output", "parse_event"]
