//! The syscalls the supervisor answers, each with why: the sandbox's
//! seccomp filter (`sandbox::seccomp::build_with`) returns
//! `SECCOMP_RET_USER_NOTIF` for them, in the same program as its own rules
//! and installed with a listener (one filter instead of two stacked ones:
//! the kernel's fixed cost of loading a filter is paid once).
//!
//! The answers are those two stacked filters gave (the strictest action
//! wins, KILL > ERRNO > USER_NOTIF > ALLOW): a syscall the rules kill or
//! refuse never reaches the supervisor, and a notified syscall that no rule
//! refuses is never allowed without the supervisor's answer.

/// `fchmodat2` (Linux 6.6; same number everywhere).
pub const SYS_FCHMODAT2: i64 = 452;
/// `setxattrat` (Linux 6.13).
pub const SYS_SETXATTRAT: i64 = 463;
/// `removexattrat` (Linux 6.13).
pub const SYS_REMOVEXATTRAT: i64 = 466;

/// What the supervisor is asked to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notify {
    /// Metadata calls on paths and descriptors (row M).
    pub metadata: bool,
    /// connect/sendto/sendmsg/sendmmsg (loopback-only network).
    pub network: bool,
    /// execve/execveat (exec-time checks).
    pub exec: bool,
}

/// How a syscall is matched (every call, a non-NULL pointer argument, a
/// 32-bit argument value).
pub use crate::sandbox::seccomp::NotifyWhen as Match;

/// The notified syscalls with why each one is notified.
pub fn notified(n: Notify) -> Vec<(i64, Match, &'static str)> {
    let mut v: Vec<(i64, Match, &'static str)> = Vec::new();
    if n.metadata {
        let meta = "Landlock does not cover metadata: the supervisor resolves the path and checks it is inside a writable root and not protected";
        let fdmeta = "Landlock does not cover metadata on descriptors: a file opened read-only outside the roots could be chmod-ed or chown-ed";
        #[cfg(target_arch = "x86_64")]
        v.extend([
            (libc::SYS_chmod, Match::Always, meta),
            (libc::SYS_chown, Match::Always, meta),
            (libc::SYS_lchown, Match::Always, meta),
            (libc::SYS_utime, Match::Always, meta),
            (libc::SYS_utimes, Match::Always, meta),
            (libc::SYS_futimesat, Match::Always, meta),
        ]);
        v.extend([
            (libc::SYS_fchmodat, Match::Always, meta),
            (SYS_FCHMODAT2, Match::Always, meta),
            (libc::SYS_fchownat, Match::Always, meta),
            (libc::SYS_utimensat, Match::Always, meta),
            (libc::SYS_setxattr, Match::Always, meta),
            (libc::SYS_lsetxattr, Match::Always, meta),
            (libc::SYS_removexattr, Match::Always, meta),
            (libc::SYS_lremovexattr, Match::Always, meta),
            (
                SYS_SETXATTRAT,
                Match::Always,
                "new *xattrat calls: refused (ENOSYS) so libraries fall back to the checked forms",
            ),
            (
                SYS_REMOVEXATTRAT,
                Match::Always,
                "new *xattrat calls: refused (ENOSYS) so libraries fall back to the checked forms",
            ),
            (libc::SYS_fchmod, Match::Always, fdmeta),
            (libc::SYS_fchown, Match::Always, fdmeta),
            (libc::SYS_fsetxattr, Match::Always, fdmeta),
            (libc::SYS_fremovexattr, Match::Always, fdmeta),
        ]);
    }
    if n.network {
        let why = "loopback-only network: the supervisor copies the address once, checks it is 127.0.0.0/8 or ::1 and performs the call on its own duplicate of the socket";
        v.extend([
            (libc::SYS_connect, Match::Always, why),
            // sendto with a NULL address goes to the connected peer, which
            // connect already checked; only an explicit address is asked.
            (libc::SYS_sendto, Match::ArgNonNull(4), why),
            // The address of sendmsg/sendmmsg lives in memory BPF cannot read.
            (libc::SYS_sendmsg, Match::Always, why),
            (libc::SYS_sendmmsg, Match::Always, why),
        ]);
    }
    // execve is always notified: the child's first execve waits there until
    // the supervisor holds a duplicate of the listener (the listener is
    // close-on-exec in the child); with `exec` the argv is also checked.
    {
        let why = if n.exec {
            "exec-time check: the real argv of every program started inside the tree is matched against the critical safety rules (a first net)"
        } else {
            "the first execve waits until the supervisor holds the listener"
        };
        v.extend([
            (libc::SYS_execve, Match::Always, why),
            (libc::SYS_execveat, Match::Always, why),
        ]);
    }
    // The pty broker is always on with the supervisor (the run sets
    // `SandboxSpec.pty_broker` whenever the supervisor is active).
    v.push((
        libc::SYS_ioctl,
        Match::Arg32Eq(1, crate::sandbox::seccomp::TIOCGPTPEER as u32),
        "pty broker: the slave of a pty the command opened is opened outside the Landlock domain (sandbox::pty::open_peer) so /dev/pts need not be granted; other terminals stay unreachable",
    ));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::seccomp::testing::{old_notify_program, reference, run, specs, values};

    #[test]
    fn every_notified_syscall_has_a_reason() {
        let n = Notify {
            metadata: true,
            network: true,
            exec: true,
        };
        assert!(notified(n).iter().all(|(_, _, why)| why.len() > 20));
        let none: Vec<i64> = notified(Notify {
            metadata: false,
            network: false,
            exec: false,
        })
        .into_iter()
        .map(|(nr, _, _)| nr)
        .collect();
        assert_eq!(
            none,
            [libc::SYS_execve, libc::SYS_execveat, libc::SYS_ioctl],
            "only execve/execveat (to hold the first exec) and ioctl(TIOCGPTPEER) (pty broker)"
        );
    }

    /// The kernel's answer for two stacked filters: the strictest action
    /// (KILL_PROCESS < ... < ERRNO < USER_NOTIF < ALLOW as signed values).
    fn stacked(a: u32, b: u32) -> u32 {
        let rank = |r: u32| (r & 0xffff_0000) as i32;
        if rank(b) < rank(a) { b } else { a }
    }

    /// One program with the notified syscalls answers as the main filter
    /// with the supervisor's former hand-written filter stacked on it did.
    #[test]
    fn merged_filter_answers_as_the_two_stacked_filters() {
        let vals = values();
        let mut checked = 0u64;
        for sp in specs() {
            for (metadata, network, exec) in [
                (true, true, true),
                (true, false, false),
                (false, false, false),
            ] {
                let n = Notify {
                    metadata,
                    network,
                    exec,
                };
                let list: Vec<(i64, Match)> =
                    notified(n).into_iter().map(|(nr, m, _)| (nr, m)).collect();
                let merged = crate::sandbox::seccomp::build_with(&sp, 9, &list).expect("builds");
                let main = reference(&sp, 9);
                let second = old_notify_program(&list);
                checked +=
                    crate::sandbox::seccomp::testing::compare(&vals, &|d| run(&merged, d), &|d| {
                        stacked(run(&main, d), run(&second, d))
                    });
            }
        }
        assert!(checked > 100_000, "{checked}");
    }
}
