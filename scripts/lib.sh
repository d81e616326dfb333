# Shared steps of scripts/demo, scripts/test and scripts/train; sourced, not run.
# Every step checks first and only does what is missing, so a second run is quick.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

# Debian packages of the fonts the typeset training decks (font<N>) set their marks in;
# table/vision/typeset.py names the same packages in its error message.
FONT_PACKAGES=(
    fonts-urw-base35 fonts-texgyre fonts-freefont-ttf fonts-lato fonts-roboto fonts-open-sans
    fonts-linuxlibertine fonts-cantarell fonts-ebgaramond fonts-crosextra-carlito
    fonts-crosextra-caladea fonts-dejavu-extra fonts-cmu
)

say() { printf '[ddz-table] %s\n' "$*" >&2; }

# Installs the Debian packages named as arguments that are not installed yet.
apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
}

# Puts the bonded card theme, a training design, where the other themes are. Only the
# aisleriot package ships it, and installing that pulls in a desktop; the file is
# taken from the package instead.
bonded_theme() {
    local target=/usr/share/aisleriot/cards/bonded.svgz
    [ -f "$target" ] && return 0
    local tmp
    tmp=$(mktemp -d)
    chmod 755 "$tmp"  # apt's download user writes there
    say "taking the bonded card theme from the aisleriot package"
    # A machine whose packages were all installed may never have fetched the lists.
    (cd "$tmp" && { apt-get download aisleriot >/dev/null 2>&1 \
        || { $SUDO apt-get update -qq && apt-get download aisleriot >/dev/null; }; })
    dpkg-deb --fsys-tarfile "$tmp"/aisleriot_*.deb | tar -x -C "$tmp" ./usr/share/aisleriot/cards/bonded.svgz
    $SUDO install -m 644 "$tmp/usr/share/aisleriot/cards/bonded.svgz" "$target"
    rm -rf "$tmp"
}

# Makes .venv and installs the package (with the given extras) into it.
python_env() {
    local extras="$1"
    local python=""
    for candidate in python3.13 python3.12 python3.11 python3; do
        if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            python="$candidate"; break
        fi
    done
    [ -n "$python" ] || { say "Python 3.11 or newer is needed"; exit 1; }
    if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
        apt_install python3-venv
    fi
    [ -x "$VENV/bin/python" ] || "$python" -m venv "$VENV"
    local stamp="$VENV/.installed-$extras"
    if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ]; then
        say "installing Python packages into .venv"
        "$VENV/bin/python" -m pip install -q --upgrade pip
        "$VENV/bin/python" -m pip install -q -e "$ROOT[$extras]"
        touch "$stamp"
    fi
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Starts Mosquitto on 127.0.0.1:1883 unless something answers there.
ensure_mosquitto() {
    port_open 1883 && return 0
    apt_install mosquitto
    say "starting Mosquitto on 127.0.0.1:1883"
    $SUDO mosquitto -d -c /etc/mosquitto/mosquitto.conf
    for _ in $(seq 50); do port_open 1883 && return 0; sleep 0.1; done
    say "Mosquitto did not start"; exit 1
}

# Starts PostgreSQL on 127.0.0.1:5432 with a database `test` unless one answers.
ensure_postgres() {
    if ! port_open 5432; then
        apt_install postgresql
        say "starting PostgreSQL on 127.0.0.1:5432"
        local version
        version=$(ls /etc/postgresql | sort -V | tail -n 1)
        $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start
        for _ in $(seq 100); do port_open 5432 && break; sleep 0.1; done
    fi
    if ! psql -h 127.0.0.1 -U postgres -d test -c 'select 1' >/dev/null 2>&1; then
        $SUDO -u postgres psql -q -c 'create database test' 2>/dev/null || true
        $SUDO -u postgres psql -q -c "alter user postgres password 'postgres'" 2>/dev/null || true
    fi
}
