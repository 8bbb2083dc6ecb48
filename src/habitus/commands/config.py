"""habitus config: read and change settings in config.toml (comments and unknown keys survive)."""

from __future__ import annotations

from typing import Any

import click

from habitus import io
from habitus.dispatch import StateGroup
from habitus.errors import HabitusError, bad_request
from habitus.options import output_options, state_options
from habitus.state import config
from habitus.state.root import StateRoot
from habitus.state.settings import SETTINGS, lookup

MAN = {
    "stdin": "config get and config set read a request object when KEY is not given on the command line: "
    '{"key": "capture.enabled"} or {"key": "capture.enabled", "value": true} (value typed as JSON).',
    "stdout": 'get: {"v":1,"key","value","default","source":"file"|"default"}. '
    'set/unset: {"v":1,"key","value","path"}. show: {"v":1,"path","exists","settings","unknown_keys"}. '
    'describe: {"v":1,"settings":[{"key","type","default","help",...}]}.',
    "files": "<root>/config.toml (0600). Rewrites are atomic and keep comments, order and unknown keys.",
}


@click.group(cls=StateGroup)
def cli() -> None:
    """Read and change settings in config.toml.

    Only changed settings are stored; everything else has the default that
    `habitus config describe` lists. An invalid value is refused with the
    field path in the message, never the value.

    \b
    Examples:
      habitus config set capture.enabled true
      habitus config get capture.retention_days
      echo '{"key": "models.local.command", "value": ["my-model"]}' | habitus config set
    """


def _key_from(key: str | None, request: dict[str, Any] | None) -> str:
    if key is not None:
        return key
    value = (request or {}).get("key")
    if not isinstance(value, str) or not value:
        raise bad_request("key", "expected a non-empty string (or pass KEY as an argument)")
    return value


@cli.command("get")
@click.argument("key", required=False)
@state_options
@output_options
def get_command(key: str | None, root: StateRoot, wait: float, pretty: bool) -> None:
    """Print one setting's value, its default and where it came from.

    \b
    Example:  habitus config get capture.enabled
    """
    key = _key_from(key, None if key else io.read_request())
    settings = config.load(root)
    value = settings.get(key)
    setting = lookup(key)
    assert setting is not None
    io.write_result(
        {"key": key, "value": value, "default": setting.default, "source": settings.source(key)},
        pretty=pretty,
    )


@cli.command("set")
@click.argument("key", required=False)
@click.argument("value", required=False)
@state_options
@output_options
def set_command(key: str | None, value: str | None, root: StateRoot, wait: float, pretty: bool) -> None:
    """Set one setting in config.toml.

    VALUE is parsed by the setting's type (true/false, integers, strings;
    lists as shell words). Without arguments, reads {"key", "value"} from stdin.

    \b
    Examples:
      habitus config set capture.enabled true
      habitus config set models.local.kind command
    """
    if key is None:
        request = io.read_request()
        key = _key_from(None, request)
        if "value" not in request:
            raise bad_request("value", "required")
        typed = request["value"]
    else:
        if value is None:
            raise HabitusError("usage", "missing VALUE", hint="habitus config set KEY VALUE")
        setting = lookup(key)
        if setting is None:
            raise HabitusError(
                "unknown_key", f"{key}: no such setting", hint="`habitus config describe` lists them"
            )
        typed = config.parse_text(setting, key, value)
    config.set_value(root, key, typed, wait=wait)
    io.write_result({"key": key, "value": typed, "path": str(root.config)}, pretty=pretty)


@cli.command("unset")
@click.argument("key")
@state_options
@output_options
def unset_command(key: str, root: StateRoot, wait: float, pretty: bool) -> None:
    """Remove a setting from config.toml so that its default applies.

    \b
    Example:  habitus config unset capture.retention_days
    """
    settings = config.unset_value(root, key, wait=wait)
    io.write_result({"key": key, "value": settings.get(key), "path": str(root.config)}, pretty=pretty)


@cli.command("show")
@state_options
@output_options
def show_command(root: StateRoot, wait: float, pretty: bool) -> None:
    """Print every setting in effect (defaults filled in) and any unknown keys.

    \b
    Example:  habitus config show --pretty
    """
    settings = config.load(root)
    io.write_result(
        {
            "path": str(root.config),
            "exists": settings.exists,
            "settings": settings.effective(),
            "unknown_keys": sorted(settings.unknown),
        },
        pretty=pretty,
    )


@cli.command("preset")
@click.argument("preset", type=click.Choice(["claude", "codex", "gemini", "pi", "ollama", "llama-cpp"]))
@click.option("--name", default=None, help="The [models.NAME] table to write (default: the preset's name).")
@click.option(
    "--model", "model", default="", help="Model to ask (the CLI's --model; the server's model name)."
)
@click.option("--url", default="", help="ollama / llama-cpp: the server's base URL, if not the usual one.")
@click.option("--program", default="", help="Agent CLI presets: the program to run, if not the one on PATH.")
@click.option(
    "--for",
    "uses",
    multiple=True,
    type=click.Choice(["analyze", "advise", "select", "memory"]),
    help="What uses the model (repeatable; default: analyze and advise).",
)
@state_options
@output_options
def preset_command(
    preset: str,
    name: str | None,
    model: str,
    url: str,
    program: str,
    uses: tuple[str, ...],
    root: StateRoot,
    wait: float,
    pretty: bool,
) -> None:
    """Use a model you already have: an agent CLI you are logged into, or a local server.

    claude, codex, gemini and pi run `claude -p`, `codex exec`, `gemini -p`
    or `pi -p` with your own login, in an empty temporary folder, with
    their hooks, tools and session files off and HABITUS_NO_HOOKS=1 (so
    habitus's own hooks never fire inside them); the redacted, bounded
    request goes on stdin. ollama and llama-cpp talk to the local server's
    OpenAI-compatible API. Writes [models.NAME] and points each use at it.

    \b
    Examples:
      habitus config preset claude
      habitus config preset ollama --model qwen2.5-coder:7b --for analyze
      habitus config preset codex --for analyze --for advise --for select
    """
    from habitus.models import presets

    name = name or preset
    values = presets.settings_for(
        preset, name=name, model=model, url=url, program=program, uses=uses or presets.DEFAULT_USES
    )
    for key, value in values.items():
        config.check_value(key, value)  # refuse before anything is written
    for key, value in values.items():
        config.set_value(root, key, value, wait=wait)
    settings = config.load(root)
    entry = next(item for item in presets.configured(settings) if item["name"] == name)
    io.write_result({"model": entry, "path": str(root.config)}, pretty=pretty)


@cli.command("describe")
@output_options
def describe_command(pretty: bool) -> None:
    """List every setting with its type, default, bounds and meaning.

    \b
    Example:  habitus config describe | jq -r '.settings[].key'
    """
    io.write_result({"settings": [describe(s) for s in SETTINGS]}, pretty=pretty)


def describe(setting: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "key": setting.key,
        "type": {bool: "boolean", int: "integer", str: "string", list: "list"}[setting.kind],
        "default": setting.default,
        "help": setting.help,
    }
    if setting.choices is not None:
        entry["choices"] = list(setting.choices)
    if setting.minimum is not None:
        entry["minimum"] = setting.minimum
    if setting.maximum is not None:
        entry["maximum"] = setting.maximum
    return entry
