//! The seccomp filter: a deny-list on top of Landlock.
//!
//! Landlock cannot see sockets other than TCP, namespace or mount syscalls,
//! `ptrace`-like memory access, keyrings or terminal injection; this filter
//! closes those. Default action is Allow, a matched syscall fails with
//! `EPERM` (so programs see an ordinary "Operation not permitted"), except:
//!
//! - `clone3` fails with `ENOSYS`: its flags live in memory the filter cannot
//!   read, and `ENOSYS` makes glibc fall back to `clone`, whose flags we check;
//! - a non-native architecture (i386 `int 0x80`) is killed by seccompiler's
//!   arch check (the command shows as killed by SIGSYS, exit 159);
//! - an x32 syscall number (`nr | 0x40000000`) fails with `EPERM` from a
//!   hand-written guard, because seccompiler matches exact numbers only and a
//!   deny-list would otherwise be bypassed through the x32 entry points.
//!
//! The program is built once in the parent; the child only installs it.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

use super::{NetworkAccess, SandboxError, SandboxSpec};

// Classic BPF opcodes (linux/bpf_common.h).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JEQ_K: u16 = 0x15;
const BPF_JMP_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;
/// Offset of `nr` in `struct seccomp_data`.
const SECCOMP_DATA_NR: u32 = 0;
/// Offset of `arch` in `struct seccomp_data`.
const SECCOMP_DATA_ARCH: u32 = 4;

/// All `CLONE_NEW*` flags `clone(2)` accepts in its first argument:
/// NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
pub const CLONE_NEW_MASK: u64 = 0x7E02_0000;
/// `TIOCSTI`: push bytes into a terminal's input queue (command injection
/// into the user's shell).
pub const TIOCSTI: u64 = 0x5412;
/// `TIOCLINUX`: console selection paste, the same injection on a VT.
pub const TIOCLINUX: u64 = 0x541C;
/// `SOCK_TYPE_MASK`: the type bits of `socket`'s second argument (the rest
/// are `SOCK_NONBLOCK`/`SOCK_CLOEXEC`).
const SOCK_TYPE_MASK: u64 = 0xf;
/// `IPPROTO_ICMPV6` (libc does not export it on every target).
const IPPROTO_ICMPV6: u64 = 58;
/// `open_tree_attr` (Linux 6.15; same number on every architecture).
const SYS_OPEN_TREE_ATTR: i64 = 467;
/// `quotactl_fd` (Linux 5.14; unified numbering).
const SYS_QUOTACTL_FD: i64 = 443;
/// `process_mrelease` (Linux 5.15; unified numbering).
const SYS_PROCESS_MRELEASE: i64 = 448;
/// `TIOCSCTTY`: make a terminal the controlling terminal; with argument 1
/// and `CAP_SYS_ADMIN` it steals it from another session.
pub const TIOCSCTTY: u64 = 0x540E;
/// `TIOCSETD`: change the line discipline (e.g. `N_NULL` silences a
/// terminal, others attach kernel protocol drivers to it).
pub const TIOCSETD: u64 = 0x5423;
/// `TIOCVHANGUP`: hang up a terminal for every process using it.
pub const TIOCVHANGUP: u64 = 0x5437;
/// `TIOCCONS`: redirect the system console's output to a terminal.
pub const TIOCCONS: u64 = 0x541D;
/// `TIOCGPTPEER`: open the peer (slave) of a pty master; allowed here, the
/// supervisor may answer it (see `sandbox::pty`).
pub const TIOCGPTPEER: u64 = 0x5441;

