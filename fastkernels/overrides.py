"""Command-line overrides, checked before Hydra runs the app.

Hydra's own messages for a misspelt key, an unknown config choice or a value list outside a sweep span several
lines and end in a stack-trace hint; here each becomes one line that names the override, with the nearest existing
names, and the exit status 2 of the run's other input errors. What composes is left to Hydra (and, after it, to the
strict schemas of fastkernels.config); multirun sweeps and Hydra's own options (`--cfg`, `--help`, ...) too, since
each job composes on its own.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence

from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException, MissingConfigException, OverrideParseException
from omegaconf import DictConfig

from fastkernels.config import CONF_DIR


def check(argv: Sequence[str]) -> str | None:
    """The one-line error for `argv`'s overrides (python -m fastkernels's arguments), or None where they compose or
    are Hydra's to judge."""
    if any(argument.startswith("-") for argument in argv):
        return None
    overrides = [argument for argument in argv if not _key(argument).startswith("hydra")]
    try:
        _compose(overrides)
    except MissingConfigException as error:
        return _unknown_choice(error, overrides)
    except OverrideParseException as error:
        return f"cannot parse the override {_which(overrides, error)}: {_first_line(error)}"
    except ConfigCompositionException as error:
        return _not_composed(error, overrides)
    return None


def _compose(overrides: list[str]) -> DictConfig:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=overrides)


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _which(overrides: list[str], error: Exception) -> str:
    """The override the error is about, where its text quotes one; else all of them."""
    text = str(error)
    named = [override for override in overrides if f"'{override}'" in text or f"'{_key(override)}'" in text]
    return named[0] if named else " ".join(overrides)


def _unknown_choice(error: MissingConfigException, overrides: list[str]) -> str:
    missing = (error.missing_cfg_file or "").split("/")
    group, choice = ("/".join(missing[:-1]), missing[-1]) if len(missing) > 1 else ("", missing[0])
    options = sorted(error.options or [])
    near = difflib.get_close_matches(choice, options, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(near)}? " if near else ""
    return (f"unknown {group or 'config'} '{choice}' ({_which(overrides, error)}); {hint}"
            f"one of: {', '.join(options)} (conf/{group}/)")


def _not_composed(error: ConfigCompositionException, overrides: list[str]) -> str:
    text = str(error)
    override = _which(overrides, error)
    if text.startswith("Ambiguous value"):
        return (f"{override}: several values sweep only under --multirun (-m); a list is written "
                f"{_key(override)}=[a,b]")
    if text.startswith("Could not override"):
        key = _key(override)
        fine = [other for other in overrides if other != override]
        try:
            known = sorted(_leaf_keys(_compose(fine)))
        except Exception:  # noqa: BLE001 - another override is wrong too: suggest from the defaults
            known = sorted(_leaf_keys(_compose([])))
        near = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(near)}?" if near else " (conf/ documents every key)"
        return f"unknown config key {key} ({override}){hint}"
    return f"{override}: {_first_line(error)}"


def _leaf_keys(node: DictConfig, prefix: str = "") -> Iterator[str]:
    for name in node:
        value = node[name]
        path = f"{prefix}{name}"
        if isinstance(value, DictConfig) and len(value):
            yield from _leaf_keys(value, path + ".")
        else:
            yield path
