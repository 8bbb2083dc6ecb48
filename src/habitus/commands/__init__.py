"""One module per command: parse options, call domain code, write the result."""
