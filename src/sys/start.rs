//! What the process needs set up before `main` runs, done by safe-exec's
//! own entry point (`src/main.rs` is `#![no_main]`) instead of the Rust
//! runtime's: the runtime's start-up also reads `/proc/self/maps` through
//! glibc's `pthread_getattr_np` (to locate the main thread's stack guard for
//! its stack-overflow message) and maps a fresh alternate signal stack: ~100k
//! instructions and seven system calls at every start, a tenth of what
//! `safe-exec check` cost. What it did that matters is kept, the same way:
//!
//! - standard descriptors 0, 1 and 2 that are closed are opened on
//!   `/dev/null` (a file safe-exec opens later must never become the
//!   command's standard input or output, or receive its error messages);
//! - `SIGPIPE` is ignored (a write to a closed pipe is an `EPIPE` error the
//!   code handles, not a silent death); children still start with it at its
//!   default (`std::process::Command` and the run path reset it);
//! - the main thread has an alternate signal stack, so that the handlers of
//!   `crate::bound` (`SA_ONSTACK`) answer with the prepared refusal even
//!   when deciding overflows the stack.
//!
//! Threads started with `std::thread` get their own guard pages as always.

use std::ffi::{CStr, OsString, c_char, c_int};
use std::os::unix::ffi::OsStringExt;
use std::ptr::addr_of_mut;
use std::sync::OnceLock;

/// The process's arguments as the C entry point received them, recorded by
/// [`init`]: the standard library collects them from glibc's constructor
/// call, which musl does not make, so with `#![no_main]` its
/// `std::env::args_os` is empty there.
static ARGS: OnceLock<Vec<OsString>> = OnceLock::new();

/// The arguments (`argv`, program name first; empty when the process was
/// started with none): those [`init`] recorded, else the standard library's
/// (the library's own tests and other binaries never call `init`).
pub fn args_os() -> Vec<OsString> {
    match ARGS.get() {
        Some(a) => a.clone(),
        None => std::env::args_os().collect(),
    }
}

/// Size of the main thread's alternate signal stack: the handlers only
/// `write` and `_exit`; glibc's `SIGSTKSZ` is 8 KiB, and `AT_MINSIGSTKSZ`
/// (the kernel's need for the signal frame) is ~3.5 KiB even with AVX-512.
const ALT_STACK_SIZE: usize = 64 * 1024;

/// The alternate signal stack (in `.bss`: costs nothing until a signal
/// actually runs on it).
#[repr(C, align(16))]
struct AltStack([u8; ALT_STACK_SIZE]);
static mut ALT_STACK: AltStack = AltStack([0; ALT_STACK_SIZE]);

/// Sets up the process as described in the module documentation.
///
/// # Safety
///
/// Call once, first thing in `main`, while the process has one thread, with
/// `main`'s own `argc` and `argv` (`argv[0..argc]` valid C strings, or
/// `argc` 0).
pub unsafe fn init(argc: c_int, argv: *const *const c_char) {
    use nix::sys::signal::{SigHandler, Signal, signal};
    sanitize_standard_fds();
    // SAFETY: single-threaded start (the caller's contract); SIG_IGN runs
    // no handler code.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigIgn) };
    let stack = libc::stack_t {
        ss_sp: addr_of_mut!(ALT_STACK).cast(),
        ss_flags: 0,
        ss_size: ALT_STACK_SIZE,
    };
    // SAFETY: `ALT_STACK` is static, used by nothing else, and outlives the
    // thread. Failing leaves the handlers on the normal stack: only a
    // stack overflow then ends without the prepared refusal (as a crash).
    unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) };
    if !argv.is_null() {
        // SAFETY: the caller's contract on `argc` and `argv`.
        let _ = ARGS.set(unsafe { args_from(argc, argv) });
    }
}

/// The strings of `argv[0..argc]`, up to the first null entry.
///
/// # Safety
///
/// `argv` is null or points to `argc` pointers, each null or a
/// NUL-terminated string.
unsafe fn args_from(argc: c_int, argv: *const *const c_char) -> Vec<OsString> {
    let count = if argv.is_null() {
        0
    } else {
        usize::try_from(argc).unwrap_or(0)
    };
    (0..count)
        .map_while(|i| {
            // SAFETY: `i < argc` pointers (the caller's contract).
            let p = unsafe { *argv.add(i) };
            // SAFETY: a non-null entry is a NUL-terminated string (the
            // caller's contract).
            (!p.is_null())
                .then(|| OsString::from_vec(unsafe { CStr::from_ptr(p) }.to_bytes().to_vec()))
        })
        .collect()
}

