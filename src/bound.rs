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
//! - **time**: a real-time interval timer (`setitimer`) delivers `SIGALRM`
//!   at the deadline; its handler writes the prepared refusal and `_exit`s
//!   (`write` and `_exit` are async-signal-safe);
//! - **panics**: the panic hook does the same;
//! - **crashes**: handlers for the fatal signals (`SIGABRT` from an
//!   allocation failure under an address-space limit or from `abort`,
//!   `SIGSEGV` including a stack overflow, `SIGBUS`, `SIGILL`, `SIGFPE`,
//!   `SIGSYS`, `SIGTRAP`) do the same, on the alternate signal stack.
//!
//! Only the first failure answers: the failing path blocks every signal,
//! and a second thread that fails meanwhile waits for the first to end the
//! process. [`disarm`] lifts all of them before a command is run.

mod arena;

use arena::Arena;
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
use std::alloc::{GlobalAlloc, Layout};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::time::Duration;

/// Live heap bytes a decision may use. A normal decision uses well under
/// 10 MiB (the string is at most `shell.max_length`, 256 KiB by default).
pub const MEMORY_LIMIT: usize = 1 << 30;

/// Seconds a decision may take. A normal decision takes milliseconds.
pub const TIME_LIMIT_SECONDS: u32 = 10;

/// The refusal given when a bound is hit: what to write on standard output
/// and standard error, and the exit code.
#[derive(Debug, Clone, Default)]
pub struct Refusal {
    /// Written to standard output.
    pub stdout: Vec<u8>,
    /// Written to standard error.
    pub stderr: Vec<u8>,
    /// The exit code.
    pub code: i32,
}

static LIMIT: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The refusal for a crash, a panic or the memory bound.
static ANSWER: AtomicPtr<Refusal> = AtomicPtr::new(std::ptr::null_mut());
/// The refusal for the time bound (`ANSWER` when null).
static ANSWER_LATE: AtomicPtr<Refusal> = AtomicPtr::new(std::ptr::null_mut());
/// Set by the first failure: only one answer is ever written.
static FIRED: AtomicBool = AtomicBool::new(false);

/// The fatal signals whose default action would end the process without an
/// answer.
const FATAL: [Signal; 7] = [
    Signal::SIGABRT,
    Signal::SIGSEGV,
    Signal::SIGBUS,
    Signal::SIGILL,
    Signal::SIGFPE,
    Signal::SIGSYS,
    Signal::SIGTRAP,
];

/// The actions the fatal signals had before [`arm`], put back by [`disarm`].
static SAVED_ACTIONS: Mutex<Vec<(Signal, SigAction)>> = Mutex::new(Vec::new());

/// The global allocator of the `safe-exec` binary: the system allocator
/// behind a small arena (`arena.rs`), counting live bytes so that [`arm`]
/// can bound them.
pub struct Counting;