/// Syscalls denied whatever the profile says, with why.
fn always_denied() -> Vec<(i64, &'static str)> {
    vec![
        (libc::SYS_ptrace, "inspect or control other processes"),
        (libc::SYS_process_vm_readv, "read other processes' memory"),
        (libc::SYS_process_vm_writev, "write other processes' memory"),
        (
            libc::SYS_pidfd_getfd,
            "steal descriptors from other processes",
        ),
        (libc::SYS_mount, "change the mount table"),
        (libc::SYS_umount2, "change the mount table"),
        (libc::SYS_pivot_root, "change the mount table"),
        (libc::SYS_move_mount, "change the mount table"),
        (libc::SYS_open_tree, "change the mount table"),
        (SYS_OPEN_TREE_ATTR, "change the mount table"),
        (libc::SYS_fsopen, "change the mount table"),
        (libc::SYS_fsconfig, "change the mount table"),
        (libc::SYS_fsmount, "change the mount table"),
        (libc::SYS_fspick, "change the mount table"),
        (libc::SYS_mount_setattr, "change the mount table"),
        (libc::SYS_unshare, "create namespaces"),
        (libc::SYS_setns, "enter namespaces"),
        (libc::SYS_bpf, "load kernel programs"),
        (libc::SYS_perf_event_open, "kernel profiling interfaces"),
        (libc::SYS_kexec_load, "replace the kernel"),
        (libc::SYS_kexec_file_load, "replace the kernel"),
        (libc::SYS_init_module, "load kernel modules"),
        (libc::SYS_finit_module, "load kernel modules"),
        (libc::SYS_delete_module, "unload kernel modules"),
        (libc::SYS_keyctl, "kernel keyrings hold credentials"),
        (libc::SYS_add_key, "kernel keyrings hold credentials"),
        (libc::SYS_request_key, "kernel keyrings hold credentials"),
        (libc::SYS_reboot, "reboot"),
        (libc::SYS_swapon, "swap configuration"),
        (libc::SYS_swapoff, "swap configuration"),
        (libc::SYS_userfaultfd, "kernel race exploitation aid"),
        (
            libc::SYS_io_uring_setup,
            "io_uring bypasses syscall filtering",
        ),
        (
            libc::SYS_io_uring_enter,
            "io_uring bypasses syscall filtering",
        ),
        (
            libc::SYS_io_uring_register,
            "io_uring bypasses syscall filtering",
        ),
        (
            libc::SYS_open_by_handle_at,
            "open files by handle, bypassing paths",
        ),
        // K4: fanotify watches (and with permission events blocks) every
        // open of a mount or filesystem, including other processes' opens
        // and the deny-read files they touch.
        (
            libc::SYS_fanotify_init,
            "watch other processes' file access",
        ),
        (
            libc::SYS_fanotify_mark,
            "watch other processes' file access",
        ),
        // K5: hang up the controlling terminal of every process on it.
        (libc::SYS_vhangup, "hang up other sessions' terminal"),
        // K6: machine-wide settings.
        (libc::SYS_settimeofday, "set the system clock or time zone"),
        (libc::SYS_clock_settime, "set the system clock"),
        (libc::SYS_clock_adjtime, "adjust the system clock"),
        (libc::SYS_adjtimex, "adjust the system clock"),
        (libc::SYS_sethostname, "rename the machine"),
        (libc::SYS_setdomainname, "rename the machine's NIS domain"),
        (libc::SYS_syslog, "read or clear the kernel log"),
        (libc::SYS_acct, "switch process accounting on or off"),
        (libc::SYS_chroot, "change the root directory (escape aid)"),
        (libc::SYS_quotactl, "change disk quotas"),
        (SYS_QUOTACTL_FD, "change disk quotas"),
        (
            libc::SYS_process_madvise,
            "change other processes' memory management",
        ),
        (SYS_PROCESS_MRELEASE, "reap other processes' memory"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_iopl, "raw I/O port access"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_ioperm, "raw I/O port access"),
        #[cfg(target_arch = "x86_64")]
        (
            libc::SYS_uselib,
            "obsolete loader entry point (attack surface)",
        ),
    ]
}

/// K3: System V IPC and POSIX message queues. Their objects are named by
/// small global keys, not paths, so Landlock never sees them: another
/// process's 0600 segment of the same user (any segment, as root) could be
/// attached and overwritten. Denied unless `[sandbox] sysv_ipc = true`.
fn ipc_syscalls() -> Vec<(i64, &'static str)> {
    let why = "System V IPC / POSIX message queues are global objects outside the filesystem rules";
    [
        libc::SYS_shmget,
        libc::SYS_shmat,
        libc::SYS_shmdt,
        libc::SYS_shmctl,
        libc::SYS_semget,
        libc::SYS_semop,
        libc::SYS_semtimedop,
        libc::SYS_semctl,
        libc::SYS_msgget,
        libc::SYS_msgsnd,
        libc::SYS_msgrcv,
        libc::SYS_msgctl,
        libc::SYS_mq_open,
        libc::SYS_mq_unlink,
        libc::SYS_mq_timedsend,
        libc::SYS_mq_timedreceive,
        libc::SYS_mq_notify,
        libc::SYS_mq_getsetattr,
    ]
    .into_iter()
    .map(|nr| (nr, why))
    .collect()
}

