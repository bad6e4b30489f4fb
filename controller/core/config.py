"""The session's settings: ``[table]`` and ``[rules]`` of FORMATS.md, validated strictly.

An unknown key, a wrong type or value, or two keys that exclude each other
raise :class:`~controller.errors.ConfigError` with a one-line message naming the
key (``rules.progression``).  The hardware and service sections are validated
by :mod:`controller.settings`; :func:`load_game_config` ignores them, as
``replay`` must.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .cards import seat_names
from .errors import ConfigError

PRIKUP_MODES = ("dealer_leads", "suit_only", "closed")
SCORING_MODES = ("gora", "whists")
CONVENTIONS = ("sochi", "leningrad")
WHIST_RESPONSIBILITIES = ("full", "half")


@dataclass(frozen=True)
class Rules:
    """``[rules]``: what RULES.md calls options, with their defaults."""

    prikup: str = "dealer_leads"
    scoring: str = "gora"
    whists_per_trick: int = 4
    progression: tuple[int, ...] = (1, 2, 3)
    same_dealer: bool = True
    last_step_dealer_penalty: int = 2
    last_step_dealer_penalty_points: int | None = None
    subtract_minimum: bool = False
    convention: str = "sochi"
    # contract deals (RULES-contracts.md, FORMATS-contracts.md)
    bidding: bool = False
    pulya_target: int | None = None
    ten_whisted: bool = True
    half_whist: bool = True
    consolation_to_dealer: bool = True
    second_whist_responsible: bool = True
    whist_responsibility: str | None = None     # None: "full" in Sochi, "half" in Leningrad

    @property
    def responsibility(self) -> str:
        """``whist_responsibility`` with its convention-dependent default."""
        if self.whist_responsibility is not None:
            return self.whist_responsibility
        return "half" if self.convention == "leningrad" else "full"


@dataclass(frozen=True)
class Table:
    """``[table]``: seats, the first dealer and optional player names."""

    players: int = 3
    first_dealer: str = "seat1"
    names: Mapping[str, str] = field(default_factory=dict)

    @property
    def seats(self) -> tuple[str, ...]:
        return seat_names(self.players)

    def name(self, seat: str) -> str:
        return self.names.get(seat, seat)


@dataclass(frozen=True)
class GameConfig:
    """The game part of a config file."""

    table: Table = field(default_factory=Table)
    rules: Rules = field(default_factory=Rules)

    def to_toml(self) -> str:
        """The ``[table]`` and ``[rules]`` sections as TOML (for a session's ``config.toml``)."""
        t, r = self.table, self.rules
        lines = ["[table]", f"players = {t.players}", f'first_dealer = "{t.first_dealer}"']
        if t.names:
            inner = ", ".join(f"{seat} = {_toml_str(name)}" for seat, name in t.names.items())
            lines.append(f"names = {{ {inner} }}")
        lines += [
            "", "[rules]",
            f'prikup = "{r.prikup}"',
            f'scoring = "{r.scoring}"',
            f"whists_per_trick = {r.whists_per_trick}",
            f"progression = [{', '.join(str(p) for p in r.progression)}]",
            f"same_dealer = {str(r.same_dealer).lower()}",
        ]
        if r.last_step_dealer_penalty_points is None:
            lines.append(f"last_step_dealer_penalty = {r.last_step_dealer_penalty}")
        else:
            lines.append(f"last_step_dealer_penalty_points = {r.last_step_dealer_penalty_points}")
        lines += [f"subtract_minimum = {str(r.subtract_minimum).lower()}", f'convention = "{r.convention}"']
        # The contract keys are written only when set away from their defaults, so a
        # raspasovka session's config.toml stays exactly what it was before they existed.
        defaults = Rules()
        for key in _CONTRACT_BOOLS:
            if getattr(r, key) != getattr(defaults, key):
                lines.append(f"{key} = {str(getattr(r, key)).lower()}")
        if r.pulya_target is not None:
            lines.append(f"pulya_target = {r.pulya_target}")
        if r.whist_responsibility is not None:
            lines.append(f'whist_responsibility = "{r.whist_responsibility}"')
        return "\n".join(lines) + "\n"


def _toml_str(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c >= " " else f"\\u{ord(c):04x}" for c in escaped) + '"'


def read_toml(path: str | Path, what: str = "config") -> dict[str, Any]:
    """Read a TOML file; every failure becomes one :class:`ConfigError` line."""
    path = Path(path)
    try:
        # utf-8-sig: Windows editors (Notepad) start a UTF-8 file with a byte order mark,
        # which TOML does not allow; the file is read as the player wrote it.
        return tomllib.loads(path.read_bytes().decode("utf-8-sig"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such {what} file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a {what} file") from None
    except PermissionError:
        raise ConfigError(f"{path}: permission denied reading the {what} file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not valid TOML: not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {what} file: {exc.strerror}") from None


# --- typed field checks, shared with controller.settings -------------------------

def _type_name(value: object) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)


MAX_NUMBER = 10**6     # prices, whists per trick, penalties: bounded so settlement stays exact in floats


def check_int(value: object, key: str, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{key}: must be a whole number, got {_type_name(value)} {value!r}", key)
    if minimum is not None and value < minimum:
        raise ConfigError(f"{key}: must be at least {minimum}, got {value}", key)
    if maximum is not None and value > maximum:
        raise ConfigError(f"{key}: must be at most {maximum}, got {value}", key)
    return value


def check_bool(value: object, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{key}: must be true or false, got {_type_name(value)} {value!r}", key)
    return value


def check_str(value: object, key: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{key}: must be a string, got {_type_name(value)} {value!r}", key)
    return value


def check_choice(value: object, key: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ConfigError(f"{key}: must be one of {', '.join(choices)}, got {value!r}", key)
    return value


def check_table(value: object, key: str) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(f"{key}: must be a table, got {_type_name(value)} {value!r}", key)
    return value


def check_known_keys(section: Mapping, key: str, known: tuple[str, ...] | frozenset) -> None:
    for name in section:
        if name not in known:
            raise ConfigError(f"{key}.{name}: unknown key (known: {', '.join(sorted(known))})",
                              f"{key}.{name}")


# --- [table] and [rules] -----------------------------------------------------------

# "deck": the service's deck file (controller.app.settings resolves it); the game ignores it.
_TABLE_KEYS = ("players", "first_dealer", "names", "deck")
_RULES_KEYS = tuple(Rules.__dataclass_fields__)
_CONTRACT_BOOLS = ("bidding", "ten_whisted", "half_whist", "consolation_to_dealer", "second_whist_responsible")


def parse_table(raw: object) -> Table:
    section = check_table(raw, "table")
    check_known_keys(section, "table", _TABLE_KEYS)
    players = section.get("players", 3)
    if isinstance(players, bool) or not isinstance(players, int) or players not in (3, 4):
        raise ConfigError(f"table.players: must be 3 or 4, got {players!r}", "table.players")
    seats = seat_names(players)
    first = section.get("first_dealer", "seat1")
    if first not in seats:
        raise ConfigError(f"table.first_dealer: must be one of {', '.join(seats)}, got {first!r}",
                          "table.first_dealer")
    names = check_table(section.get("names", {}), "table.names")
    for seat, name in names.items():
        key = f"table.names.{seat}"
        if seat not in seats:
            raise ConfigError(f"{key}: no such seat at a {players}-player table "
                              f"(seats: {', '.join(seats)})", key)
        check_str(name, key)
    return Table(players=players, first_dealer=first, names=dict(names))


def parse_rules(raw: object, players: int) -> Rules:
    section = check_table(raw, "rules")
    check_known_keys(section, "rules", _RULES_KEYS)
    kw: dict[str, Any] = {}
    if "prikup" in section:
        kw["prikup"] = check_choice(section["prikup"], "rules.prikup", PRIKUP_MODES)
    if "scoring" in section:
        kw["scoring"] = check_choice(section["scoring"], "rules.scoring", SCORING_MODES)
        if kw["scoring"] == "whists" and players != 3:
            raise ConfigError('rules.scoring: "whists" is valid only with 3 players '
                              f"(table.players = {players})", "rules.scoring")
    if "whists_per_trick" in section:
        kw["whists_per_trick"] = check_int(section["whists_per_trick"], "rules.whists_per_trick", 1, MAX_NUMBER)
    if "progression" in section:
        prog = section["progression"]
        if not isinstance(prog, list) or not prog:
            raise ConfigError("rules.progression: must be a non-empty list of whole numbers, "
                              f"got {prog!r}", "rules.progression")
        kw["progression"] = tuple(check_int(p, "rules.progression", 1, MAX_NUMBER) for p in prog)
    if "same_dealer" in section:
        kw["same_dealer"] = check_bool(section["same_dealer"], "rules.same_dealer")
    if "last_step_dealer_penalty" in section and "last_step_dealer_penalty_points" in section:
        raise ConfigError("rules.last_step_dealer_penalty_points: excludes rules.last_step_dealer_penalty "
                          "(give one or the other)", "rules.last_step_dealer_penalty_points")
    if "last_step_dealer_penalty" in section:
        kw["last_step_dealer_penalty"] = check_int(section["last_step_dealer_penalty"],
                                                   "rules.last_step_dealer_penalty", 0, MAX_NUMBER)
    if "last_step_dealer_penalty_points" in section:
        kw["last_step_dealer_penalty_points"] = check_int(
            section["last_step_dealer_penalty_points"], "rules.last_step_dealer_penalty_points", 0, MAX_NUMBER)
    if "subtract_minimum" in section:
        kw["subtract_minimum"] = check_bool(section["subtract_minimum"], "rules.subtract_minimum")
    if "convention" in section:
        kw["convention"] = check_choice(section["convention"], "rules.convention", CONVENTIONS)
    for key in _CONTRACT_BOOLS:
        if key in section:
            kw[key] = check_bool(section[key], f"rules.{key}")
    if "pulya_target" in section:
        kw["pulya_target"] = check_int(section["pulya_target"], "rules.pulya_target", 1)
    if "whist_responsibility" in section:
        kw["whist_responsibility"] = check_choice(section["whist_responsibility"], "rules.whist_responsibility",
                                                  WHIST_RESPONSIBILITIES)
    return Rules(**kw)


def game_config_from_dict(doc: Mapping[str, Any]) -> GameConfig:
    """Validate the ``table`` and ``rules`` sections of a decoded config; others are ignored."""
    table = parse_table(doc.get("table", {}))
    rules = parse_rules(doc.get("rules", {}), table.players)
    return GameConfig(table=table, rules=rules)


def load_game_config(path: str | Path | None) -> GameConfig:
    """Load ``[table]`` and ``[rules]`` from a TOML file (defaults when ``path`` is None)."""
    if path is None:
        return GameConfig()
    doc = read_toml(path)
    try:
        return game_config_from_dict(doc)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}", exc.key) from None
