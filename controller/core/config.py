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
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

import tomli_w

from . import house_rules
from .cards import seat_names
from .errors import ConfigError

PRIKUP_MODES = ("dealer_leads", "suit_only", "closed")
SCORING_MODES = ("gora", "whists")
CONVENTIONS = tuple(house_rules.CONVENTIONS)
WHIST_RESPONSIBILITIES = ("full", "half")
AUTO = "auto"                   # rules.bidding: a deal's first line decides (RULES-contracts.md)


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
    # "auto" (the default since the second edition): a deal's first accepted line decides
    # its course; True: every deal begins with its auction; False: raspasovka only
    bidding: bool | str = "auto"
    pulya_target: int | None = None
    ten_whisted: bool = True
    half_whist: bool = True
    consolation_to_dealer: bool = True
    second_whist_responsible: bool = True
    whist_responsibility: str | None = None     # None: "full" in Sochi, "half" in Leningrad
    # house rules (docs/RULES-variants.md): the keys set away from the table's own, as
    # (key, value) pairs in key order, and the preset they came from
    house: tuple[tuple[str, Any], ...] = ()
    preset: str | None = None

    @property
    def responsibility(self) -> str:
        """``whist_responsibility`` with its convention-dependent default."""
        if self.whist_responsibility is not None:
            return self.whist_responsibility
        return house_rules.CONVENTIONS[self.convention].responsibility

    @cached_property
    def book(self) -> "house_rules.RuleBook":
        """The rules of the pulka as the scoring asks them (:mod:`controller.core.house_rules`)."""
        return house_rules.rule_book(self)


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
        """The ``[table]`` and ``[rules]`` sections as TOML (for a session's ``config.toml``),
        written by tomli-w so any name reads back as it was."""
        t, r = self.table, self.rules
        table: dict[str, Any] = {"players": t.players, "first_dealer": t.first_dealer}
        if t.names:
            table["names"] = dict(t.names)
        rules: dict[str, Any] = {
            "prikup": r.prikup, "scoring": r.scoring, "whists_per_trick": r.whists_per_trick,
            "progression": list(r.progression), "same_dealer": r.same_dealer,
        }
        if r.last_step_dealer_penalty_points is None:
            rules["last_step_dealer_penalty"] = r.last_step_dealer_penalty
        else:
            rules["last_step_dealer_penalty_points"] = r.last_step_dealer_penalty_points
        rules["subtract_minimum"] = r.subtract_minimum
        rules["convention"] = r.convention
        # bidding is always written: a session's config.toml without it was written by the
        # first edition and means false (session_config_from_dict).  The other contract keys
        # are written only when set away from their defaults, so a raspasovka session's
        # config.toml names the keys it named before they existed.
        # (With a preset every key is written: one set back to its default must stay so.)
        defaults = Rules()
        rules["bidding"] = r.bidding
        for key in _CONTRACT_BOOLS:
            if getattr(r, key) != getattr(defaults, key) or r.preset is not None:
                rules[key] = getattr(r, key)
        if r.pulya_target is not None:
            rules["pulya_target"] = r.pulya_target
        if r.whist_responsibility is not None:
            rules["whist_responsibility"] = r.whist_responsibility
        rules.update(house_rules_toml(r))
        return tomli_w.dumps({"table": table, "rules": rules})


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
_RULES_KEYS = tuple(k for k in Rules.__dataclass_fields__ if k not in ("house", "preset"))
_CONTRACT_BOOLS = ("ten_whisted", "half_whist", "consolation_to_dealer", "second_whist_responsible")


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


def check_bidding(value: object) -> bool | str:
    """``rules.bidding``: ``"auto"``, ``true`` or ``false`` (RULES-contracts.md "Options")."""
    if value is True or value is False or value == AUTO:
        return value
    raise ConfigError(f'rules.bidding: must be "auto", true or false, got {_type_name(value)} {value!r}',
                      "rules.bidding")


