//! The `safe-exec` binary: all logic lives in the library.

fn main() {
    std::process::exit(safe_exec::cli::main());
}
