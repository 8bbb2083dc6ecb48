"""habitus: reviewed habits, durable memory and a watchdog reviewer for coding agents."""

__version__ = "0.1.0"
