"""Programs from the distribution's packages that some tests drive (Chromium, tmux).

`program(names, package)` finds one on PATH. When it is absent and apt-get is there, it installs the
package once: as root, or in CI (CI set) through passwordless sudo; HABITUS_TEST_NO_INSTALL=1 forbids
that. Otherwise the calling test skips. `.ci/run` stays exactly the README's test command.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def _find(names: tuple[str, ...]) -> str | None:
    return next((found for name in names if (found := shutil.which(name))), None)


def program(names: tuple[str, ...], package: str) -> str:
    found = _find(names)
    prefix = _installer()
    if found is None and prefix is not None:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        # Two test processes may install at once: dpkg's lock makes the second wait, then find it.
        install = [*prefix, "apt-get", "install", "-y", "-q", "-o", "DPkg::Lock::Timeout=300", package]
        done = subprocess.run(install, capture_output=True, timeout=900, env=env, check=False)
        if done.returncode != 0:
            update = [*prefix, "apt-get", "update", "-q"]
            subprocess.run(update, capture_output=True, timeout=600, env=env, check=False)
            subprocess.run(install, capture_output=True, timeout=900, env=env, check=False)
        found = _find(names)
    if found is None:
        pytest.skip(f"{names[0]} is not installed (and could not be installed with apt-get)")
    return found


def _installer() -> list[str] | None:
    """How to run apt-get: directly as root, through `sudo -n` in CI, or not at all."""
    if os.environ.get("HABITUS_TEST_NO_INSTALL") or not shutil.which("apt-get"):
        return None
    if os.geteuid() == 0:
        return []
    if os.environ.get("CI") and shutil.which("sudo"):
        probe = subprocess.run(["sudo", "-n", "true"], capture_output=True, timeout=30, check=False)
        return ["sudo", "-n"] if probe.returncode == 0 else None
    return None