/// K1: calls that act on a process named by its pid. Allowed on the caller
/// itself (pid 0), refused (`EPERM`) for any other pid: lowering another
/// process's `RLIMIT_CPU` makes the kernel kill it, and its priority,
/// CPU/memory placement and scheduling class are the user's, not the
/// command's. The pid is an `int`, compared on its low 32 bits.
/// Read-only forms stay allowed (`prlimit64` without a new limit,
/// `getpriority`, `sched_get*`, `ioprio_get`).
fn pid_rules(rules: &mut Rules) -> Result<(), SandboxError> {
    // prlimit64(pid, resource, new, old): a new limit for another process.
    rules.when(
        libc::SYS_prlimit64,
        vec![
            cond(0, SeccompCmpOp::Ne, 0)?,
            qcond(2, SeccompCmpOp::Ne, 0)?,
        ],
    )?;
    // setpriority(which, who, prio): only PRIO_PROCESS (0) of the caller
    // (0); PRIO_PGRP/PRIO_USER reach processes outside the sandbox.
    rules.when(libc::SYS_setpriority, vec![cond(0, SeccompCmpOp::Ne, 0)?])?;
    rules.when(libc::SYS_setpriority, vec![cond(1, SeccompCmpOp::Ne, 0)?])?;
    // ioprio_set(which, who, prio): only IOPRIO_WHO_PROCESS (1) of the caller (0).
    rules.when(libc::SYS_ioprio_set, vec![cond(0, SeccompCmpOp::Ne, 1)?])?;
    rules.when(libc::SYS_ioprio_set, vec![cond(1, SeccompCmpOp::Ne, 0)?])?;
    // First argument is the target pid.
    for nr in [
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setattr,
        libc::SYS_migrate_pages,
        libc::SYS_move_pages,
    ] {
        rules.when(nr, vec![cond(0, SeccompCmpOp::Ne, 0)?])?;
    }
    Ok(())
}

/// Syscalls of [`pid_rules`], for the summary and the audit table.
pub(crate) const PID_SYSCALLS: &[&str] = &[
    "prlimit64 (with a new limit)",
    "setpriority",
    "ioprio_set",
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setattr",
    "migrate_pages",
    "move_pages",
];

/// A syscall's entry: unconditionally matched, or matched when any of the
/// rules (each an AND of conditions) holds. Kept separate from seccompiler's
/// map so that adding a second rule to a syscall can never replace the
/// first (seccompiler collapses duplicate keys when collected).
enum Entry {
    Always,
    When(Vec<SeccompRule>),
}

#[derive(Default)]
struct Rules(BTreeMap<i64, Entry>);

impl Rules {
    fn always(&mut self, nr: i64) {
        self.0.insert(nr, Entry::Always);
    }

    fn when(&mut self, nr: i64, conditions: Vec<SeccompCondition>) -> Result<(), SandboxError> {
        let rule = SeccompRule::new(conditions).map_err(seccomp_err)?;
        match self.0.entry(nr).or_insert_with(|| Entry::When(Vec::new())) {
            Entry::Always => {}
            Entry::When(rules) => rules.push(rule),
        }
        Ok(())
    }

    fn into_map(self) -> BTreeMap<i64, Vec<SeccompRule>> {
        let mut map = BTreeMap::new();
        for (nr, entry) in self.0 {
            let rules = match entry {
                Entry::Always => Vec::new(),
                Entry::When(rules) => rules,
            };
            map.insert(nr, rules);
        }
        map
    }
}

fn seccomp_err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Seccomp(e.to_string())
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(seccomp_err)
}

/// A condition on a whole 64-bit argument (pointers).
fn qcond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value).map_err(seccomp_err)
}

