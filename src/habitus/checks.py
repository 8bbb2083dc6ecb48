"""The domains' integrity checks that backup, restore and verify run, registered into the inventory.

`habitus.state` names what a state root holds but imports no domain; each domain owns what its
content must look like. `register()` plugs them in (idempotent, cheap after the first call); the
backup, restore and verify commands call it before they touch state, and the inventory refuses to
treat an item as checked while its owner's check is missing.
"""

from __future__ import annotations


def register() -> None:
    from habitus.advise import mutes
    from habitus.habits import rows
    from habitus.memory import maintenance
    from habitus.state import inventory

    inventory.register(inventory.Verifier("ledger.sqlite", rows.verifier))
    inventory.register(inventory.Verifier("memory.sqlite", maintenance.verifier))
    inventory.register_file_check("mutes.json", mutes.check_file)
