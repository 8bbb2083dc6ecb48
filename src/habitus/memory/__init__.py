"""Durable memory: records, search, the injection index, integrity checks, and observational memory."""
