"""Learning candidate habits from observations (`habitus analyze`)."""
