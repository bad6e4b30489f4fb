#!/usr/bin/env bash
# Install preftable as a service on Raspberry Pi OS (bookworm).
#
#   sudo ./systemd/install.sh [REPO_DIR]
#
# Idempotent: run it again after `git pull` to upgrade.  It creates the system
# user `preftable` (groups spi, gpio, dialout), a venv in /opt/preftable with
# preftable[pi] installed from REPO_DIR (default: this checkout; preftable[pi5] with
# rpi-lgpio instead of RPi.GPIO on a Raspberry Pi 5, by /proc/device-tree/model), a config
# skeleton in /etc/preftable (an existing config is never overwritten), the
# systemd unit and the udev rule of the hub, then enables the service and starts it
# once the config's deck (/etc/preftable/deck.toml) has been enrolled.  PREFTABLE_PREFIX, PREFTABLE_CONF_DIR, PREFTABLE_UNIT_DIR and
# PREFTABLE_UDEV_DIR move the install (for staging images); PREFTABLE_MODEL_FILE names
# the board's model file (default /proc/device-tree/model); PREFTABLE_SKIP_APT=1
# skips the apt-get step.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_arg=${1:-"$here/.."}
prefix=${PREFTABLE_PREFIX:-/opt/preftable}
conf_dir=${PREFTABLE_CONF_DIR:-/etc/preftable}
unit_dir=${PREFTABLE_UNIT_DIR:-/etc/systemd/system}
udev_dir=${PREFTABLE_UDEV_DIR:-/etc/udev/rules.d}
service=preftable.service
user=preftable
groups=(spi gpio dialout)

say() { printf 'preftable install: %s\n' "$*"; }
die() { printf 'preftable install: error: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "run as root: sudo $0 ${1:-}"
[[ -d $repo_arg ]] || die "$repo_arg is not a folder; give the preftable checkout as argument"
repo=$(cd "$repo_arg" && pwd)
[[ -f $repo/pyproject.toml && -f $here/$service ]] \
    || die "$repo is not a preftable checkout (no pyproject.toml or systemd/$service)"

# 1. System packages: Python with venv, and a compiler for RPi.GPIO / spidev.
if [[ ${PREFTABLE_SKIP_APT:-0} != 1 ]]; then
    say "installing system packages (python3-venv python3-dev gcc)"
    packages=(python3 python3-venv python3-dev gcc)
    apt-get install -y -q --no-install-recommends "${packages[@]}" \
        || { apt-get update -q && apt-get install -y -q --no-install-recommends "${packages[@]}"; } \
        || die "apt-get could not install ${packages[*]}"
fi
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "preftable needs Python 3.11 or newer (Raspberry Pi OS bookworm has it)"

# 2. The service user and its device groups.
for group in "${groups[@]}"; do
    if ! getent group "$group" >/dev/null; then
        say "creating missing group $group"
        groupadd --system "$group"
    fi
done
group_list=$(IFS=,; echo "${groups[*]}")
if id -u "$user" >/dev/null 2>&1; then
    usermod --append --groups "$group_list" "$user"
    say "user $user exists; groups $group_list ensured"
else
    useradd --system --user-group --groups "$group_list" --home-dir /var/lib/preftable \
        --no-create-home --shell /usr/sbin/nologin --comment "preftable card table" "$user"
    say "created system user $user (groups $group_list)"
fi

# 3. The program, in its own venv.
if [[ ! -x $prefix/venv/bin/python ]]; then
    say "creating the venv $prefix/venv"
    mkdir -p "$prefix"
    python3 -m venv "$prefix/venv"
fi
# The board decides the GPIO library.  RPi.GPIO cannot drive a Pi 5's pins (its RP1 chip):
# there the rpi-lgpio drop-in provides the same "RPi.GPIO" module.  Both packages write the
# same RPi/GPIO files, so RPi.GPIO must never be installed beside it: the [pi5] extra leaves
# out mfrc522 (whose only dependency is RPi.GPIO), installed here without its dependencies.
model_file=${PREFTABLE_MODEL_FILE:-/proc/device-tree/model}
model=$(tr -d '\0' <"$model_file" 2>/dev/null || true)
case $model in
    "Raspberry Pi 5"* | "Raspberry Pi Compute Module 5"*) extra=pi5 ;;   # also the Pi 500
    *) extra=pi ;;
esac
pip=("$prefix/venv/bin/pip")
say "installing preftable[$extra] from $repo into $prefix/venv (board: ${model:-unknown})"
"${pip[@]}" install --quiet --upgrade pip
if [[ $extra == pi5 ]]; then
    if "${pip[@]}" show --quiet RPi.GPIO >/dev/null 2>&1; then
        say "removing RPi.GPIO (it cannot drive a Pi 5 and overwrites rpi-lgpio's files)"
        "${pip[@]}" uninstall --quiet --yes RPi.GPIO || die "pip could not uninstall RPi.GPIO"
        reinstall=(--force-reinstall)      # the uninstall took the files the two share
    else
        reinstall=()
    fi
    "${pip[@]}" install --quiet --upgrade "${repo}[pi5]" \
        || die "pip could not install ${repo}[pi5] (see the messages above)"
    "${pip[@]}" install --quiet --upgrade "${reinstall[@]}" --no-deps "rpi-lgpio>=0.6" \
        || die "pip could not install rpi-lgpio (see the messages above)"
    "${pip[@]}" install --quiet --no-deps "mfrc522==0.0.7" \
        || die "pip could not install mfrc522 (see the messages above)"