def parse_rules(raw: object, players: int) -> Rules:
    section, preset = with_preset(check_table(raw, "rules"))
    house = parse_house_rules(section)
    section = {k: v for k, v in section.items() if k not in house_rules.registered()}
    # (the message lists every key a [rules] may hold, the preset and house rules too)
    check_known_keys(section, "rules", _RULES_KEYS + ("preset",) + tuple(house_rules.registered()))
    kw: dict[str, Any] = {"house": house, "preset": preset}
    if "prikup" in section:
        kw["prikup"] = check_choice(section["prikup"], "rules.prikup", PRIKUP_MODES)
    if "scoring" in section:
        kw["scoring"] = check_choice(section["scoring"], "rules.scoring", SCORING_MODES)
        # (PrefAndroid's Rostov raspasovka leaves the sitting-out dealer out: valid with 4)
        if kw["scoring"] == "whists" and players != 3 and ("raspasovka_whists", "beyond_fewest") not in house:
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
    if "bidding" in section:
        kw["bidding"] = check_bidding(section["bidding"])
    for key in _CONTRACT_BOOLS:
        if key in section:
            kw[key] = check_bool(section[key], f"rules.{key}")
    if "pulya_target" in section:
        kw["pulya_target"] = check_int(section["pulya_target"], "rules.pulya_target", 1)
    if "whist_responsibility" in section:
        kw["whist_responsibility"] = check_choice(section["whist_responsibility"], "rules.whist_responsibility",
                                                  WHIST_RESPONSIBILITIES)
    return Rules(**kw)


# --- presets and house rules (docs/RULES-variants.md) ---------------------------------

def with_preset(section: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``[rules]`` with its ``preset`` filled in: the preset's keys, then every key given
    beside it (a key given wins)."""
    if "preset" not in section:
        return dict(section), None
    name = section["preset"]
    presets = house_rules.PRESETS
    if not isinstance(name, str) or name not in presets:
        raise ConfigError(f"rules.preset: must be one of {', '.join(presets)}, got {name!r}", "rules.preset")
    merged = dict(presets[name])
    merged.update((k, v) for k, v in section.items() if k != "preset")
    return merged, name


def parse_house_rules(section: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The house-rule keys of ``[rules]`` that differ from the table's own, validated
    against each rule's values."""
    chosen = []
    for key, rule in sorted(house_rules.registered().items()):
        if key not in section:
            continue
        value = section[key]
        where = f"rules.{key}"
        if isinstance(rule.default, bool):
            check_bool(value, where)
        elif not isinstance(value, type(rule.default)) or isinstance(value, bool) or value not in rule.values:
            raise ConfigError(f"{where}: must be one of {', '.join(map(str, rule.values))}, got {value!r}", where)
        if value != rule.default:
            chosen.append((key, value))
    return tuple(chosen)


def house_rules_toml(rules: Rules) -> dict[str, Any]:
    """What a session's ``config.toml`` says of the preset and the house rules: the preset's
    name and every house rule away from the table's own (so it reads back the same)."""
    out: dict[str, Any] = {}
    if rules.preset is not None:
        out["preset"] = rules.preset
        # every key, a preset's one set back to the table's own included
        out.update((key, rule.default) for key, rule in sorted(house_rules.registered().items()))
    out.update(rules.house)
    return out


def game_config_from_dict(doc: Mapping[str, Any]) -> GameConfig:
    """Validate the ``table`` and ``rules`` sections of a decoded config; others are ignored."""
    table = parse_table(doc.get("table", {}))
    rules = parse_rules(doc.get("rules", {}), table.players)
    return GameConfig(table=table, rules=rules)


#: what a session's own config.toml without ``rules.bidding`` means: the first edition's
#: default, when the table wrote the key only when it was true
FIRST_EDITION_BIDDING = False


def session_config_from_dict(doc: Mapping[str, Any]) -> GameConfig:
    """A session's own ``config.toml`` (FORMATS.md "Game logs"), read for its resume or replay.

    As a user's config, except ``rules.bidding``: the table writes it into every session it
    starts (:meth:`GameConfig.to_toml`), so a session without it was written by the first
    edition, whose default was ``false``; it replays as it was played (RULES-contracts.md:
    "old logs (no key) replay exactly as before"), where a user's config without the key
    means ``"auto"``."""
    rules = doc.get("rules", {})
    if isinstance(rules, Mapping) and "bidding" not in rules:
        doc = {**doc, "rules": {**rules, "bidding": FIRST_EDITION_BIDDING}}
    return game_config_from_dict(doc)


def load_game_config(path: str | Path | None, *, session: bool = False) -> GameConfig:
    """Load ``[table]`` and ``[rules]`` from a TOML file (defaults when ``path`` is None);
    ``session``: the file is a session's own ``config.toml`` (:func:`session_config_from_dict`)."""
    if path is None:
        return GameConfig()
    doc = read_toml(path)
    try:
        return (session_config_from_dict if session else game_config_from_dict)(doc)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}", exc.key) from None
