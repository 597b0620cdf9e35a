#!/usr/bin/env bash
# Builds the Debian package: target/debian/safe-exec_VERSION-1_ARCH.deb.
#
#   bash packaging/build-deb.sh            # dist build (LTO), assets, .deb, lintian
#   SAFE_EXEC_NO_BUILD=1 bash packaging/build-deb.sh   # reuse target/x86_64-unknown-linux-musl/dist/safe-exec
#
# Installs cargo-deb from crates.io when it is missing. The man page and the
# completions are generated here by the binary that goes into the package
# (`safe-exec man`, `safe-exec completions SHELL`), so they always describe it.
# Prints the path of the .deb on the last line of stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "build-deb: $*" >&2; }

if ! command -v cargo-deb >/dev/null 2>&1 && [ ! -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo-deb" ]; then
  log "installing cargo-deb from crates.io"
  cargo install cargo-deb --locked --quiet >&2
fi
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

# The shipped binary is linked statically (musl, packaging/shipped-target.sh):
# no dynamic loader and no glibc start-up at each start, which is most of
# safe-exec's own start-up cost (docs/performance.md). `--target` is needed
# so build scripts and proc-macros stay dynamic.
. packaging/shipped-target.sh   # sets triple, rustflags
bin=${CARGO_TARGET_DIR:-target}/$triple/dist/safe-exec
if [ -z "${SAFE_EXEC_NO_BUILD:-}" ] || [ ! -x "$bin" ]; then
  log "cargo build --profile dist --target $triple, static (slow: LTO, one codegen unit)"
  RUSTFLAGS="$rustflags" cargo build --profile dist --locked --quiet --target "$triple" --bin safe-exec >&2
fi

out=target/packaging
rm -rf "$out"
mkdir -p "$out/completions"
"$bin" man | gzip -9n > "$out/safe-exec.1.gz"
"$bin" completions bash > "$out/completions/safe-exec"
"$bin" completions zsh > "$out/completions/_safe-exec"
"$bin" completions fish > "$out/completions/safe-exec.fish"

log "cargo deb"
deb=$(cargo deb --no-build --no-strip --locked --profile dist --target "$triple" | tail -n 1)

if [ "${SAFE_EXEC_LINTIAN:-}" = skip ]; then
  log "lintian skipped (SAFE_EXEC_LINTIAN=skip)"
elif command -v lintian >/dev/null 2>&1; then
  log "lintian (errors fail the build; warnings are listed in docs/packaging.md)"
  lintian --fail-on error --suppress-tags-from-file packaging/debian/lintian-suppressed "$deb" >&2
else
  log "lintian not installed (apt-get install lintian); skipped"
fi
echo "$deb"
