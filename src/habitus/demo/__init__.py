"""Sample data for `habitus demo`: a few days of a coding-agent conversation with repeated corrections."""
