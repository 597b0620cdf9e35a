//! The supervisor's seccomp filter: a second, small BPF program that
//! returns `SECCOMP_RET_USER_NOTIF` for the syscalls the supervisor answers
//! and `SECCOMP_RET_ALLOW` for everything else.
//!
//! It is stacked on top of the main filter (`sandbox::seccomp`); the kernel
//! runs both and the strictest action wins (KILL > ERRNO > USER_NOTIF >
//! ALLOW), so a syscall the main filter kills or refuses never reaches the
//! supervisor, and "allow" here never loosens the main filter.
//!
//! seccompiler cannot emit `USER_NOTIF`, so the program is written here by
//! hand. Every notified syscall carries its reason in [`notified`].

use libc::sock_filter;

// Classic BPF opcodes (linux/bpf_common.h).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JEQ_K: u16 = 0x15;
const BPF_JMP_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;
/// Offsets in `struct seccomp_data`.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
/// Offset of `args[i]` (low 32 bits on little-endian targets).
const fn arg_lo(i: u32) -> u32 {
    16 + 8 * i
}

/// `fchmodat2` (Linux 6.6; same number everywhere).
pub const SYS_FCHMODAT2: i64 = 452;
/// `setxattrat` (Linux 6.13).
pub const SYS_SETXATTRAT: i64 = 463;
/// `removexattrat` (Linux 6.13).
pub const SYS_REMOVEXATTRAT: i64 = 466;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

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

/// How a syscall is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// Every call is notified.
    Always,
    /// Notified only when argument `n` (a pointer) is not NULL.
    ArgNonNull(u32),
    /// Notified only when the low 32 bits of argument `n` equal the value
    /// (an ioctl request: the kernel itself only looks at the low 32 bits,
    /// so the high half must not be compared).
    Arg32Eq(u32, u32),
}

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

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// Builds the program. Foreign architectures and x32 numbers are allowed
/// here because the main filter already kills or refuses them.
pub fn build(n: Notify) -> Vec<sock_filter> {
    let allow = libc::SECCOMP_RET_ALLOW;
    let notify = libc::SECCOMP_RET_USER_NOTIF;
    let mut p = vec![
        stmt(BPF_LD_W_ABS, DATA_ARCH),
        jump(BPF_JMP_JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(BPF_RET_K, allow),
        stmt(BPF_LD_W_ABS, DATA_NR),
    ];
    if cfg!(target_arch = "x86_64") {
        p.push(jump(BPF_JMP_JSET_K, 0x4000_0000, 0, 1));
        p.push(stmt(BPF_RET_K, allow));
    }
    for (nr, m, _) in notified(n) {
        let nr = nr as u32;
        match m {
            Match::Always => {
                p.push(jump(BPF_JMP_JEQ_K, nr, 0, 1));
                p.push(stmt(BPF_RET_K, notify));
            }
            Match::ArgNonNull(i) => {
                p.push(jump(BPF_JMP_JEQ_K, nr, 0, 6));
                p.push(stmt(BPF_LD_W_ABS, arg_lo(i)));
                p.push(jump(BPF_JMP_JEQ_K, 0, 0, 3));
                p.push(stmt(BPF_LD_W_ABS, arg_lo(i) + 4));
                p.push(jump(BPF_JMP_JEQ_K, 0, 0, 1));
                p.push(stmt(BPF_RET_K, allow));
                p.push(stmt(BPF_RET_K, notify));
                p.push(stmt(BPF_LD_W_ABS, DATA_NR));
            }
            Match::Arg32Eq(i, value) => {
                p.push(jump(BPF_JMP_JEQ_K, nr, 0, 4));
                p.push(stmt(BPF_LD_W_ABS, arg_lo(i)));
                p.push(jump(BPF_JMP_JEQ_K, value, 0, 1));
                p.push(stmt(BPF_RET_K, notify));
                p.push(stmt(BPF_LD_W_ABS, DATA_NR));
            }
        }
    }
    p.push(stmt(BPF_RET_K, allow));
    p
}

/// Installs `prog` on the calling thread with a new listener and returns
/// the listener descriptor (close-on-exec). Runs between fork and exec: one
/// syscall, no allocation. `no_new_privs` must already be set.
pub fn install(prog: &[sock_filter]) -> Result<libc::c_int, i32> {
    let fprog = libc::sock_fprog {
        len: u16::try_from(prog.len()).map_err(|_| libc::E2BIG)?,
        filter: prog.as_ptr().cast_mut(),
    };
    // SAFETY: seccomp(2) reads the program we own for the duration of the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &fprog as *const libc::sock_fprog,
        )
    };
    if fd < 0 {
        return Err(crate::sandbox::errno());
    }
    libc::c_int::try_from(fd).map_err(|_| libc::EBADF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_notified_syscall_has_a_reason_and_the_program_ends_in_allow() {
        let n = Notify {
            metadata: true,
            network: true,
            exec: true,
        };
        let list = notified(n);
        assert!(list.iter().all(|(_, _, why)| why.len() > 20));
        let p = build(n);
        assert_eq!(p.last().map(|s| s.k), Some(libc::SECCOMP_RET_ALLOW));
        assert!(p.len() < 200);
        let none = build(Notify {
            metadata: false,
            network: false,
            exec: false,
        });
        let notifying = none
            .iter()
            .filter(|s| s.code == BPF_RET_K && s.k == libc::SECCOMP_RET_USER_NOTIF)
            .count();
        assert_eq!(
            notifying, 3,
            "only execve/execveat (to hold the first exec) and ioctl(TIOCGPTPEER) (pty broker)"
        );
    }
}
