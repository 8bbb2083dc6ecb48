"""Terminal user interfaces (Textual). Imported only by the interactive commands that need them."""
