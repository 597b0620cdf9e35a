//! `safe-exec doctor`: each mechanism of the sandbox and whether this
//! kernel really enforces it, found by trying.
//!
//! A forked child installs the same seccomp filter and capability drop a
//! command would get and then attempts one harmless representative call
//! per group (a no-op `prlimit64` on safe-exec's own limits, a SysV segment
//! it would remove at once, a read-only `syslog` size query, ...). Nothing is
//! changed when the mechanism holds, and nothing lasting when it does not.

use serde::Serialize;

use super::{SandboxSpec, caps, kernel, landlock, seccomp};
use nix::fcntl::OFlag;
use nix::sys::prctl::set_no_new_privs;
use nix::sys::resource::{Resource, getrlimit};
use nix::sys::wait::waitpid;
use nix::unistd::{ForkResult, fork, getpid, pipe2, read, write};

/// One mechanism and whether it holds here.
#[derive(Debug, Clone, Serialize)]
pub struct Mechanism {
    /// Short name (`seccomp.pid_targets`, `landlock.devices`, ...).
    pub name: &'static str,
    /// Whether this kernel enforces it (tried, or read from the ABI).
    pub enforced: bool,
    /// What it guarantees, or why it does not hold.
    pub detail: String,
}

// Bits the child reports: one per tried call that was refused with EPERM.
const K1: u32 = 1;
const K3: u32 = 2;
const K4: u32 = 4;
const K5: u32 = 8;
const K6: u32 = 16;
const CAPS: u32 = 32;
const NS: u32 = 64;
const FILTER_FAILED: u32 = 1 << 31;

/// Forks a child that installs `spec`'s filter and capability drop and
/// tries one call per group; returns the bits of the groups that held.
fn try_in_child(spec: &SandboxSpec) -> Option<u32> {
    let abi = kernel::landlock_abi();
    let filter = seccomp::build(spec, abi).ok()?;
    let cap_drop = caps::CapDrop::prepare(&spec.capabilities).ok()?;
    let (rd, wr) = pipe2(OFlag::O_CLOEXEC).ok()?;
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap_or((0, 0));
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    let parent = getpid().as_raw();
    // SAFETY: the child only makes system calls (and reads /proc for
    // `caps::current`), writes its answer and `_exit`s; it never returns
    // into the caller's code.
    let child = match unsafe { fork() }.ok()? {
        ForkResult::Parent { child } => child,
        ForkResult::Child => {
            drop(rd);
            let mut bits = 0u32;
            let eperm = |rc: libc::c_long| rc < 0 && super::errno() == libc::EPERM;
            let caps_ok = cap_drop.apply().is_ok();
            let _ = set_no_new_privs();
            if seccomp::install(&filter, false).is_err() {
                bits |= FILTER_FAILED;
            }
            // The probes below are raw system calls on purpose: each asks
            // the installed filter about one number.
            // SAFETY: each call takes integers, or pointers to values we
            // own (`limit`), and has no effect beyond the probe: K1 sets
            // the parent's limit to its current value, K3 removes the
            // segment it created, the rest fail or create nothing lasting.
            unsafe {
                // K1: the parent's own limit, unchanged: a no-op if allowed.
                if eperm(libc::syscall(
                    libc::SYS_prlimit64,
                    parent,
                    libc::RLIMIT_NOFILE,
                    &limit as *const libc::rlimit,
                    std::ptr::null_mut::<libc::rlimit>(),
                )) {
                    bits |= K1;
                }
                // K3: a private segment, removed at once if it was created.
                let id = libc::syscall(libc::SYS_shmget, libc::IPC_PRIVATE, 4096, 0o600);
                if id >= 0 {
                    libc::syscall(libc::SYS_shmctl, id, libc::IPC_RMID, 0);
                } else if eperm(id) {
                    bits |= K3;
                }
                // K4: a notification group (closed at exit if created).
                if eperm(libc::syscall(libc::SYS_fanotify_init, 0, 0)) {
                    bits |= K4;
                }
                // K5: on an invalid descriptor: EBADF if not filtered.
                if eperm(libc::syscall(libc::SYS_ioctl, -1, seccomp::TIOCSETD, 0)) {
                    bits |= K5;
                }
                // K6: SYSLOG_ACTION_SIZE_BUFFER (10), a read-only query.
                if eperm(libc::syscall(libc::SYS_syslog, 10, 0, 0)) {
                    bits |= K6;
                }
                if eperm(libc::syscall(libc::SYS_unshare, 0x1000_0000)) {
                    bits |= NS;
                }
            }
            let c = caps::current();
            if caps_ok && c.effective == 0 && c.permitted == 0 && c.ambient == 0 {
                bits |= CAPS;
            }
            let _ = write(&wr, &bits.to_ne_bytes());
            // SAFETY: ends the forked child without running the parent's
            // atexit handlers or destructors (`nix` has no `_exit`).
            unsafe { libc::_exit(0) }
        }
    };
    drop(wr);
    let mut buf = [0u8; 4];
    let n = read(&rd, &mut buf).unwrap_or(0);
    drop(rd);
    let _ = waitpid(child, None);
    (n == 4).then_some(u32::from_ne_bytes(buf))
}

