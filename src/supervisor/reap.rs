//! Lifetime (row L): safe-exec is the subreaper of the tree, so orphans
//! (`setsid -f`, double forks) are reparented to it instead of init, and
//! [`kill_tree`] kills and reaps every descendant that is left.

use std::collections::HashMap;
use std::io;

/// Makes the calling process the subreaper of its descendants.
pub fn become_subreaper() -> io::Result<()> {
    // SAFETY: prctl with constant arguments.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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
    // SAFETY: pidfd_open returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return;
    }
    let fd = fd as i32;
    if is_descendant(pid, me) {
        // SAFETY: pidfd_send_signal on the pidfd we opened.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fd,
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
    }
    // SAFETY: closing our descriptor.
    unsafe { libc::close(fd) };
}

/// Reaps exited children other than `main` (orphans reparented to the
/// subreaper) without touching `main`'s status: peeks with `WNOWAIT`.
pub fn reap_orphans(main: i32) {
    for _ in 0..4096 {
        // SAFETY: an all-zero siginfo is valid for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid peeks at an exited child without reaping it.
        let rc = unsafe {
            libc::waitid(
                libc::P_ALL,
                0,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT | libc::__WALL,
            )
        };
        // SAFETY: si_pid is valid for CLD_* siginfo (0 when none exited).
        let pid = unsafe { info.si_pid() };
        if rc != 0 || pid == 0 || pid == main {
            return;
        }
        let mut st = 0;
        // SAFETY: reap that child.
        unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG | libc::__WALL) };
    }
}

/// Reaps every exited child without blocking; returns the exit status of
/// `main` if it was among them.
pub fn reap_others(main: i32) -> Option<i32> {
    let mut main_status = None;
    loop {
        let mut st = 0;
        // SAFETY: waitpid for any child, non-blocking.
        let rc = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG | libc::__WALL) };
        if rc <= 0 {
            return main_status;
        }
        if rc == main {
            main_status = Some(st);
        }
    }
}

/// Whether this process has any child, running or exited (`waitid` with
/// `WNOHANG | WNOWAIT`: nothing is reaped).
fn has_children() -> bool {
    // SAFETY: siginfo_t is plain data; all-zero is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid fills `info`, which we own; WNOWAIT reaps nothing.
    let rc = unsafe {
        libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT | libc::__WALL,
        )
    };
    // ECHILD is the only "no"; any other error keeps the full scan.
    !(rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
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
    // SAFETY: getpid has no side effects.
    let me = unsafe { libc::getpid() };
    let mut killed = 0;
    for round in 0..500 {
        // Fast path: every living descendant has a living ancestor chain
        // ending in a child of ours (orphans are reparented to us), so no
        // child at all means no descendant.
        let mut st = 0;
        // SAFETY: non-blocking waitpid for any child.
        let rc = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG | libc::__WALL) };
        if rc < 0 {
            return killed;
        }
        let left = descendants(me);
        if left.is_empty() {
            reap_others(-1);
            // ECHILD: no child (and so no descendant) remains.
            let mut st = 0;
            // SAFETY: non-blocking waitpid for any child.
            let rc = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG | libc::__WALL) };
            if rc < 0 {
                return killed;
            }
            if rc == 0 && round > 0 {
                std::thread::sleep(std::time::Duration::from_millis(10));
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
        reap_others(-1);
    }
    killed
}
