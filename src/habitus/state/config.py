"""config.toml: read with the stdlib (fast, for hooks), rewritten with tomlkit (comments survive).

An invalid known value makes the whole file refused (`config_invalid`, exit 3): a setting that guards
privacy or spending must never silently fall back to a default. Unknown keys are kept and reported.
Messages name the field path, never its value.
"""

from __future__ import annotations

import copy
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.errors import HabitusError
from habitus.state import files, locks
from habitus.state.root import StateRoot
from habitus.state.settings import BY_KEY, SETTINGS, Setting, lookup

MAX_CONFIG_BYTES = 1024 * 1024
_LOADED: dict[Path, tuple[tuple[int, ...], Config]] = {}  # config.toml -> (its identity, parsed)


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, path + "."))
        else:
            flat[path] = value
    return flat


@dataclass
class Config:
    values: dict[str, Any] = field(default_factory=dict)  # dotted key -> value, known keys only
    unknown: list[str] = field(default_factory=list)
    exists: bool = False

    def get(self, key: str) -> Any:
        if key in self.values:
            return self.values[key]
        setting = lookup(key)
        if setting is None:
            raise HabitusError(
                "unknown_key", f"{key}: no such setting", hint="`habitus config show` lists them"
            )
        return setting.default

    def source(self, key: str) -> str:
        return "file" if key in self.values else "default"

    def model_names(self) -> list[str]:
        return sorted({k.split(".")[1] for k in self.values if k.startswith("models.")})

    def model(self, name: str) -> dict[str, Any]:
        """The settings of [models.NAME], defaults filled in; not_found when the table is absent."""
        if name not in self.model_names():
            raise HabitusError("not_found", f"models.{name}: no such model in config.toml")
        return {
            s.key.split(".")[2]: self.values.get(f"models.{name}.{s.key.split('.')[2]}", s.default)
            for s in SETTINGS
            if s.key.startswith("models.*.")
        }

    def effective(self) -> dict[str, Any]:
        """Every known setting (defaults filled in) as nested tables, plus each configured model."""
        nested: dict[str, Any] = {}
        for setting in SETTINGS:
            if setting.key.startswith("models.*."):
                continue
            _put(nested, setting.key, self.get(setting.key))
        for name in self.model_names():
            for field_name, value in self.model(name).items():
                _put(nested, f"models.{name}.{field_name}", value)
        return nested


def _put(nested: dict[str, Any], key: str, value: Any) -> None:
    *tables, leaf = key.split(".")
    node = nested
    for table in tables:
        node = node.setdefault(table, {})
    node[leaf] = value


def validate(table: dict[str, Any], origin: str = "config.toml") -> Config:
    config = Config(exists=True)
    for key, value in _flatten(table).items():
        setting = lookup(key)
        if setting is None:
            config.unknown.append(key)
            continue
        problem = setting.check(value)
        if problem:
            raise HabitusError(
                "config_invalid",
                f"{origin}: {key}: {problem}",
                hint=f"fix it with `habitus config set {key} VALUE` or edit the file",
            )
        config.values[key] = value
    return config


def load(root: StateRoot) -> Config:
    """The configuration of this state root. A missing file is all defaults; never creates anything.

    Parsed once per process and file: a later call costs one stat while config.toml stays the same file
    with the same size, mtime and ctime (any write changes its ctime), and returns a copy of its own."""
    path = root.config
    files.refuse_symlink(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise HabitusError("io_error", f"{path}: {exc.strerror}") from None
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    cached = _LOADED.get(path)
    if cached is None or cached[0] != identity:
        cached = (identity, _parse(path))
        _LOADED[path] = cached
    return copy.deepcopy(cached[1])


def forget() -> None:
    """Drop what load() remembered (tests that change a file behind its back within one tick)."""
    _LOADED.clear()


def _parse(path: Path) -> Config:
    try:
        data = files.read_bytes(path, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise HabitusError("io_error", f"{path}: {exc.strerror}") from None
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise HabitusError("config_invalid", f"{path}: not valid UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        # The decoder's message can quote file content; report only where it failed.
        where = str(exc).rsplit("(", 1)[-1].rstrip(")") if "(" in str(exc) else "unknown position"
        raise HabitusError("config_invalid", f"{path}: not valid TOML ({where})") from None
    return validate(table, origin=str(path))


def parse_text(setting: Setting, key: str, text: str) -> Any:
    """Turn a command-line string into a value of the setting's type."""
    if setting.kind is bool:
        lowered = text.strip().lower()
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
        raise HabitusError("invalid_value", f"{key}: expected true or false")
    if setting.kind is int:
        try:
            return int(text.strip().replace("_", ""))
        except ValueError:
            raise HabitusError("invalid_value", f"{key}: expected an integer") from None
    if setting.kind is list:
        import shlex

        try:
            return shlex.split(text)
        except ValueError:
            raise HabitusError("invalid_value", f"{key}: expected a shell-quoted list of words") from None
    return text


def check_value(key: str, value: Any) -> Setting:
    setting = lookup(key)
    if setting is None:
        raise HabitusError("unknown_key", f"{key}: no such setting", hint="`habitus config show` lists them")
    problem = setting.check(value)
    if problem:
        raise HabitusError("invalid_value", f"{key}: {problem}")
    return setting


def set_value(root: StateRoot, key: str, value: Any, *, wait: float) -> Config:
    """Set one key in config.toml, keeping comments, order and unknown keys. Returns the new config."""
    check_value(key, value)
    return _rewrite(root, key, value, wait=wait)


def unset_value(root: StateRoot, key: str, *, wait: float) -> Config:
    """Remove one key from config.toml so that its default applies again."""
    if lookup(key) is None:
        raise HabitusError("unknown_key", f"{key}: no such setting", hint="`habitus config show` lists them")
    return _rewrite(root, key, None, wait=wait)


def _rewrite(root: StateRoot, key: str, value: Any, *, wait: float) -> Config:
    import tomlkit

    root.ensure()
    with locks.hold(root, "config", wait=wait):
        load(root)  # refuse to rewrite a file we cannot read correctly
        path = root.config
        try:
            text = files.read_bytes(path, MAX_CONFIG_BYTES).decode("utf-8")
        except FileNotFoundError:
            text = ""
        document = tomlkit.parse(text)
        *tables, leaf = key.split(".")
        node: Any = document
        for table in tables:
            if table not in node:
                if value is None:
                    return load(root)
                node[table] = tomlkit.table()
            node = node[table]
        if value is None:
            if leaf in node:
                del node[leaf]
        else:
            node[leaf] = value
        new_text = tomlkit.dumps(document)
        validate(tomllib.loads(new_text), origin=str(path))  # never write what we would refuse to read
        files.atomic_write(path, new_text.encode("utf-8"))
        return load(root)


def documented_defaults() -> dict[str, Any]:
    return {key: setting.default for key, setting in BY_KEY.items()}
