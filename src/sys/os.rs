//! The two operating-system calls the layers need that `std` does not offer
//! at this crate's minimum Rust version: an exclusive `flock` (so that many
//! processes of one session update its state without losing updates) and
//! killing a whole process group (so that a timed-out validator or hook
//! cannot leave children behind holding our pipes). Both go through `nix`.

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::fs::File;
use std::io;

/// Blocks until this process holds an exclusive lock on `file`. The lock is
/// released when the returned guard is dropped (and by the kernel if the
/// process dies).
pub fn lock_exclusive(mut file: File) -> io::Result<Flock<File>> {
    loop {
        match Flock::lock(file, FlockArg::LockExclusive) {
            Ok(lock) => return Ok(lock),
            Err((f, Errno::EINTR)) => file = f,
            Err((_, e)) => return Err(e.into()),
        }
    }
}

/// Sends SIGKILL to the process group `pgid` (a child started as the leader
/// of its own group). Errors (the group is already gone) are ignored.
pub fn kill_group(pgid: u32) {
    if let Ok(p) = libc::pid_t::try_from(pgid)
        && p > 1
    {
        // p > 1: killpg(1) is kill(-1), "every process we may signal"; a
        // child we started as a group leader never has pgid 0 or 1.
        let _ = killpg(Pid::from_raw(p), Signal::SIGKILL);
    }
}
