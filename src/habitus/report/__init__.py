"""What habitus did for the user lately: the activity behind `habitus status` on a terminal and the
self-contained HTML page of `habitus report`. Domain code: it reads the stores and returns values."""
