//! Never fail open: the hook decides in a forked child with a memory limit
//! (`RLIMIT_AS`, soft limit only; programs the decision starts, validators
//! and hooks, get the original limit back before they run) and a timer, and the parent answers. If the child
//! crashes, runs out of memory, panics, is killed or does not answer in
//! time, the parent blocks (exit 2, or `deny` under `--json`).
//!
//! Limits: `SAFE_EXEC_HOOK_MEMORY_MB` (default 1024) and
//! `SAFE_EXEC_HOOK_TIMEOUT_MS` (default 8000; keep it below the `timeout`
//! of the agent's hook entry, or the agent's own time-out fires first and
//! both agents treat that as a non-blocking error). Changing them can only
//! turn a decision into a refusal, never into an allow.

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::resource::{Resource, getrlimit, setrlimit};
use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, alarm, fork, pipe2};
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use std::sync::atomic::Ordering;

use super::Rendered;

use crate::sys::rlimit::SAVED_AS;
pub use crate::sys::rlimit::restore_limits;

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

/// Runs `decide` in a child process and prints its answer; `fail` renders
/// the refusal when the child does not answer. Returns the exit code.
pub fn decide_isolated(
    decide: impl FnOnce() -> Rendered,
    fail: impl FnOnce(String) -> Rendered,
) -> i32 {
    let memory = env_u64("SAFE_EXEC_HOOK_MEMORY_MB", DEFAULT_MEMORY_MB);
    let timeout = Duration::from_millis(env_u64("SAFE_EXEC_HOOK_TIMEOUT_MS", DEFAULT_TIMEOUT_MS));
    let rendered = match run_child(decide, memory, timeout) {
        Ok(r) => r,
        Err(why) => fail(why),
    };
    print(&rendered)
}

fn print(r: &Rendered) -> i32 {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(r.stdout.as_bytes());
    let _ = out.flush();
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(r.stderr.as_bytes());
    r.code
}

fn run_child(
    decide: impl FnOnce() -> Rendered,
    memory_mb: u64,
    timeout: Duration,
) -> Result<Rendered, String> {
    let (rd, wr) = pipe2(OFlag::O_CLOEXEC).map_err(|e| format!("cannot create a pipe: {e}"))?;
    // SAFETY: the hook is single-threaded at this point (nothing has
    // started a thread before the decision), so the child may run ordinary
    // Rust code; it leaves through `_exit` only.
    let fork = unsafe { fork() }.map_err(|e| format!("cannot fork: {e}"))?;
    let ForkResult::Parent { child: pid } = fork else {
        drop(rd);
        child(decide, wr, memory_mb, timeout);
    };
    drop(wr);
    parent(pid, rd, timeout)
}

fn child(decide: impl FnOnce() -> Rendered, wr: OwnedFd, memory_mb: u64, timeout: Duration) -> ! {
    let bytes = memory_mb.saturating_mul(1024 * 1024);
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_AS) {
        SAVED_AS.store(soft, Ordering::Relaxed);
        let _ = setrlimit(Resource::RLIMIT_AS, bytes.min(hard).min(soft), hard);
    }
    let secs = u32::try_from(timeout.as_secs().max(1)).unwrap_or(u32::MAX);
    alarm::set(secs);
    // The same live-heap bound as `check` (`bound::memory_limit`, lowered by
    // `SAFE_EXEC_DECIDE_MEMORY_LIMIT`), armed in this child only: hitting it
    // ends the child with no answer (exit 3, nothing written), so the
    // parent blocks in both protocols. The alarm above is the time bound.
    crate::bound::arm_with(Vec::new(), Vec::new(), 3, crate::bound::memory_limit(), 0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(decide));
    let code = match result {
        Ok(r) => match serde_json::to_vec(&r) {
            Ok(bytes) => {
                let mut f = std::fs::File::from(wr);
                if f.write_all(&bytes).is_ok() { 0 } else { 3 }
            }
            Err(_) => 3,
        },
        Err(_) => 101,
    };
    // SAFETY: ends the child without running the parent's exit handlers.
    unsafe { libc::_exit(code) }
}

fn parent(pid: Pid, rd: OwnedFd, timeout: Duration) -> Result<Rendered, String> {
    let deadline = Instant::now() + timeout + Duration::from_millis(500);
    let mut data = Vec::new();
    let mut f = std::fs::File::from(rd);
    let mut timed_out = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            timed_out = true;
            break;
        }
        let ms =
            PollTimeout::try_from(left.max(Duration::from_millis(1))).unwrap_or(PollTimeout::MAX);
        let n = match poll(&mut [PollFd::new(f.as_fd(), PollFlags::POLLIN)], ms) {
            Ok(n) => n,
            Err(Errno::EINTR) => continue,
            Err(_) => break,
        };
        if n == 0 {
            continue;
        }
        let mut buf = [0u8; 8192];
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => data.extend_from_slice(&buf[..k]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if timed_out {
        let _ = kill(pid, Signal::SIGKILL);
    }
    let status = waitpid(pid, None);
    if timed_out {
        return Err(format!(
            "deciding took longer than {} ms (SAFE_EXEC_HOOK_TIMEOUT_MS)",
            timeout.as_millis()
        ));
    }
    let code = match status {
        Ok(WaitStatus::Exited(p, code)) if p == pid => code,
        Ok(WaitStatus::Signaled(p, Signal::SIGALRM, _)) if p == pid => {
            return Err(format!(
                "deciding took longer than {} ms (SAFE_EXEC_HOOK_TIMEOUT_MS)",
                timeout.as_millis()
            ));
        }
        Ok(WaitStatus::Signaled(p, sig, _)) if p == pid => {
            return Err(format!(
                "the deciding process was killed by signal {} (a crash, or the memory limit SAFE_EXEC_HOOK_MEMORY_MB)",
                sig as i32
            ));
        }
        Ok(WaitStatus::Exited(..) | WaitStatus::Signaled(..)) | Err(_) => {
            return Err("lost the deciding process".into());
        }
        Ok(_) => -1,
    };
    if code != 0 {
        return Err(format!(
            "the deciding process failed (exit {code}: a panic, or it ran out of memory)"
        ));
    }
    serde_json::from_slice(&data).map_err(|e| format!("the deciding process gave no answer ({e})"))
}
