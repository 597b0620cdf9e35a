//! The `safe-exec` binary: all logic lives in the library.
//!
//! Its own entry point rather than the Rust runtime's: `sys::start::init`
//! does what the runtime's start-up did that safe-exec needs, without the
//! rest (see there; docs/performance.md).
#![no_main]

/// Counts live heap bytes so that deciding can be bounded (`bound::arm`).
#[global_allocator]
static ALLOCATOR: safe_exec::bound::Counting = safe_exec::bound::Counting;

/// The C entry point. `std::env::args` still works: the standard library
/// takes the arguments from glibc's constructor call, not from here.
#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    // SAFETY: first thing in the process, single-threaded.
    unsafe { safe_exec::sys::start::init() };
    // `exit` flushes standard output, as returning from a Rust `main` would.
    std::process::exit(safe_exec::cli::main());
}
