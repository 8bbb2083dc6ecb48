"""The state root: where one human's habitus state lives, and the names of everything in it.

Resolution order: `--root`, then `HABITUS_HOME`, then `$XDG_DATA_HOME/habitus`, then
`~/.local/share/habitus`. Resolving never creates anything; `ensure()` does, with 0700 folders.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from habitus.errors import HabitusError
from habitus.state import files


def resolve(option: str | os.PathLike[str] | None = None) -> Path:
    """The absolute state-root path for this invocation (symlinks in the path are kept as given)."""
    raw: str | os.PathLike[str] | None = option or os.environ.get("HABITUS_HOME") or None
    if raw is None:
        xdg = os.environ.get("XDG_DATA_HOME", "")
        # The XDG spec says relative values are invalid and must be ignored.
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
        raw = base / "habitus"
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = Path(os.path.abspath(path))
    if str(path) == "/":
        raise HabitusError("usage", "the state root cannot be /")
    return path


def refuse_unsafe_root(path: Path) -> None:
    """Refuse a root that someone else could have written, as ssh refuses such a key file: its
    config.toml names programs habitus runs. The root itself must be ours and writable by nobody
    else; each folder above it must belong to us or to root and, unless sticky (/tmp), not be
    writable by everyone. Nothing is created or changed."""
    me = os.getuid()
    probe = path
    while True:
        try:
            st = os.lstat(probe)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise HabitusError("io_error", f"{probe}: {exc.strerror}") from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            if probe == path:
                unsafe = st.st_uid != me or st.st_mode & 0o022
            else:
                unsafe = st.st_uid not in (me, 0) or (st.st_mode & 0o002 and not st.st_mode & stat.S_ISVTX)
            if unsafe:
                raise HabitusError(
                    "root_unsafe",
                    f"{probe} is owned by another user or writable by others; habitus will not use "
                    f"the state root {path}",
                    hint=f"make it yours and private (chown, chmod 700 {probe}) or choose another --root",
                )
        if probe.parent == probe:
            return
        probe = probe.parent


@dataclass(frozen=True)
class StateRoot:
    path: Path

    @classmethod
    def at(cls, option: str | os.PathLike[str] | None = None) -> StateRoot:
        path = resolve(option)
        refuse_unsafe_root(path)
        return cls(path)

    # Names of everything in the root (DESIGN.md section 3).
    @property
    def config(self) -> Path:
        return self.path / "config.toml"

    @property
    def ledger(self) -> Path:
        return self.path / "ledger.sqlite"

    @property
    def memory(self) -> Path:
        return self.path / "memory.sqlite"

    @property
    def observations(self) -> Path:
        return self.path / "observations"

    @property
    def law(self) -> Path:
        return self.path / "law.md"

    @property
    def models(self) -> Path:
        return self.path / "models"

    @property
    def errors(self) -> Path:
        return self.path / "errors.jsonl"

    @property
    def locks(self) -> Path:
        return self.path / "locks"

    def exists(self) -> bool:
        return self.path.is_dir()

    def ensure(self) -> Path:
        """Create the root folder (0700) if needed and return its path. Only a folder: the state lock is
        taken where state is opened for writing (`Store.open_write`, `locks.hold`)."""
        return files.ensure_dir(self.path)

    def ensure_sub(self, name: str) -> Path:
        self.ensure()
        sub = self.path / name
        return files.ensure_dir(sub)
