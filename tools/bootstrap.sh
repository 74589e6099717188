#!/usr/bin/env bash
# Installs what etdeploy needs on a Debian machine: toolchains and emulators (apt), and a venv at
# .venv with the build tools, the package (editable) and the pinned executorch. Idempotent: a
# second run checks and returns in about a second.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"

APT_PKGS=(gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
          gcc-xtensa-lx106 gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm qemu-system-misc qemu-user
          clang libclang-rt-14-dev adb gdb-multiarch)   # adb: deploy to Android devices; clang + libFuzzer/ASan/UBSan runtimes: tests/test_robustness.py;
          # gdb-multiarch: flashing through any GDB server, etdeploy debug
APT_PKGS+=(lava-dispatcher lavacli)   # LAVA's dispatcher (lava-run, job schema) and client: tests/test_lava.py
APT_PKGS+=(cmake)   # tests/test_lib.py: a user's own CMake project built against the generated etmodel package
APT_PKGS+=(libxnnpack-dev libpthreadpool-dev libcpuinfo-dev)   # XnnpackBackend programs on the host board
APT_PKGS+=(${ETDEPLOY_EXTRA_APT:-})

log() { printf '[bootstrap] %s\n' "$*" >&2; }

missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  line="apt-get install -y --no-install-recommends ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    log "installing ${#missing[@]} Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # Recommends would pull ~4 GB of QEMU GUI packages.
    $line -qq >/dev/null
  else
    log "missing Debian packages; as root run:"
    printf 'apt-get update && %s\n' "$line"
    exit 1
  fi
fi

stamp="$VENV/.etdeploy-stamp"
want="$(cat "$ROOT/requirements.txt" "$ROOT/requirements-ml.txt" "$ROOT/requirements-arm.txt" "$ROOT/requirements-vision.txt" "$ROOT/pyproject.toml" | sha256sum | cut -c1-16)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
if [[ ! -x "$VENV/bin/python" ]]; then
  log "creating venv at $VENV"
  "$PY" -m venv "$VENV"
fi
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check -q "$@"; }
log "installing build tools"
pip install -r "$ROOT/requirements.txt"
log "installing torch 2.13.0 + executorch 1.5.1 (about 2 minutes the first time)"
# torch first and alone: executorch's wheel declares no torch pin, the order keeps the CPU build.
pip install torch==2.13.0
pip install -r "$ROOT/requirements-ml.txt"
log "installing the Arm export tools (Vela, TOSA) for the Ethos-U flow"
pip install -r "$ROOT/requirements-arm.txt"
log "installing torchvision's model definitions (real-model tests), without its dependencies"
pip install --no-deps -r "$ROOT/requirements-vision.txt"
pip install --no-deps -e "$ROOT"
echo "$want" > "$stamp"
log "ready: $VENV"
