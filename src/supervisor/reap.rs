//! Lifetime (row L): safe-exec is the subreaper of the tree, so orphans
//! (`setsid -f`, double forks) are reparented to it instead of init, and
//! [`kill_tree`] kills and reaps every descendant that is left.

use crate::sandbox::fds::{pidfd_open, pidfd_send_signal};
use nix::errno::Errno;
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid, waitpid};
use nix::unistd::{Pid, getpid};
use std::collections::HashMap;
use std::io;

/// Makes the calling process the subreaper of its descendants.
pub fn become_subreaper() -> io::Result<()> {
    Ok(nix::sys::prctl::set_child_subreaper(true)?)
}

/// `waitid(P_ALL, WEXITED | WNOHANG | WNOWAIT | __WALL)`: peeks at an exited
/// child (any kind) without reaping it.
fn peek_exited() -> nix::Result<WaitStatus> {
    waitid(
        Id::All,
        WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT | WaitPidFlag::__WALL,
    )
}

/// Reaps one exited child (`pid`, or any with `None`) without blocking:
/// `Ok(None)` when children exist but none has exited, `Err(ECHILD)` when
/// there is no child.
fn reap_one(pid: Option<Pid>) -> nix::Result<Option<Pid>> {
    waitpid(pid, Some(WaitPidFlag::WNOHANG | WaitPidFlag::__WALL)).map(|st| st.pid())
}

fn ppid_of(pid: i32) -> Option<i32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: parse after the last ')'.
    let rest = &s[s.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Every process whose ancestry leads to `me`.
fn descendants(me: i32) -> Vec<i32> {
    let mut parent: HashMap<i32, i32> = HashMap::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            if let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok())
                && let Some(pp) = ppid_of(pid)
            {
                parent.insert(pid, pp);
            }
        }
    }
    let is_ours = |mut p: i32| {
        for _ in 0..4096 {
            match parent.get(&p) {
                Some(&pp) if pp == me => return true,
                Some(&pp) if pp > 1 => p = pp,
                _ => return false,
            }
        }
        false
    };
    parent
        .keys()
        .copied()
        .filter(|p| *p != me && is_ours(*p))
        .collect()
}

fn is_descendant(pid: i32, me: i32) -> bool {
    let mut p = pid;
    for _ in 0..4096 {
        match ppid_of(p) {
            Some(pp) if pp == me => return true,
            Some(pp) if pp > 1 => p = pp,
            _ => return false,
        }
    }
    false
}

/// Kills `pid` through a pidfd after checking again that it is still ours
/// (the pid cannot be reused between the check and the signal).
fn kill_if_ours(pid: i32, me: i32) {
    let Ok(fd) = pidfd_open(pid) else {
        return;
    };
    if is_descendant(pid, me) {
        let _ = pidfd_send_signal(&fd, libc::SIGKILL);
    }
}

/// Reaps exited children other than `main` (orphans reparented to the
/// subreaper) without touching `main`'s status: peeks with `WNOWAIT`.
pub fn reap_orphans(main: i32) {
    for _ in 0..4096 {
        // StillAlive (no exited child) has no pid.
        let Ok(Some(pid)) = peek_exited().map(|st| st.pid()) else {
            return;
        };
        if pid.as_raw() == main {
            return;
        }
        let _ = reap_one(Some(pid));
    }
}

/// Reaps every exited child without blocking.
fn reap_exited() {
    while let Ok(Some(_)) = reap_one(None) {}
}

/// Whether this process has any child, running or exited (`waitid` with
/// `WNOHANG | WNOWAIT`: nothing is reaped).
fn has_children() -> bool {
    // ECHILD is the only "no"; any other error keeps the full scan.
    !matches!(peek_exited(), Err(Errno::ECHILD))
}

/// Kills and reaps every remaining process of the tree (the descendants
/// of safe-exec), until none is left or about 5 s passed. Returns how many
/// processes were killed.
pub fn kill_tree() -> usize {
    // A subreaper with no child has no descendant (every orphan of the tree
    // is reparented to it): the common case, decided without reading
    // `/proc/PID/stat` of every process on the machine.
    if !has_children() {
        return 0;
    }
    let me = getpid().as_raw();
    let mut killed = 0;
    for round in 0..500 {
        // Fast path: every living descendant has a living ancestor chain
        // ending in a child of ours (orphans are reparented to us), so no
        // child at all means no descendant.
        if reap_one(None).is_err() {
            return killed;
        }
        let left = descendants(me);
        if left.is_empty() {
            reap_exited();
            // ECHILD: no child (and so no descendant) remains.
            match reap_one(None) {
                Err(_) => return killed,
                Ok(None) if round > 0 => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Ok(_) => {}
            }
            continue;
        }
        for pid in &left {
            kill_if_ours(*pid, me);
        }
        killed += left.len();
        std::thread::sleep(std::time::Duration::from_millis(if round == 0 {
            1
        } else {
            10
        }));
        reap_exited();
    }
    killed
}
