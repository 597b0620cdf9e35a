//! Bounds on the memory and time of deciding (issue 13): parsing and
//! deciding a command must end, and if they cannot end within the bounds the
//! answer is a refusal, never a crash that an agent reads as "no objection".
//!
//! Before deciding, an entry point ([`arm`]) registers the refusal it would
//! give (bytes for stdout and stderr and an exit code, prepared in advance
//! so that giving it needs no allocation). Then:
//!
//! - **memory**: the binary's global allocator is [`Counting`]; while armed,
//!   an allocation that would take the live heap above the limit writes the
//!   prepared refusal and ends the process with `_exit` instead of
//!   allocating;
//! - **time**: the real-time timer (`alarm`, through `nix`) delivers `SIGALRM`
//!   at the deadline; its handler writes the prepared refusal and `_exit`s
//!   (`write` and `_exit` are async-signal-safe);
//! - **panics**: the panic hook does the same.
//!
//! [`disarm`] lifts all three before a command is run.
//!
//! `write` and `_exit` stay direct `libc` calls: they run inside the
//! allocator and a signal handler, where nothing may allocate or take a lock
//! (a `nix` call needs a `BorrowedFd` of stdout, and `std::io::stdout()` may
//! allocate its buffer on first use).

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
use nix::unistd::alarm;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Live heap bytes a decision may use. A normal decision uses well under
/// 10 MiB (the string is at most `shell.max_length`, 256 KiB by default).
pub const MEMORY_LIMIT: usize = 1 << 30;

/// Seconds a decision may take. A normal decision takes milliseconds.
pub const TIME_LIMIT_SECONDS: u32 = 10;

/// The refusal given when a bound is hit.
struct Answer {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: i32,
}

static LIMIT: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static ANSWER: AtomicPtr<Answer> = AtomicPtr::new(std::ptr::null_mut());

/// The global allocator of the `safe-exec` binary: the system allocator,
/// counting live bytes so that [`arm`] can bound them.
pub struct Counting;

// SAFETY: every method delegates to `System`, which upholds the GlobalAlloc
// contract; the counters are plain atomics and `fail` never returns.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.charge(layout.size());
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.charge(layout.size());
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            self.charge(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: `ptr` was allocated by `System` with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

impl Counting {
    fn charge(&self, size: usize) {
        let live = LIVE.fetch_add(size, Ordering::Relaxed).saturating_add(size);
        let limit = LIMIT.load(Ordering::Relaxed);
        if limit != 0 && live > limit {
            fail();
        }
    }
}

/// Writes the prepared refusal and ends the process. Uses only `write` and
/// `_exit` (async-signal-safe, no allocation).
fn fail() -> ! {
    LIMIT.store(0, Ordering::Relaxed);
    let a = ANSWER.load(Ordering::Acquire);
    let code = if a.is_null() {
        125
    } else {
        // SAFETY: ANSWER only ever holds a pointer leaked from a Box in
        // `arm`, never freed.
        let a = unsafe { &*a };
        write_all(1, &a.stdout);
        write_all(2, &a.stderr);
        a.code
    };
    // SAFETY: `_exit` ends the process without running destructors; nothing
    // else is needed here.
    unsafe { libc::_exit(code) }
}

fn write_all(fd: i32, mut buf: &[u8]) {
    while !buf.is_empty() {
        // SAFETY: `buf` is a valid slice for its length.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n <= 0 {
            return;
        }
        buf = &buf[n as usize..];
    }
}

extern "C" fn on_alarm(_: libc::c_int) {
    fail();
}

/// Arms the bounds: from now until [`disarm`], exceeding [`MEMORY_LIMIT`]
/// or [`TIME_LIMIT_SECONDS`], or panicking, writes `stdout` and `stderr`
/// and exits with `code`.
pub fn arm(stdout: Vec<u8>, stderr: Vec<u8>, code: i32) {
    arm_with(stdout, stderr, code, memory_limit(), TIME_LIMIT_SECONDS);
}

/// The live-heap bound of a decision: [`MEMORY_LIMIT`], or lower where
/// `SAFE_EXEC_DECIDE_MEMORY_LIMIT` (bytes) says so. The variable can only
/// lower the limit: it exists so that tests can show the refusal without
/// exhausting memory.
pub fn memory_limit() -> usize {
    std::env::var("SAFE_EXEC_DECIDE_MEMORY_LIMIT")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|v| *v > 0)
        .map_or(MEMORY_LIMIT, |v| v.min(MEMORY_LIMIT))
}

/// [`arm`] with explicit limits (0 seconds: no time limit).
pub fn arm_with(stdout: Vec<u8>, stderr: Vec<u8>, code: i32, memory: usize, seconds: u32) {
    let answer = Box::into_raw(Box::new(Answer {
        stdout,
        stderr,
        code,
    }));
    // The previous answer, if any, is leaked on purpose: a signal handler
    // may be reading it.
    ANSWER.store(answer, Ordering::Release);
    LIMIT.store(
        LIVE.load(Ordering::Relaxed).saturating_add(memory),
        Ordering::Relaxed,
    );
    std::panic::set_hook(Box::new(|info| {
        let msg = format!("safe-exec: internal error: {info}\n");
        write_all(2, msg.as_bytes());
        fail();
    }));
    if seconds > 0 {
        let action = SigAction::new(
            SigHandler::Handler(on_alarm),
            SaFlags::empty(),
            SigSet::empty(),
        );
        // SAFETY: installs a handler that only calls async-signal-safe
        // functions (`write`, `_exit`) and touches only atomics.
        let _ = unsafe { sigaction(Signal::SIGALRM, &action) };
        set_timer(seconds);
    }
}

/// Lifts the bounds (before a command is run).
pub fn disarm() {
    LIMIT.store(0, Ordering::Relaxed);
    set_timer(0);
    let _ = std::panic::take_hook();
}

/// Arms (or, with 0, cancels) the real-time timer that raises SIGALRM.
fn set_timer(seconds: u32) {
    if seconds == 0 {
        alarm::cancel();
    } else {
        alarm::set(seconds);
    }
}