// SAFETY: every method delegates to `Arena`, which upholds the GlobalAlloc
// contract; the counters are plain atomics and `fail` never returns.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.charge(layout.size());
        // SAFETY: same layout contract as the caller's.
        unsafe { Arena.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.charge(layout.size());
        // SAFETY: same layout contract as the caller's.
        unsafe { Arena.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `Arena` with `layout`.
        unsafe { Arena.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            self.charge(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: `ptr` was allocated by `Arena` with `layout`.
        unsafe { Arena.realloc(ptr, layout, new_size) }
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

/// Writes the prepared refusal and ends the process.
fn fail() -> ! {
    fail_with(&ANSWER)
}

/// Writes the refusal `which` points to (or the crash refusal) and ends the
/// process. Uses only `sigprocmask`, atomics, `write`, `pause` and `_exit`
/// (async-signal-safe, no allocation, no lock).
fn fail_with(which: &AtomicPtr<Refusal>) -> ! {
    // Blocking signals in the calling thread (`pthread_sigmask`) is
    // async-signal-safe. From here no timer or other signal can start a
    // second answer in this thread.
    let _ = SigSet::all().thread_block();
    LIMIT.store(0, Ordering::Relaxed);
    if FIRED.swap(true, Ordering::AcqRel) {
        // Another thread is answering and will end the process.
        loop {
            // Waits; every signal is blocked in this thread.
            nix::unistd::pause();
        }
    }
    let mut a = which.load(Ordering::Acquire);
    if a.is_null() {
        a = ANSWER.load(Ordering::Acquire);
    }
    let code = if a.is_null() {
        125
    } else {
        // SAFETY: ANSWER and ANSWER_LATE only ever hold pointers leaked from
        // a Box in `arm_bounds`, never freed.
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
    fail_with(&ANSWER_LATE);
}

extern "C" fn on_fatal(_: libc::c_int) {
    fail();
}

/// Arms the bounds: from now until [`disarm`], exceeding [`MEMORY_LIMIT`]
/// or [`TIME_LIMIT_SECONDS`], panicking or crashing writes `stdout` and
/// `stderr` and exits with `code`.
pub fn arm(stdout: Vec<u8>, stderr: Vec<u8>, code: i32) {
    arm_bounds(
        Refusal {
            stdout,
            stderr,
            code,
        },
        None,
        memory_limit(),
        Duration::from_secs(u64::from(TIME_LIMIT_SECONDS)),
    );
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

/// [`arm`] with explicit refusals and limits: `failed` for the memory
/// bound, a panic or a crash; `late` (or `failed`) for the time bound;
/// `memory` live-heap bytes on top of what is live now; `time` from now
/// (zero: no time bound).
pub fn arm_bounds(failed: Refusal, late: Option<Refusal>, memory: usize, time: Duration) {
    // Earlier answers, if any, are leaked on purpose: a signal handler may
    // be reading them.
    ANSWER.store(Box::into_raw(Box::new(failed)), Ordering::Release);
    ANSWER_LATE.store(
        late.map_or(std::ptr::null_mut(), |l| Box::into_raw(Box::new(l))),
        Ordering::Release,
    );
    LIMIT.store(
        LIVE.load(Ordering::Relaxed).saturating_add(memory),
        Ordering::Relaxed,
    );
    std::panic::set_hook(Box::new(|info| {
        let msg = format!("safe-exec: internal error: {info}\n");
        write_all(2, msg.as_bytes());
        fail();
    }));
    let mut saved = match SAVED_ACTIONS.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    for sig in FATAL {
        if let Some(old) = install(sig, on_fatal, SaFlags::SA_ONSTACK)
            && saved.iter().all(|(s, _)| *s != sig)
        {
            saved.push((sig, old));
        }
    }
    drop(saved);
    if !time.is_zero() {
        install(Signal::SIGALRM, on_alarm, SaFlags::empty());
        set_timer(time);
    }
}

/// Installs `handler` for `sig` (all signals blocked while it runs) and
/// returns the previous action.
fn install(sig: Signal, handler: extern "C" fn(libc::c_int), flags: SaFlags) -> Option<SigAction> {
    let action = SigAction::new(SigHandler::Handler(handler), flags, SigSet::all());
    // SAFETY: the handlers installed only call async-signal-safe functions
    // (see `fail_with`).
    unsafe { sigaction(sig, &action) }.ok()
}

/// Lifts the bounds (before a command is run).
pub fn disarm() {
    LIMIT.store(0, Ordering::Relaxed);
    set_timer(Duration::ZERO);
    let _ = std::panic::take_hook();
    let saved = std::mem::take(&mut *match SAVED_ACTIONS.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    });
    for (sig, old) in saved {
        // SAFETY: puts back the action the kernel returned in `arm_bounds`.
        let _ = unsafe { sigaction(sig, &old) };
    }
}

fn set_timer(time: Duration) {
    let t = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: libc::timeval {
            tv_sec: time.as_secs().min(i32::MAX as u64) as _,
            tv_usec: time.subsec_micros() as _,
        },
    };
    // SAFETY: `t` is a valid itimerval; the old value is not wanted.
    unsafe {
        libc::setitimer(libc::ITIMER_REAL, &t, std::ptr::null_mut());
    }
}
