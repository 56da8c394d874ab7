#!/usr/bin/env bash
# Installs every build and test dependency of kiln on Debian 12 (run as root).
# Idempotent: packages already present are left alone, so CI pays for this once.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git python3 python3-venv
  llvm-22-dev libmlir-22-dev mlir-22-tools lld-22 liblld-22-dev clang-22 libclang-rt-22-dev
  libzstd-dev zlib1g-dev libflatbuffers-dev flatbuffers-compiler libxxhash-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev libfftw3-dev libdnnl-dev nlohmann-json3-dev
  libgloo-dev  # host collectives: Gloo's TCP transport and algorithms (headers, libgloo.so, CMake config)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all Debian dependencies present"
