# Sourced by packaging/build-deb.sh and benches/*.sh: the target the package
# ships, and the flags it is built with. Sets `triple` and `rustflags`.
#
# The shipped binary is static musl (x86_64-unknown-linux-musl, as ripgrep
# ships): no dynamic loader and no glibc start-up. A static glibc binary
# probes the CPU's caches with dozens of CPUID instructions before `main`
# (each a trap to the hypervisor in a VM: ~0.5 ms of every start on the
# machine docs/performance.md was measured on). Set
# SAFE_EXEC_TRIPLE=x86_64-unknown-linux-gnu to build the static-pie glibc
# binary instead.
triple=${SAFE_EXEC_TRIPLE:-x86_64-unknown-linux-musl}
rustflags=
case $triple in
  *-linux-gnu) rustflags="-C target-feature=+crt-static" ;;
esac
if [ ! -d "$(rustc --print sysroot)/lib/rustlib/$triple/lib" ]; then
  if command -v rustup >/dev/null 2>&1; then
    echo "shipped-target: installing the Rust standard library for $triple (rustup target add)" >&2
    rustup target add "$triple" >&2 || {
      echo "shipped-target: cannot install $triple; install it (rustup target add $triple) or set SAFE_EXEC_TRIPLE=x86_64-unknown-linux-gnu" >&2
      return 1 2>/dev/null || exit 1
    }
  else
    echo "shipped-target: the Rust standard library for $triple is missing and rustup is not installed; install it or set SAFE_EXEC_TRIPLE=x86_64-unknown-linux-gnu" >&2
    return 1 2>/dev/null || exit 1
  fi
fi
