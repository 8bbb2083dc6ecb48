"""Storage: the state root and its permissions, config, SQLite stores and migrations, locks, logs."""
