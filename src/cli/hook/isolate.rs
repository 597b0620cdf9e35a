//! Never fail open: the hook decides under a memory and a time bound, and
//! every abnormal end of the decision still answers with a refusal (exit 2,
//! or `deny` under `--json`), never with silence or a crash that an agent
//! reads as "no objection".
//!
//! The refusals are rendered before deciding (one for a crash, a panic or
//! the memory bound; one for the time bound), so that giving one needs no
//! allocation: `crate::bound` writes them with `write(2)` and ends the
//! process with `_exit(2)` from the counting allocator (live-heap bound,
//! `SAFE_EXEC_DECIDE_MEMORY_LIMIT`), the panic hook, a `SIGALRM` interval
//! timer (`SAFE_EXEC_HOOK_TIMEOUT_MS`) and the handlers of the fatal
//! signals: `SIGABRT` (an allocation that fails under the address-space
//! limit `SAFE_EXEC_HOOK_MEMORY_MB`, which is `RLIMIT_AS`, soft limit only,
//! or any `abort`), `SIGSEGV` (a stack overflow included: the handler runs
//! on the alternate signal stack), `SIGBUS`, `SIGILL`, `SIGFPE`, `SIGSYS`,
//! `SIGTRAP`. Programs the decision starts (validators, hooks) get the
//! original address-space limit back before they run, and are killed with
//! the hook (`PR_SET_PDEATHSIG`).
//!
//! This used to be a forked child watched by its parent; the fork cost
//! 0.4-0.9 ms per call. What the parent caught, the handlers above catch in
//! process, with one exception that no process can catch for itself:
//! `SIGKILL` (the kernel's OOM killer, or another process of the same
//! user). The address-space and live-heap bounds keep the decision far
//! below the point where the OOM killer would choose it.
//!
//! Limits: `SAFE_EXEC_HOOK_MEMORY_MB` (default 1024) and
//! `SAFE_EXEC_HOOK_TIMEOUT_MS` (default 8000; keep it below the `timeout`
//! of the agent's hook entry, or the agent's own time-out fires first and
//! both agents treat that as a non-blocking error). Changing them can only
//! turn a decision into a refusal, never into an allow.

use std::io::Write;
use std::time::Duration;

use nix::sys::resource::{Resource, getrlimit, setrlimit};
use std::sync::atomic::Ordering;

use crate::sys::rlimit::SAVED_AS;
pub use crate::sys::rlimit::restore_limits;

use super::Rendered;

/// Default memory limit for deciding (MiB).
pub const DEFAULT_MEMORY_MB: u64 = 1024;
/// Default time limit for deciding (ms).
pub const DEFAULT_TIMEOUT_MS: u64 = 8000;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|v| *v > 0)
        .unwrap_or(default)
}

/// Decides under the bounds (see the module) and prints the answer; `fail`
/// renders the refusal given when deciding ends abnormally. Returns the
/// exit code.
pub fn decide_isolated(
    decide: impl FnOnce() -> Rendered,
    fail: impl Fn(String) -> Rendered,
) -> i32 {
    let memory = env_u64("SAFE_EXEC_HOOK_MEMORY_MB", DEFAULT_MEMORY_MB);
    let timeout = Duration::from_millis(env_u64("SAFE_EXEC_HOOK_TIMEOUT_MS", DEFAULT_TIMEOUT_MS));
    let refusal = |r: Rendered| crate::bound::Refusal {
        stdout: r.stdout.into_bytes(),
        stderr: r.stderr.into_bytes(),
        code: r.code,
    };
    let failed = refusal(fail(
        "deciding failed (a crash, a panic, or it ran out of memory: SAFE_EXEC_HOOK_MEMORY_MB, SAFE_EXEC_DECIDE_MEMORY_LIMIT)"
            .into(),
    ));
    let late = refusal(fail(format!(
        "deciding took longer than {} ms (SAFE_EXEC_HOOK_TIMEOUT_MS)",
        timeout.as_millis()
    )));
    crate::bound::arm_bounds(failed, Some(late), crate::bound::memory_limit(), timeout);
    let lowered = lower_address_space(memory);
    let rendered = decide();
    if lowered {
        restore_limits();
    }
    crate::bound::disarm();
    print(&rendered)
}

/// Lowers the address-space soft limit to `memory_mb` (never raises it).
fn lower_address_space(memory_mb: u64) -> bool {
    let bytes = memory_mb.saturating_mul(1024 * 1024);
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_AS) else {
        return false;
    };
    SAVED_AS.store(soft, Ordering::Relaxed);
    setrlimit(Resource::RLIMIT_AS, bytes.min(hard).min(soft), hard).is_ok()
}

fn print(r: &Rendered) -> i32 {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(r.stdout.as_bytes());
    let _ = out.flush();
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(r.stderr.as_bytes());
    r.code
}