/// Target architecture of this build, or an error naming it.
pub(crate) fn target_arch() -> Result<TargetArch, SandboxError> {
    match std::env::consts::ARCH {
        "x86_64" | "aarch64" => TargetArch::try_from(std::env::consts::ARCH).map_err(seccomp_err),
        other => Err(SandboxError::Seccomp(format!(
            "architecture {other} is not supported by the seccomp filter (x86_64 and aarch64 are)"
        ))),
    }
}

/// Whether `socket(AF_UNIX, ...)` stays allowed: the profile allows Unix
/// sockets, or Landlock ABI 9 (`RESOLVE_UNIX`) gates pathname sockets itself.
pub(crate) fn unix_socket_allowed(spec: &SandboxSpec, landlock_abi: u32) -> bool {
    spec.unix_sockets || landlock_abi >= 9
}

/// Builds the filter for `spec`; `landlock_abi` decides whether Landlock
/// already gates pathname Unix sockets.
pub(crate) fn build(spec: &SandboxSpec, landlock_abi: u32) -> Result<BpfProgram, SandboxError> {
    let arch = target_arch()?;
    let mut rules = Rules::default();
    for (nr, _why) in always_denied() {
        rules.always(nr);
    }
    // clone(2) with any namespace flag: one rule per bit, since "any bit of
    // the mask set" is an OR of masked equalities.
    let mut bit = 1u64;
    while bit <= CLONE_NEW_MASK {
        if CLONE_NEW_MASK & bit != 0 {
            rules.when(
                libc::SYS_clone,
                vec![cond(0, SeccompCmpOp::MaskedEq(bit), bit)?],
            )?;
        }
        bit <<= 1;
    }
    // Terminal injection; the command number is compared on its low 32 bits
    // (Dword), which is what the tty layer uses (CVE-2019-10063).
    // K5: TIOCSETD (line discipline), TIOCVHANGUP (hang up), TIOCCONS
    // (console redirection) on any terminal.
    for cmd in [TIOCSTI, TIOCLINUX, TIOCSETD, TIOCVHANGUP, TIOCCONS] {
        rules.when(libc::SYS_ioctl, vec![cond(1, SeccompCmpOp::Eq, cmd)?])?;
    }
    // TIOCSCTTY with a non-zero argument steals a terminal from another
    // session, which needs CAP_SYS_ADMIN: without it (the default, see
    // `caps`) the kernel refuses; with it kept, the filter refuses.
    // `TIOCSCTTY, 0` on a terminal that is nobody's (`setsid` + `login_tty`
    // in script, python's pty.fork) keeps working.
    if super::caps::keeps(spec, "CAP_SYS_ADMIN") {
        rules.when(
            libc::SYS_ioctl,
            vec![
                cond(1, SeccompCmpOp::Eq, TIOCSCTTY)?,
                cond(2, SeccompCmpOp::Ne, 0)?,
            ],
        )?;
    }
    pid_rules(&mut rules)?;
    if !spec.sysv_ipc {
        for (nr, _why) in ipc_syscalls() {
            rules.always(nr);
        }
    }
    network_rules(&mut rules, spec, landlock_abi)?;

    let filter = SeccompFilter::new(
        rules.into_map(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(seccomp_err)?;
    let program: BpfProgram = filter.try_into().map_err(seccomp_err)?;
    insert_prelude(program, arch)
}

/// socket/socketpair rules for the network mode.
fn network_rules(
    rules: &mut Rules,
    spec: &SandboxSpec,
    landlock_abi: u32,
) -> Result<(), SandboxError> {
    let unix = libc::AF_UNIX as u64;
    let inet = libc::AF_INET as u64;
    let inet6 = libc::AF_INET6 as u64;
    // socketpair only makes sense for AF_UNIX; refuse anything else.
    rules.when(libc::SYS_socketpair, vec![cond(0, SeccompCmpOp::Ne, unix)?])?;

    let mut families: Vec<u64> = Vec::new();
    if unix_socket_allowed(spec, landlock_abi) {
        families.push(unix);
    }
    match spec.network {
        NetworkAccess::Full => {
            if !families.contains(&unix) {
                rules.when(libc::SYS_socket, vec![cond(0, SeccompCmpOp::Eq, unix)?])?;
            }
            return Ok(());
        }
        NetworkAccess::Off => {}
        // Loopback: TCP/UDP sockets; the supervisor's filter checks every
        // address they connect or send to.
        NetworkAccess::Ping
        | NetworkAccess::Dns
        | NetworkAccess::Http
        | NetworkAccess::Loopback => {
            families.extend([inet, inet6]);
        }
    }
    if families.is_empty() {
        rules.always(libc::SYS_socket);
        return Ok(());
    }
    // Any family outside the allowed set, compared exactly (not masked).
    let mut outside = Vec::new();
    for f in &families {
        outside.push(cond(0, SeccompCmpOp::Ne, *f)?);
    }
    rules.when(libc::SYS_socket, outside)?;

    let (types, protos): (&[u64], Vec<(u64, Vec<u64>)>) = match spec.network {
        NetworkAccess::Ping => (
            &[libc::SOCK_DGRAM as u64],
            vec![
                (inet, vec![libc::IPPROTO_ICMP as u64]),
                (inet6, vec![IPPROTO_ICMPV6]),
            ],
        ),
        // DNS and HTTP(S): TCP and UDP only. Anything else (MPTCP, SCTP,
        // raw) could reach TCP endpoints past Landlock's port rules.
        _ => {
            let ok = vec![0, libc::IPPROTO_TCP as u64, libc::IPPROTO_UDP as u64];
            (
                &[libc::SOCK_STREAM as u64, libc::SOCK_DGRAM as u64],
                vec![(inet, ok.clone()), (inet6, ok)],
            )
        }
    };
    for (family, allowed_protos) in protos {
        for t in 0..=SOCK_TYPE_MASK {
            if !types.contains(&t) {
                rules.when(
                    libc::SYS_socket,
                    vec![
                        cond(0, SeccompCmpOp::Eq, family)?,
                        cond(1, SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK), t)?,
                    ],
                )?;
            }
        }
        let mut c = vec![cond(0, SeccompCmpOp::Eq, family)?];
        for p in allowed_protos {
            c.push(cond(2, SeccompCmpOp::Ne, p)?);
        }
        rules.when(libc::SYS_socket, c)?;
    }
    Ok(())
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

/// Inserts, right after seccompiler's 3-instruction arch check, the x32
/// guard (x86_64) and the `clone3 → ENOSYS` rule.
fn insert_prelude(mut program: BpfProgram, arch: TargetArch) -> Result<BpfProgram, SandboxError> {
    let arch_check_ok = program.len() > 3
        && program[0].code == BPF_LD_W_ABS
        && program[0].k == SECCOMP_DATA_ARCH
        && program[2].code == BPF_RET_K;
    if !arch_check_ok {
        return Err(SandboxError::Seccomp(
            "unexpected seccompiler program layout (arch check not found)".into(),
        ));
    }
    let mut prelude = vec![stmt(BPF_LD_W_ABS, SECCOMP_DATA_NR)];
    if matches!(arch, TargetArch::x86_64) {
        prelude.push(jump(
            BPF_JMP_JSET_K,
            super::kernel::X32_SYSCALL_BIT as u32,
            0,
            1,
        ));
        prelude.push(stmt(
            BPF_RET_K,
            libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        ));
    }
    prelude.push(jump(BPF_JMP_JEQ_K, libc::SYS_clone3 as u32, 0, 1));
    prelude.push(stmt(
        BPF_RET_K,
        libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
    ));
    program.splice(3..3, prelude);
    Ok(program)
}

/// Human-readable list of what the filter denies, for `describe`.
pub(crate) fn summary(spec: &SandboxSpec, landlock_abi: u32) -> Vec<String> {
    let mut out: Vec<String> = always_denied()
        .into_iter()
        .map(|(nr, why)| format!("{} ({why}): EPERM", syscall_name(nr)))
        .collect();
    out.push("clone with CLONE_NEW* flags: EPERM".into());
    out.push("clone3: ENOSYS (libc falls back to clone)".into());
    out.push("ioctl TIOCSTI/TIOCLINUX/TIOCSETD/TIOCVHANGUP/TIOCCONS: EPERM".into());
    if super::caps::keeps(spec, "CAP_SYS_ADMIN") {
        out.push("ioctl TIOCSCTTY with a non-zero argument (steal): EPERM".into());
    }
    out.push(format!(
        "{} on any pid but the caller's own (0): EPERM",
        PID_SYSCALLS.join(", ")
    ));
    if spec.sysv_ipc {
        out.push("System V IPC and POSIX message queues: allowed (sysv_ipc = true)".into());
    } else {
        out.extend(
            ipc_syscalls()
                .into_iter()
                .map(|(nr, why)| format!("{} ({why}): EPERM", syscall_name(nr))),
        );
    }
    out.push("x32 syscall numbers: EPERM; foreign architectures: killed (SIGSYS)".into());
    out.push("socketpair other than AF_UNIX: EPERM".into());
    let unix = if unix_socket_allowed(spec, landlock_abi) {
        "AF_UNIX allowed"
    } else {
        "AF_UNIX denied"
    };
    out.push(match spec.network {
        NetworkAccess::Off => format!("socket: all internet families denied, {unix}"),
        NetworkAccess::Full => format!("socket: all families allowed except as noted, {unix}"),
        NetworkAccess::Ping => format!("socket: only ICMP datagram sockets, {unix}"),
        NetworkAccess::Dns | NetworkAccess::Http => {
            format!("socket: only TCP/UDP on AF_INET/AF_INET6, {unix}")
        }
        NetworkAccess::Loopback => format!(
            "socket: only TCP/UDP on AF_INET/AF_INET6 (addresses checked by the supervisor: loopback only), {unix}"
        ),
    });
    out
}

fn syscall_name(nr: i64) -> String {
    let known: &[(i64, &str)] = &[
        (libc::SYS_ptrace, "ptrace"),
        (libc::SYS_process_vm_readv, "process_vm_readv"),
        (libc::SYS_process_vm_writev, "process_vm_writev"),
        (libc::SYS_pidfd_getfd, "pidfd_getfd"),
        (libc::SYS_mount, "mount"),
        (libc::SYS_umount2, "umount2"),
        (libc::SYS_pivot_root, "pivot_root"),
        (libc::SYS_move_mount, "move_mount"),
        (libc::SYS_open_tree, "open_tree"),
        (SYS_OPEN_TREE_ATTR, "open_tree_attr"),
        (libc::SYS_fsopen, "fsopen"),
        (libc::SYS_fsconfig, "fsconfig"),
        (libc::SYS_fsmount, "fsmount"),
        (libc::SYS_fspick, "fspick"),
        (libc::SYS_mount_setattr, "mount_setattr"),
        (libc::SYS_unshare, "unshare"),
        (libc::SYS_setns, "setns"),
        (libc::SYS_bpf, "bpf"),
        (libc::SYS_perf_event_open, "perf_event_open"),
        (libc::SYS_kexec_load, "kexec_load"),
        (libc::SYS_kexec_file_load, "kexec_file_load"),
        (libc::SYS_init_module, "init_module"),
        (libc::SYS_finit_module, "finit_module"),
        (libc::SYS_delete_module, "delete_module"),
        (libc::SYS_keyctl, "keyctl"),
        (libc::SYS_add_key, "add_key"),
        (libc::SYS_request_key, "request_key"),
        (libc::SYS_reboot, "reboot"),
        (libc::SYS_swapon, "swapon"),
        (libc::SYS_swapoff, "swapoff"),
        (libc::SYS_userfaultfd, "userfaultfd"),
        (libc::SYS_io_uring_setup, "io_uring_setup"),
        (libc::SYS_io_uring_enter, "io_uring_enter"),
        (libc::SYS_io_uring_register, "io_uring_register"),
        (libc::SYS_open_by_handle_at, "open_by_handle_at"),
        (libc::SYS_fanotify_init, "fanotify_init"),
        (libc::SYS_fanotify_mark, "fanotify_mark"),
        (libc::SYS_vhangup, "vhangup"),
        (libc::SYS_settimeofday, "settimeofday"),
        (libc::SYS_clock_settime, "clock_settime"),
        (libc::SYS_clock_adjtime, "clock_adjtime"),
        (libc::SYS_adjtimex, "adjtimex"),
        (libc::SYS_sethostname, "sethostname"),
        (libc::SYS_setdomainname, "setdomainname"),
        (libc::SYS_syslog, "syslog"),
        (libc::SYS_acct, "acct"),
        (libc::SYS_chroot, "chroot"),
        (libc::SYS_quotactl, "quotactl"),
        (SYS_QUOTACTL_FD, "quotactl_fd"),
        (libc::SYS_process_madvise, "process_madvise"),
        (SYS_PROCESS_MRELEASE, "process_mrelease"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_iopl, "iopl"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_ioperm, "ioperm"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_uselib, "uselib"),
        (libc::SYS_shmget, "shmget"),
        (libc::SYS_shmat, "shmat"),
        (libc::SYS_shmdt, "shmdt"),
        (libc::SYS_shmctl, "shmctl"),
        (libc::SYS_semget, "semget"),
        (libc::SYS_semop, "semop"),
        (libc::SYS_semtimedop, "semtimedop"),
        (libc::SYS_semctl, "semctl"),
        (libc::SYS_msgget, "msgget"),
        (libc::SYS_msgsnd, "msgsnd"),
        (libc::SYS_msgrcv, "msgrcv"),
        (libc::SYS_msgctl, "msgctl"),
        (libc::SYS_mq_open, "mq_open"),
        (libc::SYS_mq_unlink, "mq_unlink"),
        (libc::SYS_mq_timedsend, "mq_timedsend"),
        (libc::SYS_mq_timedreceive, "mq_timedreceive"),
        (libc::SYS_mq_notify, "mq_notify"),
        (libc::SYS_mq_getsetattr, "mq_getsetattr"),
    ];
    known
        .iter()
        .find(|(n, _)| *n == nr)
        .map(|(_, s)| (*s).to_string())
        .unwrap_or_else(|| format!("syscall {nr}"))
}

/// Installs a prepared program on the calling thread. Called between fork
/// and exec: no allocation, one `prctl` and one `seccomp` syscall.
pub(crate) fn install(program: &BpfProgram) -> Result<(), i32> {
    match seccompiler::apply_filter(program) {
        Ok(()) => Ok(()),
        Err(_) => Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{Enforcement, Limits};

    fn spec(network: NetworkAccess, unix: bool) -> SandboxSpec {
        SandboxSpec {
            read: vec![],
            write: vec![],
            deny_read: vec![],
            network,
            unix_sockets: unix,
            sysv_ipc: false,
            capabilities: vec![],
            devices: vec![],
            pty_broker: false,
            limits: Limits::default(),
            enforcement: Enforcement::Required,
            timeout: None,
        }
    }

    #[test]
    fn prelude_follows_arch_check() {
        let p = build(&spec(NetworkAccess::Off, false), 7).expect("filter builds");
        assert_eq!(p[0].k, SECCOMP_DATA_ARCH);
        assert_eq!(p[3].code, BPF_LD_W_ABS);
        assert_eq!(p[3].k, SECCOMP_DATA_NR);
        if cfg!(target_arch = "x86_64") {
            assert_eq!(p[4].code, BPF_JMP_JSET_K);
            assert_eq!(p[4].k, 0x4000_0000);
            assert_eq!(p[5].k, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
        }
    }

    #[test]
    fn every_mode_builds() {
        for n in [
            NetworkAccess::Off,
            NetworkAccess::Full,
            NetworkAccess::Ping,
            NetworkAccess::Dns,
            NetworkAccess::Http,
            NetworkAccess::Loopback,
        ] {
            for unix in [false, true] {
                for abi in [0, 7, 9] {
                    let p = build(&spec(n, unix), abi).expect("filter builds");
                    assert!(p.len() < 4096);
                }
            }
        }
    }

    #[test]
    fn duplicate_syscall_rules_accumulate() {
        let mut r = Rules::default();
        r.when(1, vec![cond(0, SeccompCmpOp::Eq, 1).expect("cond")])
            .expect("rule");
        r.when(1, vec![cond(0, SeccompCmpOp::Eq, 2).expect("cond")])
            .expect("rule");
        assert_eq!(r.into_map()[&1].len(), 2);
        let mut r = Rules::default();
        r.when(1, vec![cond(0, SeccompCmpOp::Eq, 1).expect("cond")])
            .expect("rule");
        r.always(1);
        assert!(r.into_map()[&1].is_empty(), "unconditional wins");
    }
}
