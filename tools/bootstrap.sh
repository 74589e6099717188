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

# XNNPACK for android-arm64 (boards/android-arm64.toml [xnnpack]): Debian's arm64 packages are glibc shared
# objects and their multiarch -dev packages conflict with the host's, so they are downloaded, not installed,
# and unpacked into the project's cache; the headers are the host's (same version). Done once per clone.
ARM64_XNN_PKGS=(libxnnpack0:arm64 libpthreadpool0:arm64 libcpuinfo0:arm64)
ARM64_XNN="$ROOT/.cache/arm64-xnnpack"
arm64_xnnpack() {
  local lib="$ARM64_XNN/root/usr/lib/aarch64-linux-gnu" inc="$ARM64_XNN/root/usr/include"
  if [[ -f "$lib/libXNNPACK.so.0" && -f "$lib/libpthreadpool.so.0" && -f "$lib/libcpuinfo.so.0" \
        && -f "$inc/xnnpack.h" && -f "$inc/pthreadpool.h" ]]; then
    return 0
  fi
  if ! dpkg --print-foreign-architectures | grep -qx arm64 \
      || ! apt-cache show libxnnpack0:arm64 >/dev/null 2>&1; then
    if [[ $(id -u) -ne 0 ]]; then
      log "the arm64 XNNPACK (android-arm64) needs Debian's arm64 package lists; as root run:"
      printf 'dpkg --add-architecture arm64 && apt-get update\n'
      return 1
    fi
    log "adding Debian's arm64 architecture (package lists only; nothing arm64 is installed)"
    dpkg --add-architecture arm64
    apt-get update -qq
  fi
  log "unpacking ${ARM64_XNN_PKGS[*]} into $ARM64_XNN/root"
  rm -rf "$ARM64_XNN/debs" "$ARM64_XNN/root.tmp"
  mkdir -p "$ARM64_XNN/debs" "$ARM64_XNN/root.tmp/usr/include"
  # as root apt downloads unsandboxed into a directory _apt cannot read: harmless, said once
  (cd "$ARM64_XNN/debs" && apt-get download -qq "${ARM64_XNN_PKGS[@]}" 2> >(grep -v "unsandboxed" >&2))
  for deb in "$ARM64_XNN"/debs/*.deb; do dpkg-deb -x "$deb" "$ARM64_XNN/root.tmp"; done
  cp /usr/include/xnnpack.h /usr/include/pthreadpool.h "$ARM64_XNN/root.tmp/usr/include/"
  rm -rf "$ARM64_XNN/root" && mv "$ARM64_XNN/root.tmp" "$ARM64_XNN/root"
}
arm64_xnnpack

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
