"""The service's settings: the whole config file, strictly validated.

``[table]`` and ``[rules]`` are FORMATS.md's (see :mod:`controller.core.config`), and
``[table] deck`` names the table's deck file (relative to the config file's folder;
``--deck`` wins over it);
``[readers]`` names the reader backend and ``[log]`` the game log folder.  Every
other section belongs to the backend or output registered under it
(:mod:`controller.app.backends`), which parses and checks it itself; the
README documents them all:

    [readers]
    backend = "sim"              # sim | hub | spi: a reader registered in controller/app/backends

    [log]
    dir = "logs"

    [hub] [spi] [sim] [gpio] [display] ...   (see each module in controller/app/backends/)

Unknown sections and keys are fatal, with the key named.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..core.cards import zone_names
from ..core.config import GameConfig, check_choice, check_known_keys, check_str, check_table, \
    game_config_from_dict, read_toml
from ..core.errors import ConfigError
from . import backends

CORE_SECTIONS = ("table", "rules", "readers", "log")


@dataclass(frozen=True)
class Settings:
    """Everything a running table needs to know: the game, the reader backend, the
    log folder, and each registered section's own validated config."""

    game: GameConfig = field(default_factory=GameConfig)
    backend: str = "sim"
    log_dir: str = "logs"
    sections: Mapping[str, Any] = field(default_factory=dict)
    source: Path | None = None
    present: frozenset[str] = frozenset()     # the sections the config file has (an output may be
                                              # on only when its section is there: [web])
    deck: Path | None = None                  # [table] deck, resolved against the config's folder

    def deck_file(self, given: str | None = None) -> Path | None:
        """The deck file to load: ``given`` (``--deck``) wins, else ``[table] deck``, else None."""
        return Path(given) if given else self.deck

    def section(self, name: str) -> Any:
        """The config of section ``name`` (its defaults when the file did not have it)."""
        found = self.sections.get(name)
        if found is None:
            found = backends.section_module(name).parse({}, self.game)
        return found

    @property
    def zones(self) -> tuple[str, ...]:
        return zone_names(self.game.table.players)

    @property
    def readers(self):
        """The config of the chosen reader backend's own section."""
        return self.section(backends.reader(self.backend).SECTION)


def settings_from_dict(doc: Mapping[str, Any], source: Path | None = None, *,
                       game: GameConfig | None = None) -> Settings:
    """Validate a decoded config file as a whole; ``game``: the game it is for, instead of
    the file's ``[table]`` and ``[rules]`` (the demo's table, built from its options)."""
    known = CORE_SECTIONS + backends.section_names()
    for name in doc:
        if name not in known:
            raise ConfigError(f"{name}: unknown section (known: {', '.join(known)})", name)
    game = game if game is not None else game_config_from_dict(doc)
    deck = deck_path(doc.get("table", {}).get("deck"), source)

    readers = check_table(doc.get("readers", {}), "readers")
    check_known_keys(readers, "readers", ("backend",))
    backend = check_choice(readers.get("backend", "sim"), "readers.backend", tuple(backends.READERS))
    modules = backends.section_modules(present=doc, backend=backend)

    log = check_table(doc.get("log", {}), "log")
    check_known_keys(log, "log", ("dir",))
    log_dir = check_str(log["dir"], "log.dir") if "dir" in log else "logs"

    sections = {name: mod.parse(check_table(doc.get(name, {}), name), game) for name, mod in modules.items()}
    settings = Settings(game=game, backend=backend, log_dir=log_dir, sections=sections, source=source,
                        present=frozenset(doc), deck=deck)
    check_across_sections(settings)
    return settings


def deck_path(raw: object, source: Path | None) -> Path | None:
    """``[table] deck`` as a path: a relative one is taken from the config file's folder, so
    ``deck = "deck.toml"`` in /etc/preftable/config.toml is /etc/preftable/deck.toml wherever
    the service is started from."""
    if raw is None:
        return None
    text = check_str(raw, "table.deck")
    if not text.strip():
        raise ConfigError('table.deck: must name the deck file, e.g. deck = "deck.toml"', "table.deck")
    path = Path(text).expanduser()
    if not path.is_absolute() and source is not None:
        path = source.parent / path
    return path


def no_deck(settings: Settings) -> ConfigError:
    """Why a table with real readers cannot start without a deck file, and what to do (one line)."""
    where = f" in {settings.source}" if settings.source is not None else ""
    return ConfigError(f"no deck file: readers.backend is {settings.backend}, so every card would be an "
                       f'unknown tag; enrol the cards (preftable enroll) and set [table] deck = "deck.toml"'
                       f"{where}, or pass --deck DECK", "table.deck")


def check_across_sections(settings: Settings) -> None:
    """The rules that span sections: each module's own ``check``, then every claimed GPIO pin
    once, then each module's ``check_claimed`` on every pin claimed (the SPI buses' pins)."""
    modules = backends.section_modules(present=settings.present, backend=settings.backend)
    for mod in modules.values():
        check = getattr(mod, "check", None)
        if check is not None:
            check(settings)
    claimed: dict[int, str] = {}
    # the GPIO section's own pins first, so a clash names the other section's key
    for name, mod in sorted(modules.items(), key=lambda item: item[0] != "gpio"):
        pins = getattr(mod, "pins", None)
        if pins is None:
            continue
        for owner, pin in pins(settings.section(name)):
            if pin in claimed:
                raise ConfigError(f"{owner}: GPIO{pin} is already used by {claimed[pin]}", owner)
            claimed[pin] = owner
    owners = [(owner, pin) for pin, owner in claimed.items()]
    for name, mod in modules.items():
        check_claimed = getattr(mod, "check_claimed", None)
        if check_claimed is not None:
            check_claimed(owners, settings.section(name))


def load_settings(path: str | Path | None) -> Settings:
    """Load and validate a whole config file (defaults: a simulated 3-player table)."""
    if path is None:
        return Settings()
    doc = read_toml(path)
    try:
        return settings_from_dict(doc, Path(path))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}", exc.key) from None
