//! The `safe-exec` binary: all logic lives in the library.
//!
//! Its own entry point rather than the Rust runtime's: `sys::start::init`
//! does what the runtime's start-up did that safe-exec needs, without the
//! rest (see there; docs/performance.md).
#![no_main]

/// Counts live heap bytes so that deciding can be bounded (`bound::arm`).
#[global_allocator]
static ALLOCATOR: safe_exec::bound::Counting = safe_exec::bound::Counting;

/// The C entry point. The arguments are recorded here for
/// `sys::start::args_os` (the standard library's `std::env::args_os` has
/// them on glibc only).
#[unsafe(no_mangle)]
extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // SAFETY: first thing in the process, single-threaded; `argc` and
    // `argv` are the C runtime's.
    unsafe { safe_exec::sys::start::init(argc, argv) };
    // `exit` flushes standard output, as returning from a Rust `main` would.
    std::process::exit(safe_exec::cli::main());
}