/// Every mechanism for `spec` and whether it holds on this kernel.
pub fn mechanisms(spec: &SandboxSpec) -> Vec<Mechanism> {
    let abi = kernel::landlock_abi();
    let mut out = Vec::new();
    let m = |name, enforced, detail: &str| Mechanism {
        name,
        enforced,
        detail: detail.to_string(),
    };
    out.push(m(
        "landlock.filesystem",
        abi >= 3,
        "reads, writes and execution confined to the profile's roots; secrets carved out",
    ));
    out.push(m(
        "landlock.tcp",
        abi >= 4,
        "TCP bind/connect closed except the network mode's ports",
    ));
    out.push(m(
        "landlock.devices",
        abi >= 1,
        "/dev carved out: only null, zero, full, random, urandom, tty, ptmx, the given terminal and [sandbox] devices",
    ));
    out.push(m(
        "landlock.ioctl_dev",
        abi >= 5,
        "ioctls only on the granted terminals and devices",
    ));
    out.push(m(
        "landlock.scopes",
        abi >= 6,
        "no signals to, and no abstract sockets of, processes outside the sandbox",
    ));
    out.push(m(
        "landlock.ptrace_scope",
        abi >= 1,
        "no ptrace-mode access (/proc/<pid>/environ, maps, mem, fd links) to processes outside the sandbox, for a caller without CAP_SYS_PTRACE",
    ));
    out.push(m(
        "landlock.resolve_unix",
        abi >= 9,
        "pathname Unix sockets only below the writable roots other than the temporary directory, where the user's own daemons keep theirs (below ABI 9: socket(AF_UNIX) is refused by seccomp instead)",
    ));
    out.push(m(
        "pty_broker",
        spec.pty_broker,
        if spec.pty_broker {
            "new ptys are opened by the supervisor; other terminals unreachable"
        } else {
            "no supervisor answers TIOCGPTPEER here: /dev/pts is granted as a whole, other terminals of the user are reachable"
        },
    ));
    let bits = try_in_child(spec);
    let held = |b: u32| bits.is_some_and(|x| x & FILTER_FAILED == 0 && x & b != 0);
    let k3_detail = if spec.sysv_ipc {
        "allowed by the profile (sysv_ipc = true)"
    } else {
        "System V shm/sem/msg and POSIX message queues refused"
    };
    out.push(m(
        "seccomp.namespaces",
        held(NS),
        "unshare/setns/clone with CLONE_NEW* refused",
    ));
    out.push(m(
        "seccomp.pid_targets",
        held(K1),
        "prlimit64/setpriority/ioprio_set/sched_set*/migrate_pages/move_pages only on the caller itself",
    ));
    out.push(m("seccomp.sysv_ipc", held(K3) || spec.sysv_ipc, k3_detail));
    out.push(m(
        "seccomp.fanotify",
        held(K4),
        "fanotify_init/fanotify_mark refused",
    ));
    out.push(m(
        "seccomp.terminal",
        held(K5),
        "TIOCSTI, TIOCLINUX, TIOCSETD, TIOCVHANGUP, TIOCCONS, TIOCSCTTY (steal), TIOCSPGRP (unless handed the terminal) and vhangup refused",
    ));
    out.push(m(
        "seccomp.machine_settings",
        held(K6),
        "clock, hostname, kernel log, accounting, chroot, quotas, I/O ports refused",
    ));
    let sets = caps::current();
    let cap_detail = if sets.permitted == 0 && sets.ambient == 0 {
        "safe-exec holds no capabilities: nothing to drop".to_string()
    } else if spec.capabilities.is_empty() {
        format!(
            "all {} capabilities safe-exec holds are removed from every set of the command",
            caps::names(sets.permitted).len()
        )
    } else {
        format!(
            "all capabilities but {} are removed from every set of the command",
            spec.capabilities.join(", ")
        )
    };
    out.push(Mechanism {
        name: "capabilities",
        enforced: held(CAPS),
        detail: cap_detail,
    });
    out.push(m(
        "non_dumpable",
        true,
        "a supervising safe-exec is non-dumpable and overwrites the scrubbed variables in its own environment block",
    ));
    out
}

/// Directories the carving could not list for `spec`, with what it did.
pub fn unlisted(spec: &SandboxSpec) -> Vec<landlock::Unlisted> {
    landlock::plan(spec).map(|p| p.unlisted).unwrap_or_default()
}
