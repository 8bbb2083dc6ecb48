"""`habitus mcp`: memory and read-only habit tools for the agent, over the Model Context Protocol.

`tools` is the table of tools (names, JSON Schemas, handlers calling the same domain functions as the
`memory` and `select` commands) and knows nothing of the protocol; `server` serves that table over
stdio with the `mcp` SDK, which only `habitus mcp` imports (the habitus[mcp] extra).
"""