else
    "${pip[@]}" install --quiet --upgrade "${repo}[pi]" \
        || die "pip could not install ${repo}[pi] (see the messages above)"
fi
[[ -x $prefix/venv/bin/preftable ]] || die "$prefix/venv/bin/preftable missing after pip install"
if [[ -f $repo/README.md ]]; then
    install -m 0644 "$repo/README.md" "$prefix/README.md"
fi

# 4. Config skeleton (never overwrites the player's config).
install -d -m 0755 "$conf_dir"
if [[ -e $conf_dir/config.toml ]]; then
    say "keeping the existing $conf_dir/config.toml"
else
    if [[ -f $repo/systemd/config.toml ]]; then
        install -m 0644 "$repo/systemd/config.toml" "$conf_dir/config.toml"
    else
        cat >"$conf_dir/config.toml" <<'TOML'
# preftable config: see FORMATS.md ("Config file") and RULES.md.
[table]
players = 3
first_dealer = "seat1"
deck = "deck.toml"               # beside this file; write it with: preftable enroll --config THIS_FILE

[rules]
TOML
        chmod 0644 "$conf_dir/config.toml"
    fi
    say "wrote the config skeleton $conf_dir/config.toml: edit it (seats, names, rules, hardware)"
fi

# 5. systemd unit and udev rule.
install -D -m 0644 "$here/$service" "$unit_dir/$service"
install -D -m 0644 "$here/99-preftable-hub.rules" "$udev_dir/99-preftable-hub.rules"
say "installed $unit_dir/$service and $udev_dir/99-preftable-hub.rules"
udevadm control --reload
udevadm trigger --subsystem-match=tty --action=change || say "warning: udevadm trigger failed; replug the hub"

if [[ ! -e /dev/spidev0.0 ]]; then
    if command -v raspi-config >/dev/null; then
        say "SPI is off: enabling it (raspi-config nonint do_spi 0); reboot afterwards"
        raspi-config nonint do_spi 0 || say "warning: could not enable SPI; use raspi-config > Interface Options"
    else
        say "warning: /dev/spidev0.0 missing: enable SPI (dtparam=spi=on in /boot/firmware/config.txt) and reboot"
    fi
fi

# Readers on SPI bus 1 (bus = 1 in the config) need the spi1 overlay with 3 chip selects.
config_txt=${PREFTABLE_CONFIG_TXT:-/boot/firmware/config.txt}
if grep -Eq '^[^#]*\bbus[[:space:]]*=[[:space:]]*1\b' "$conf_dir/config.toml"; then
    if [[ ! -f $config_txt ]]; then
        say "warning: readers on SPI bus 1 need dtoverlay=spi1-3cs in $config_txt, which is missing"
    elif grep -Eq '^[[:space:]]*dtoverlay=spi1-3cs' "$config_txt"; then
        say "SPI bus 1: dtoverlay=spi1-3cs already in $config_txt"
    else
        printf '\n# preftable: RC522 readers on SPI bus 1 (GPIO 16-21)\ndtoverlay=spi1-3cs\n' >>"$config_txt"
        say "added dtoverlay=spi1-3cs to $config_txt for the readers on SPI bus 1: reboot to enable it"
    fi
fi

# 6. Start (or restart, on an upgrade) -- once there is a deck: without one the service
# refuses to start (every card would be an unknown tag) and systemd would retry it for ever.
systemctl daemon-reload
deck=$conf_dir/deck.toml
if [[ ! -e $deck ]] && grep -Eq '^[[:space:]]*deck[[:space:]]*=[[:space:]]*"deck\.toml"' "$conf_dir/config.toml"; then
    systemctl enable "$service"
    say "enabled $service; it starts once the deck is enrolled (docs/hardware-test.md):"
    say "  sudo $prefix/venv/bin/preftable enroll --config $conf_dir/config.toml"
    say "  sudo systemctl start preftable"
    exit 0
fi
was_active=0
systemctl --quiet is-active "$service" && was_active=1
systemctl enable --now "$service"
if [[ $was_active -eq 1 ]]; then
    systemctl restart "$service"
    say "restarted $service with the new version"
fi
if systemctl --quiet is-active "$service"; then
    say "done: $service is running; logs: journalctl -u preftable -f; game logs: /var/lib/preftable"
else
    say "warning: $service is not running; see: systemctl status preftable; journalctl -u preftable -e"
fi
