//! The `safe-exec` binary: all logic lives in the library.

/// Counts live heap bytes so that deciding can be bounded (`bound::arm`).
#[global_allocator]
static ALLOCATOR: safe_exec::bound::Counting = safe_exec::bound::Counting;

fn main() {
    std::process::exit(safe_exec::cli::main());
}
