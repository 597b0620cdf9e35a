//! The two operating-system calls the layers need that `std` does not offer
//! at this crate's minimum Rust version: an exclusive `flock` (so that many
//! processes of one session update its state without losing updates) and
//! killing a whole process group (so that a timed-out validator or hook
//! cannot leave children behind holding our pipes). This is the only place
//! in the layers that uses `unsafe`.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Blocks until this process holds an exclusive lock on `file`. The lock is
/// released when the file is closed (dropped), also if the process dies.
pub fn lock_exclusive(file: &File) -> io::Result<()> {
    loop {
        // SAFETY: flock on a descriptor we own for the duration of the call;
        // it touches no memory.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Sends SIGKILL to the process group `pgid` (a child started as the leader
/// of its own group). Errors (the group is already gone) are ignored.
pub fn kill_group(pgid: u32) {
    if let Ok(p) = libc::pid_t::try_from(pgid)
        && p > 0
    {
        // SAFETY: kill with a negative pid signals a process group; it
        // touches no memory. p > 0 so -p never means "every process".
        unsafe { libc::kill(-p, libc::SIGKILL) };
    }
}