/// Opens `/dev/null` on each of the descriptors 0, 1 and 2 that is closed
/// (as the Rust runtime does); aborts if that is impossible. On descriptor
/// numbers that may be closed, so not through `nix` (which wants a
/// borrowed, open descriptor).
fn sanitize_standard_fds() {
    use nix::errno::Errno;
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    loop {
        // SAFETY: polls a local array of three entries for no events.
        if unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } != -1 {
            break;
        }
        match Errno::last() {
            Errno::EINTR => continue,
            // poll cannot tell (a sandbox forbids it, no memory): ask each
            // descriptor.
            Errno::EINVAL | Errno::EAGAIN | Errno::ENOMEM => {
                for fd in 0..3 {
                    // SAFETY: F_GETFD only reads the descriptor's flags.
                    if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1
                        && Errno::last() == Errno::EBADF
                    {
                        open_dev_null();
                    }
                }
                return;
            }
            _ => std::process::abort(),
        }
    }
    for pfd in fds {
        if pfd.revents & libc::POLLNVAL != 0 {
            open_dev_null();
        }
    }
}

/// Opens `/dev/null` read-write on the lowest free descriptor (the closed
/// standard one being filled) and leaves it open; aborts if it cannot.
fn open_dev_null() {
    use nix::fcntl::{OFlag, open};
    use nix::sys::stat::Mode;
    match open("/dev/null", OFlag::O_RDWR, Mode::empty()) {
        Ok(fd) => std::mem::forget(fd),
        Err(_) => std::process::abort(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_gives_the_thread_the_alternate_stack_and_ignores_sigpipe() {
        // On a thread of its own: the alternate stack is per thread.
        std::thread::spawn(|| {
            // SAFETY: what init does is harmless to repeat in the test
            // process (descriptors 0-2 are open, SIGPIPE is ignored already
            // by the test harness's runtime, the alternate stack is this
            // thread's).
            unsafe { init(0, std::ptr::null()) };
            // SAFETY: `stack_t` is plain data; all zeroes is a valid value.
            let mut old: libc::stack_t = unsafe { std::mem::zeroed() };
            // SAFETY: reads this thread's alternate stack into a local.
            assert_eq!(unsafe { libc::sigaltstack(std::ptr::null(), &mut old) }, 0);
            assert_eq!(old.ss_sp, addr_of_mut!(ALT_STACK).cast());
            assert_eq!(old.ss_size, ALT_STACK_SIZE);
            assert_eq!(old.ss_flags & libc::SS_DISABLE, 0);
            // SAFETY: sets SIGPIPE to what it is, returning what it was.
            let now = unsafe {
                nix::sys::signal::signal(
                    nix::sys::signal::Signal::SIGPIPE,
                    nix::sys::signal::SigHandler::SigIgn,
                )
            };
            assert!(matches!(now, Ok(nix::sys::signal::SigHandler::SigIgn)));
            // Leave the thread without an alternate stack of ours (std's
            // thread exit unmaps only its own).
            let off = libc::stack_t {
                ss_sp: std::ptr::null_mut(),
                ss_flags: libc::SS_DISABLE,
                ss_size: 0,
            };
            // SAFETY: disables this thread's alternate stack.
            unsafe { libc::sigaltstack(&off, std::ptr::null_mut()) };
        })
        .join()
        .expect("thread");
    }

    #[test]
    fn arguments_are_read_up_to_argc_or_the_first_null() {
        let words = ["safe-exec", "-c", "caf\u{e9} b"];
        let owned = words.map(|s| std::ffi::CString::new(s).expect("c"));
        let mut ptrs: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let want: Vec<OsString> = words.map(OsString::from).to_vec();
        // SAFETY: `ptrs` holds three valid strings and a null, alive here;
        // a count past the null stops at the null; zero and negative counts
        // and a null argv read nothing.
        unsafe {
            assert_eq!(args_from(3, ptrs.as_ptr()), want);
            assert_eq!(args_from(9, ptrs.as_ptr()), want);
            assert_eq!(args_from(1, ptrs.as_ptr()), want[..1].to_vec());
            assert!(args_from(0, ptrs.as_ptr()).is_empty());
            assert!(args_from(-1, ptrs.as_ptr()).is_empty());
            assert!(args_from(2, std::ptr::null()).is_empty());
        }
    }
}
