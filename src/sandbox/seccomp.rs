//! The seccomp filter: a deny-list on top of Landlock.
//!
//! Landlock cannot see sockets other than TCP, namespace or mount syscalls,
//! `ptrace`-like memory access, keyrings or terminal injection; this filter
//! closes those. Default action is Allow, a matched syscall fails with
//! `EPERM` (so programs see an ordinary "Operation not permitted"), except:
//!
//! - `clone3` fails with `ENOSYS`: its flags live in memory the filter cannot
//!   read, and `ENOSYS` makes glibc fall back to `clone`, whose flags we check;
//! - a non-native architecture (i386 `int 0x80`) is killed by the arch
//!   check (the command shows as killed by SIGSYS, exit 159);
//! - an x32 syscall number (`nr | 0x40000000`) fails with `EPERM` from the
//!   x32 guard, because the rules match exact numbers only and a deny-list
//!   would otherwise be bypassed through the x32 entry points.
//!
//! The program is compiled here (no seccompiler): a binary search on the
//! syscall number down to leaves of eight, each matched syscall's rules
//! (an AND of argument comparisons each) then `RET ALLOW`. It is about a
//! third of the size seccompiler emitted for the same rules (a linear chain
//! with five instructions per denied syscall and a rule per socket type),
//! and the kernel's cost of loading it (conversion to eBPF, JIT and the
//! per-syscall "always allowed" cache, which emulates the program for every
//! syscall number) grows with the size and the depth of the chain.
//! A unit test runs both programs on the same inputs and finds them equal.
//!
//! The program is built once in the parent; the child only installs it.

use std::collections::BTreeMap;

use libc::sock_filter;

use super::{NetworkAccess, SandboxError, SandboxSpec};

/// A compiled filter: classic BPF instructions.
pub type BpfProgram = Vec<sock_filter>;

// Classic BPF opcodes (linux/bpf_common.h).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_ALU_AND_K: u16 = 0x54;
const BPF_JMP_JA: u16 = 0x05;
const BPF_JMP_JEQ_K: u16 = 0x15;
const BPF_JMP_JGE_K: u16 = 0x35;
const BPF_JMP_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;
/// What a matched rule returns: "Operation not permitted".
const RET_DENY: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
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
/// `TIOCSPGRP`: make a process group the foreground of the caller's
/// controlling terminal (`tcsetpgrp`).
pub const TIOCSPGRP: u64 = 0x5410;
/// `TIOCGPTPEER`: open the peer (slave) of a pty master; allowed here, the
/// supervisor may answer it (see `sandbox::pty`).
pub const TIOCGPTPEER: u64 = 0x5441;

/// Terminal ioctls refused, each with a condition on its argument (none:
/// always) and why.
fn terminal_ioctls(spec: &SandboxSpec) -> Vec<(u64, Option<Cond>, &'static str)> {
    let mut out = vec![
        (
            TIOCSTI,
            None,
            "push bytes into a terminal's input queue (commands typed into the user's shell)",
        ),
        (
            TIOCLINUX,
            None,
            "console selection paste: the same injection on a virtual console",
        ),
        (
            TIOCSETD,
            None,
            "change the line discipline (silence the terminal, attach kernel drivers)",
        ),
        (
            TIOCVHANGUP,
            None,
            "hang up a terminal for every process using it",
        ),
        (
            TIOCCONS,
            None,
            "redirect the system console's output to a terminal",
        ),
        // `TIOCSCTTY, 0` on a terminal that is nobody's (`setsid` +
        // `login_tty` in script, python's pty.fork) keeps working; a non-zero
        // argument steals a terminal from another session (the kernel also
        // wants CAP_SYS_ADMIN, which is dropped unless the profile keeps it).
        (
            TIOCSCTTY,
            Some(cond(2, Op::Ne, 0)),
            "steal a terminal that is another session's controlling terminal",
        ),
    ];
    if !spec.job_control {
        // Red team 10 F20: a command that was not handed the foreground of
        // the caller's terminal (stdio redirected, or safe-exec in the
        // background) made itself the foreground group and read what the
        // user typed, and left the terminal to its dead group.
        out.push((
            TIOCSPGRP,
            None,
            "take the foreground of a terminal the command was not handed (read the user's keystrokes)",
        ));
    }
    out
}

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
        vec![cond(0, Op::Ne, 0), qcond(2, true, 0)],
    )?;
    // setpriority(which, who, prio): only PRIO_PROCESS (0) of the caller
    // (0); PRIO_PGRP/PRIO_USER reach processes outside the sandbox.
    rules.when(libc::SYS_setpriority, vec![cond(0, Op::Ne, 0)])?;
    rules.when(libc::SYS_setpriority, vec![cond(1, Op::Ne, 0)])?;
    // ioprio_set(which, who, prio): only IOPRIO_WHO_PROCESS (1) of the caller (0).
    rules.when(libc::SYS_ioprio_set, vec![cond(0, Op::Ne, 1)])?;
    rules.when(libc::SYS_ioprio_set, vec![cond(1, Op::Ne, 0)])?;
    // First argument is the target pid.
    for nr in [
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setattr,
        libc::SYS_migrate_pages,
        libc::SYS_move_pages,
    ] {
        rules.when(nr, vec![cond(0, Op::Ne, 0)])?;
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

/// How a condition compares an argument. The 32-bit forms look at the low
/// half of the argument only (what the kernel itself reads for `int`
/// arguments such as a family, a pid or an ioctl request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `arg == value`.
    Eq,
    /// `arg != value`.
    Ne,
    /// `arg & mask != value`.
    MaskedNe(u32),
    /// `arg & mask != 0`: any bit of the mask set (one `JSET`; the value
    /// is not looked at).
    AnyBit(u32),
}

/// One comparison on a syscall argument; a rule is an AND of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cond {
    arg: u8,
    /// Compare all 64 bits (pointers); only `Eq`/`Ne`.
    wide: bool,
    op: Op,
    value: u64,
}

/// A syscall's entry: unconditionally matched, or matched when any of the
/// rules (each an AND of conditions) holds. Adding a second rule to a
/// syscall never replaces the first.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Always,
    When(Vec<Vec<Cond>>),
}

#[derive(Default)]
struct Rules(BTreeMap<i64, Entry>);

impl Rules {
    fn always(&mut self, nr: i64) {
        self.0.insert(nr, Entry::Always);
    }

    fn when(&mut self, nr: i64, conditions: Vec<Cond>) -> Result<(), SandboxError> {
        let bad = |c: &Cond| {
            c.arg > 5
                || (!c.wide && c.value > u64::from(u32::MAX))
                || (c.wide && !matches!(c.op, Op::Eq | Op::Ne))
        };
        if conditions.is_empty() || conditions.iter().any(bad) {
            return Err(SandboxError::Seccomp(format!(
                "syscall {nr}: a rule needs conditions on arguments 0 to 5, 32-bit values for 32-bit comparisons"
            )));
        }
        match self.0.entry(nr).or_insert_with(|| Entry::When(Vec::new())) {
            Entry::Always => {}
            Entry::When(rules) => rules.push(conditions),
        }
        Ok(())
    }
}

/// When a syscall the supervisor answers (`supervisor::filter::notified`)
/// returns `SECCOMP_RET_USER_NOTIF`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotifyWhen {
    /// Every call is notified.
    Always,
    /// Notified only when argument `n` (a pointer) is not NULL.
    ArgNonNull(u32),
    /// Notified only when the low 32 bits of argument `n` equal the value
    /// (an ioctl request: the kernel itself only looks at the low 32 bits,
    /// so the high half must not be compared).
    Arg32Eq(u32, u32),
}

impl NotifyWhen {
    /// The rule (an AND of conditions; none: always).
    fn conds(self) -> Result<Vec<Cond>, SandboxError> {
        let arg = |n: u32| {
            u8::try_from(n)
                .ok()
                .filter(|a| *a <= 5)
                .ok_or_else(|| SandboxError::Seccomp(format!("no syscall argument {n}")))
        };
        Ok(match self {
            NotifyWhen::Always => vec![],
            NotifyWhen::ArgNonNull(n) => vec![qcond(arg(n)?, true, 0)],
            NotifyWhen::Arg32Eq(n, v) => vec![cond(arg(n)?, Op::Eq, u64::from(v))],
        })
    }
}

fn seccomp_err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Seccomp(e.to_string())
}

/// A condition on the low 32 bits of argument `arg`.
fn cond(arg: u8, op: Op, value: u64) -> Cond {
    Cond {
        arg,
        wide: false,
        op,
        value,
    }
}

/// A condition on a whole 64-bit argument (pointers): `Eq` or `Ne`.
fn qcond(arg: u8, ne: bool, value: u64) -> Cond {
    Cond {
        arg,
        wide: true,
        op: if ne { Op::Ne } else { Op::Eq },
        value,
    }
}

/// The `AUDIT_ARCH_*` value of this build's architecture (what the kernel
/// puts in `seccomp_data.arch`), or an error naming an unsupported one.
pub(crate) fn target_arch() -> Result<u32, SandboxError> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(0xC000_003E),  // AUDIT_ARCH_X86_64
        "aarch64" => Ok(0xC000_00B7), // AUDIT_ARCH_AARCH64
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
    build_with(spec, landlock_abi, &[])
}

/// [`build`], plus the supervisor's notified syscalls in the same program
/// (installed with a listener, see [`install`]). One program instead of two
/// stacked ones: the kernel pays its fixed cost of loading a filter (about
/// 60 µs here) once, and a syscall runs one program. The answers are those
/// of the two stacked filters (the strictest action wins there): a call the
/// rules refuse is refused, whatever the supervisor would have been asked;
/// a foreign architecture is killed and an x32 number refused before any
/// notification.
pub(crate) fn build_with(
    spec: &SandboxSpec,
    landlock_abi: u32,
    notify: &[(i64, NotifyWhen)],
) -> Result<BpfProgram, SandboxError> {
    let arch = target_arch()?;
    let mut rules = Rules::default();
    for (nr, _why) in always_denied() {
        rules.always(nr);
    }
    // clone(2) with any namespace flag: one `JSET` of the whole mask
    // (seccompiler needed one masked equality per bit).
    rules.when(
        libc::SYS_clone,
        vec![cond(0, Op::AnyBit(CLONE_NEW_MASK as u32), 0)],
    )?;
    // Terminal injection and takeover; the command number is compared on
    // its low 32 bits (Dword), which is what the tty layer uses
    // (CVE-2019-10063).
    for (cmd, arg, _why) in terminal_ioctls(spec) {
        let mut c = vec![cond(1, Op::Eq, cmd)];
        if let Some(arg) = arg {
            c.push(arg);
        }
        rules.when(libc::SYS_ioctl, c)?;
    }
    pid_rules(&mut rules)?;
    if !spec.sysv_ipc {
        for (nr, _why) in ipc_syscalls() {
            rules.always(nr);
        }
    }
    network_rules(&mut rules, spec, landlock_abi)?;
    let mut notified: BTreeMap<i64, Vec<Vec<Cond>>> = BTreeMap::new();
    for (nr, when) in notify {
        notified.entry(*nr).or_default().push(when.conds()?);
    }
    compile(&rules, &notified, arch)
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
    rules.when(libc::SYS_socketpair, vec![cond(0, Op::Ne, unix)])?;

    let mut families: Vec<u64> = Vec::new();
    if unix_socket_allowed(spec, landlock_abi) {
        families.push(unix);
    }
    match spec.network {
        NetworkAccess::Full => {
            if !families.contains(&unix) {
                rules.when(libc::SYS_socket, vec![cond(0, Op::Eq, unix)])?;
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
        outside.push(cond(0, Op::Ne, *f));
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
        // Any type but the allowed ones (the type bits of the second
        // argument; SOCK_NONBLOCK/SOCK_CLOEXEC are outside the mask).
        let mut c = vec![cond(0, Op::Eq, family)];
        for t in types {
            c.push(cond(1, Op::MaskedNe(SOCK_TYPE_MASK as u32), *t));
        }
        rules.when(libc::SYS_socket, c)?;
        let mut c = vec![cond(0, Op::Eq, family)];
        for p in allowed_protos {
            c.push(cond(2, Op::Ne, p));
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

/// Syscalls per leaf of the dispatch tree (searched linearly).
const LEAF: usize = 8;

/// Offset of the low half of `args[arg]` in `struct seccomp_data`
/// (little-endian targets only: x86_64 and aarch64).
const fn arg_lo(arg: u8) -> u32 {
    16 + 8 * arg as u32
}

/// Instructions [`rule_code`] emits for `c`.
fn cond_len(c: &Cond) -> usize {
    match (c.wide, c.op) {
        (true, _) => 4,
        (false, Op::Eq | Op::Ne) => 2,
        (false, Op::MaskedNe(_)) => 3,
        (false, Op::AnyBit(_)) => 2,
    }
}

/// One rule: each condition that does not hold jumps past the rule's
/// `RET ret` (to the next rule, or the syscall's `RET ALLOW`).
fn rule_code(conds: &[Cond], ret: u32, out: &mut BpfProgram) -> Result<(), SandboxError> {
    let total = conds.iter().map(cond_len).sum::<usize>() + 1;
    let base = out.len();
    // Offset from the instruction after position `at` to the end of the rule.
    let to_end = |at: usize| -> Result<u8, SandboxError> {
        u8::try_from(total - (at - base) - 1).map_err(seccomp_err)
    };
    for c in conds {
        let lo = arg_lo(c.arg);
        // Value halves; 32-bit conditions have only a low half (checked in `Rules::when`).
        let (hi_v, lo_v) = ((c.value >> 32) as u32, c.value as u32);
        match (c.wide, c.op) {
            (false, Op::Eq) | (false, Op::Ne) => {
                out.push(stmt(BPF_LD_W_ABS, lo));
                let next = to_end(out.len())?;
                out.push(if c.op == Op::Eq {
                    jump(BPF_JMP_JEQ_K, lo_v, 0, next)
                } else {
                    jump(BPF_JMP_JEQ_K, lo_v, next, 0)
                });
            }
            (false, Op::AnyBit(m)) => {
                out.push(stmt(BPF_LD_W_ABS, lo));
                let next = to_end(out.len())?;
                out.push(jump(BPF_JMP_JSET_K, m, 0, next));
            }
            (false, Op::MaskedNe(m)) => {
                out.push(stmt(BPF_LD_W_ABS, lo));
                out.push(stmt(BPF_ALU_AND_K, m));
                let next = to_end(out.len())?;
                out.push(jump(BPF_JMP_JEQ_K, lo_v, next, 0));
            }
            (true, Op::Eq) => {
                out.push(stmt(BPF_LD_W_ABS, lo + 4));
                let next = to_end(out.len())?;
                out.push(jump(BPF_JMP_JEQ_K, hi_v, 0, next));
                out.push(stmt(BPF_LD_W_ABS, lo));
                let next = to_end(out.len())?;
                out.push(jump(BPF_JMP_JEQ_K, lo_v, 0, next));
            }
            (true, _) => {
                // Ne: holds when either half differs.
                out.push(stmt(BPF_LD_W_ABS, lo + 4));
                out.push(jump(BPF_JMP_JEQ_K, hi_v, 0, 2));
                out.push(stmt(BPF_LD_W_ABS, lo));
                let next = to_end(out.len())?;
                out.push(jump(BPF_JMP_JEQ_K, lo_v, next, 0));
            }
        }
    }
    out.push(stmt(BPF_RET_K, ret));
    Ok(())
}

/// The code run once `nr` matched: `RET ERRNO`, or the refusing rules, then
/// the notifying ones, then `RET ALLOW`.
fn entry_code(
    deny: Option<&Entry>,
    notify: Option<&Vec<Vec<Cond>>>,
) -> Result<BpfProgram, SandboxError> {
    let mut out = Vec::new();
    if let Some(Entry::Always) = deny {
        out.push(stmt(BPF_RET_K, RET_DENY));
        return Ok(out);
    }
    if let Some(Entry::When(rules)) = deny {
        for r in rules {
            rule_code(r, RET_DENY, &mut out)?;
        }
    }
    for r in notify.into_iter().flatten() {
        rule_code(r, libc::SECCOMP_RET_USER_NOTIF, &mut out)?;
        if r.is_empty() {
            return Ok(out); // notified whatever the arguments
        }
    }
    out.push(stmt(BPF_RET_K, libc::SECCOMP_RET_ALLOW));
    Ok(out)
}

/// One entry of the dispatch: the syscall numbers `lo..=hi` and the code
/// run when one of them matched. A run of consecutive numbers denied
/// whatever their arguments is one entry (`code` then only `RET ERRNO`);
/// any other entry has `lo == hi`.
struct Span {
    lo: u32,
    hi: u32,
    code: BpfProgram,
}

/// Whether `code` is the single `RET ERRNO` of a syscall denied whatever
/// its arguments.
fn always_denies(code: &[sock_filter]) -> bool {
    code.len() == 1 && code[0].code == BPF_RET_K && code[0].k == RET_DENY
}

/// Merges consecutive syscall numbers that are denied whatever their
/// arguments into one [`Span`] (`mount`..`ioperm`, the `mq_*` calls, the
/// new mount API...): the dispatch then compares a run of them with two
/// `JGE`s instead of one `JEQ` each, and its tree has fewer leaves, so the
/// program the kernel converts, checks and compiles at every load is
/// shorter. Entries sorted by number, each number once.
fn spans(entries: Vec<(u32, BpfProgram)>) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::with_capacity(entries.len());
    for (nr, code) in entries {
        if let Some(last) = out.last_mut()
            && always_denies(&last.code)
            && always_denies(&code)
            && last.hi.checked_add(1) == Some(nr)
        {
            last.hi = nr;
            continue;
        }
        out.push(Span {
            lo: nr,
            hi: nr,
            code,
        });
    }
    out
}

/// Binary search on the syscall number (in the accumulator): `JGE` splits
/// the sorted spans in halves down to leaves of [`LEAF`] spans searched in
/// order, so a syscall takes about log2(n) + 8 comparisons and the
/// kernel's load-time emulation (its per-syscall "always allowed" cache)
/// stays short.
fn dispatch(entries: &[Span]) -> Result<BpfProgram, SandboxError> {
    let mut out = Vec::new();
    if entries.len() <= LEAF {
        // A syscall denied whatever its arguments jumps to the leaf's one
        // `RET ERRNO`, after its `RET ALLOW`; a span of them is two
        // comparisons (above its end: on to the next; else at or above its
        // start: denied; the spans before it in the leaf already took the
        // lower numbers it could match).
        let len: usize = entries
            .iter()
            .map(|e| match (always_denies(&e.code), e.lo == e.hi) {
                (true, true) => 1,
                (true, false) => 2,
                (false, _) => 1 + e.code.len(),
            })
            .sum();
        for e in entries {
            if always_denies(&e.code) {
                if e.lo != e.hi {
                    let above = e.hi.checked_add(1).ok_or_else(|| seccomp_err("span"))?;
                    out.push(jump(BPF_JMP_JGE_K, above, 1, 0));
                    let to_deny = u8::try_from(len - out.len()).map_err(seccomp_err)?;
                    out.push(jump(BPF_JMP_JGE_K, e.lo, to_deny, 0));
                } else {
                    let to_deny = u8::try_from(len - out.len()).map_err(seccomp_err)?;
                    out.push(jump(BPF_JMP_JEQ_K, e.lo, to_deny, 0));
                }
            } else {
                let skip = u8::try_from(e.code.len()).map_err(seccomp_err)?;
                out.push(jump(BPF_JMP_JEQ_K, e.lo, 0, skip));
                out.extend_from_slice(&e.code);
            }
        }
        out.push(stmt(BPF_RET_K, libc::SECCOMP_RET_ALLOW));
        out.push(stmt(BPF_RET_K, RET_DENY));
        return Ok(out);
    }
    let mid = entries.len() / 2;
    let left = dispatch(&entries[..mid])?;
    let right = dispatch(&entries[mid..])?;
    // nr >= mid: fall through to the JA over the left half; else skip it.
    out.push(jump(BPF_JMP_JGE_K, entries[mid].lo, 0, 1));
    out.push(stmt(
        BPF_JMP_JA,
        u32::try_from(left.len()).map_err(seccomp_err)?,
    ));
    out.extend(left);
    out.extend(right);
    Ok(out)
}

/// The whole program: the architecture check (a foreign architecture is
/// killed), the x32 guard (x86_64), `clone3 → ENOSYS`, then the rules.
fn compile(
    rules: &Rules,
    notify: &BTreeMap<i64, Vec<Vec<Cond>>>,
    arch: u32,
) -> Result<BpfProgram, SandboxError> {
    let mut p = vec![
        stmt(BPF_LD_W_ABS, SECCOMP_DATA_ARCH),
        jump(BPF_JMP_JEQ_K, arch, 1, 0),
        stmt(BPF_RET_K, libc::SECCOMP_RET_KILL_PROCESS),
        stmt(BPF_LD_W_ABS, SECCOMP_DATA_NR),
    ];
    if cfg!(target_arch = "x86_64") {
        p.push(jump(
            BPF_JMP_JSET_K,
            super::kernel::X32_SYSCALL_BIT as u32,
            0,
            1,
        ));
        p.push(stmt(BPF_RET_K, RET_DENY));
    }
    p.push(jump(BPF_JMP_JEQ_K, libc::SYS_clone3 as u32, 0, 1));
    p.push(stmt(
        BPF_RET_K,
        libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
    ));
    let nrs: std::collections::BTreeSet<i64> =
        rules.0.keys().chain(notify.keys()).copied().collect();
    let mut entries = Vec::with_capacity(nrs.len());
    for nr in nrs {
        let code = entry_code(rules.0.get(&nr), notify.get(&nr))?;
        entries.push((u32::try_from(nr).map_err(seccomp_err)?, code));
    }
    p.extend(dispatch(&spans(entries))?);
    if p.len() > 4096 {
        return Err(SandboxError::Seccomp(format!(
            "filter of {} instructions is over the kernel's 4096",
            p.len()
        )));
    }
    Ok(p)
}

/// Human-readable list of what the filter denies, for `describe`.
pub(crate) fn summary(spec: &SandboxSpec, landlock_abi: u32) -> Vec<String> {
    let mut out: Vec<String> = always_denied()
        .into_iter()
        .map(|(nr, why)| format!("{} ({why}): EPERM", syscall_name(nr)))
        .collect();
    out.push("clone with CLONE_NEW* flags: EPERM".into());
    out.push("clone3: ENOSYS (libc falls back to clone)".into());
    for (cmd, arg, why) in terminal_ioctls(spec) {
        let name = match cmd {
            TIOCSTI => "TIOCSTI",
            TIOCLINUX => "TIOCLINUX",
            TIOCSETD => "TIOCSETD",
            TIOCVHANGUP => "TIOCVHANGUP",
            TIOCCONS => "TIOCCONS",
            TIOCSCTTY => "TIOCSCTTY",
            TIOCSPGRP => "TIOCSPGRP",
            _ => "terminal ioctl",
        };
        let when = if arg.is_some() {
            " with a non-zero argument"
        } else {
            ""
        };
        out.push(format!("ioctl {name}{when} ({why}): EPERM"));
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

/// Installs a prepared program on the calling thread; with `listener`,
/// as `SECCOMP_FILTER_FLAG_NEW_LISTENER` and returns the listener
/// descriptor (close-on-exec), else 0. Called between fork and exec: no
/// allocation, one `prctl` and one `seccomp` syscall.
pub(crate) fn install(program: &BpfProgram, listener: bool) -> Result<libc::c_int, i32> {
    let fprog = libc::sock_fprog {
        len: u16::try_from(program.len()).map_err(|_| libc::E2BIG)?,
        filter: program.as_ptr().cast_mut(),
    };
    let flags = if listener {
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER
    } else {
        0
    };
    // SAFETY: prctl with constant arguments; seccomp(2) only reads the
    // program we own for the duration of the call. no_new_privs is set
    // here too (as seccompiler did) so the call never depends on the
    // caller having set it.
    let rc = unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags,
            &fprog as *const libc::sock_fprog,
        )
    };
    if rc < 0 {
        return Err(super::errno());
    }
    libc::c_int::try_from(rc).map_err(|_| libc::EBADF)
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
            job_control: false,
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
        r.when(1, vec![cond(0, Op::Eq, 1)]).expect("rule");
        r.when(1, vec![cond(0, Op::Eq, 2)]).expect("rule");
        assert!(matches!(&r.0[&1], Entry::When(v) if v.len() == 2));
        let mut r = Rules::default();
        r.when(1, vec![cond(0, Op::Eq, 1)]).expect("rule");
        r.always(1);
        assert_eq!(r.0[&1], Entry::Always, "unconditional wins");
        let mut r = Rules::default();
        assert!(r.when(1, vec![cond(6, Op::Eq, 1)]).is_err(), "no args[6]");
        assert!(
            r.when(1, vec![cond(0, Op::Eq, 1 << 32)]).is_err(),
            "32-bit value"
        );
        assert!(r.when(1, vec![]).is_err(), "a rule needs a condition");
    }

    /// Consecutive numbers denied whatever their arguments become one
    /// span; a number with argument rules, or a gap, ends it.
    #[test]
    fn consecutive_denials_merge_into_spans() {
        let deny = || vec![stmt(BPF_RET_K, RET_DENY)];
        let rules = || vec![stmt(BPF_RET_K, libc::SECCOMP_RET_ALLOW)];
        let s = spans(vec![
            (1, deny()),
            (2, deny()),
            (3, deny()),
            (4, rules()),
            (5, deny()),
            (7, deny()),
            (8, deny()),
        ]);
        let got: Vec<(u32, u32)> = s.iter().map(|e| (e.lo, e.hi)).collect();
        assert_eq!(got, vec![(1, 3), (4, 4), (5, 5), (7, 8)]);
        // The default filter's always-denied calls do run together.
        let sp = spec(NetworkAccess::Off, false);
        let p = build(&sp, 7).expect("filter builds");
        let ranges = p
            .windows(2)
            .filter(|w| w[0].code == BPF_JMP_JGE_K && w[1].code == BPF_JMP_JGE_K && w[0].jt == 1)
            .count();
        assert!(
            ranges >= 5,
            "{ranges} spans in a {}-instruction filter",
            p.len()
        );
    }

    /// Every syscall number (and its x32 alias, and another
    /// architecture), and for the numbers with argument rules every
    /// combination of interesting values in the arguments they look at:
    /// the new program answers as seccompiler's did.
    #[test]
    fn same_as_seccompiler() {
        let vals = testing::values();
        let mut checked = 0u64;
        for sp in testing::specs() {
            for abi in [7, 9] {
                let new = build(&sp, abi).expect("builds");
                let old = testing::reference(&sp, abi);
                assert!(new.len() < old.len(), "{} vs {}", new.len(), old.len());
                checked += testing::compare(&vals, &|d| testing::run(&new, d), &|d| {
                    testing::run(&old, d)
                });
            }
        }
        assert!(checked > 100_000, "{checked}");
    }
}

/// Test helpers shared with `supervisor::filter`'s tests: a BPF
/// interpreter, the programs as seccompiler and the former hand-written
/// notify filter built them, and the inputs to compare them on.
#[cfg(test)]
pub(crate) mod testing {
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
            job_control: unix,
            limits: Limits::default(),
            enforcement: Enforcement::Required,
            timeout: None,
        }
    }

    /// Every network mode with and without Unix sockets, SysV IPC allowed,
    /// CAP_SYS_ADMIN kept.
    pub(crate) fn specs() -> Vec<SandboxSpec> {
        let mut caps_admin = spec(NetworkAccess::Off, false);
        caps_admin.capabilities = vec!["CAP_SYS_ADMIN".into()];
        let mut ipc = spec(NetworkAccess::Loopback, false);
        ipc.sysv_ipc = true;
        let mut out = vec![caps_admin, ipc];
        for n in [
            NetworkAccess::Off,
            NetworkAccess::Full,
            NetworkAccess::Ping,
            NetworkAccess::Dns,
            NetworkAccess::Http,
            NetworkAccess::Loopback,
        ] {
            for unix in [false, true] {
                out.push(spec(n, unix));
            }
        }
        out
    }

    /// Values the rules compare with, their neighbours, flag bits and
    /// high halves.
    pub(crate) fn values() -> Vec<u64> {
        let mut v: Vec<u64> = vec![0, 1, 2, 3, 5, 6, 10, 17, 58, 0xf, 0x800, 0x80801];
        v.extend([
            TIOCSTI,
            TIOCLINUX,
            TIOCSETD,
            TIOCVHANGUP,
            TIOCCONS,
            TIOCSCTTY,
            TIOCSPGRP,
            TIOCGPTPEER,
        ]);
        for b in [0, 1, 4, 8, 16, 17, 25, 26, 27, 28, 29, 30, 31] {
            v.push(1 << b);
        }
        v.extend([1 << 32, (1 << 32) | 1, u64::MAX, 0x7E02_0000]);
        for t in [0u64, 3, 5, 10, 15] {
            v.push(t | 0x80000); // SOCK_CLOEXEC
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Runs `a` and `b` on the inputs and asserts the same answers; returns
    /// how many inputs were compared.
    pub(crate) fn compare(
        vals: &[u64],
        a: &dyn Fn(&[u32; 16]) -> u32,
        b: &dyn Fn(&[u32; 16]) -> u32,
    ) -> u64 {
        let arch = target_arch().expect("arch");
        let with_args = [
            libc::SYS_clone,
            libc::SYS_ioctl,
            libc::SYS_socket,
            libc::SYS_socketpair,
            libc::SYS_prlimit64,
            libc::SYS_setpriority,
            libc::SYS_ioprio_set,
            libc::SYS_sched_setaffinity,
            libc::SYS_move_pages,
            libc::SYS_sendto,
        ];
        let mut checked = 0;
        for nr in 0..520u32 {
            for x32 in [0, 0x4000_0000] {
                for ar in [arch, 0x4000_0003] {
                    let mut d = [0u32; 16];
                    d[0] = nr | x32;
                    d[1] = ar;
                    if !(with_args.contains(&i64::from(nr)) && x32 == 0 && ar == arch) {
                        d[4] = 0x1234; // args[0] low half, arbitrary
                        assert_eq!(a(&d), b(&d), "nr {nr:#x} arch {ar:#x}");
                        checked += 1;
                        continue;
                    }
                    for v0 in vals {
                        for v1 in vals {
                            for v2 in [0u64, 6, 58, 1 << 32] {
                                for v4 in [0u64, 1 << 32] {
                                    for (i, v) in [(0, *v0), (1, *v1), (2, v2), (4, v4)] {
                                        d[4 + 2 * i] = v as u32;
                                        d[5 + 2 * i] = (v >> 32) as u32;
                                    }
                                    assert_eq!(
                                        a(&d),
                                        b(&d),
                                        "nr {nr} args {v0:#x} {v1:#x} {v2:#x} {v4:#x}"
                                    );
                                    checked += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        checked
    }

    /// A classic-BPF interpreter for the opcodes seccomp programs use here.
    pub(crate) fn run(p: &[sock_filter], data: &[u32; 16]) -> u32 {
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let i = p[pc];
            pc += 1;
            match i.code {
                BPF_LD_W_ABS => a = data[i.k as usize / 4],
                BPF_ALU_AND_K => a &= i.k,
                BPF_JMP_JA => pc += i.k as usize,
                BPF_JMP_JEQ_K | BPF_JMP_JGE_K | BPF_JMP_JSET_K => {
                    let t = match i.code {
                        BPF_JMP_JEQ_K => a == i.k,
                        BPF_JMP_JGE_K => a >= i.k,
                        _ => a & i.k != 0,
                    };
                    pc += usize::from(if t { i.jt } else { i.jf });
                }
                BPF_RET_K => return i.k,
                c => panic!("opcode {c:#x} at {}", pc - 1),
            }
        }
    }

    /// The filter as seccompiler 0.5 built it before (the same rules,
    /// one rule per socket type), the reference for `same_as_seccompiler`.
    pub(crate) fn reference(spec: &SandboxSpec, abi: u32) -> Vec<sock_filter> {
        use seccompiler::{
            SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as O, SeccompCondition as C,
            SeccompFilter, SeccompRule, TargetArch,
        };
        let mut map: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        let always = |nr: i64, map: &mut BTreeMap<i64, Vec<SeccompRule>>| {
            map.insert(nr, vec![]);
        };
        fn when(map: &mut BTreeMap<i64, Vec<SeccompRule>>, nr: i64, c: Vec<C>) {
            let e = map.entry(nr).or_default();
            e.push(SeccompRule::new(c).expect("rule"));
        }
        let d = |arg: u8, op: O, v: u64| C::new(arg, Len::Dword, op, v).expect("cond");
        for (nr, _) in always_denied() {
            always(nr, &mut map);
        }
        let mut bit = 1u64;
        while bit <= CLONE_NEW_MASK {
            if CLONE_NEW_MASK & bit != 0 {
                when(&mut map, libc::SYS_clone, vec![d(0, O::MaskedEq(bit), bit)]);
            }
            bit <<= 1;
        }
        for cmd in [TIOCSTI, TIOCLINUX, TIOCSETD, TIOCVHANGUP, TIOCCONS] {
            when(&mut map, libc::SYS_ioctl, vec![d(1, O::Eq, cmd)]);
        }
        when(
            &mut map,
            libc::SYS_ioctl,
            vec![d(1, O::Eq, TIOCSCTTY), d(2, O::Ne, 0)],
        );
        if !spec.job_control {
            when(&mut map, libc::SYS_ioctl, vec![d(1, O::Eq, TIOCSPGRP)]);
        }
        when(
            &mut map,
            libc::SYS_prlimit64,
            vec![
                d(0, O::Ne, 0),
                C::new(2, Len::Qword, O::Ne, 0).expect("cond"),
            ],
        );
        when(&mut map, libc::SYS_setpriority, vec![d(0, O::Ne, 0)]);
        when(&mut map, libc::SYS_setpriority, vec![d(1, O::Ne, 0)]);
        when(&mut map, libc::SYS_ioprio_set, vec![d(0, O::Ne, 1)]);
        when(&mut map, libc::SYS_ioprio_set, vec![d(1, O::Ne, 0)]);
        for nr in [
            libc::SYS_sched_setaffinity,
            libc::SYS_sched_setscheduler,
            libc::SYS_sched_setparam,
            libc::SYS_sched_setattr,
            libc::SYS_migrate_pages,
            libc::SYS_move_pages,
        ] {
            when(&mut map, nr, vec![d(0, O::Ne, 0)]);
        }
        if !spec.sysv_ipc {
            for (nr, _) in ipc_syscalls() {
                always(nr, &mut map);
            }
        }
        let (unix, inet, inet6) = (1u64, 2u64, 10u64);
        when(&mut map, libc::SYS_socketpair, vec![d(0, O::Ne, unix)]);
        let mut families = Vec::new();
        if unix_socket_allowed(spec, abi) {
            families.push(unix);
        }
        let mut net = true;
        match spec.network {
            NetworkAccess::Full => {
                if !families.contains(&unix) {
                    when(&mut map, libc::SYS_socket, vec![d(0, O::Eq, unix)]);
                }
                net = false;
            }
            NetworkAccess::Off => {}
            _ => families.extend([inet, inet6]),
        }
        if net && families.is_empty() {
            always(libc::SYS_socket, &mut map);
            net = false;
        }
        if net {
            when(
                &mut map,
                libc::SYS_socket,
                families.iter().map(|f| d(0, O::Ne, *f)).collect(),
            );
            let (types, protos): (Vec<u64>, Vec<(u64, Vec<u64>)>) = match spec.network {
                NetworkAccess::Ping => (vec![2], vec![(inet, vec![1]), (inet6, vec![58])]),
                _ => (
                    vec![1, 2],
                    vec![(inet, vec![0, 6, 17]), (inet6, vec![0, 6, 17])],
                ),
            };
            for (family, allowed) in protos {
                for t in 0..=SOCK_TYPE_MASK {
                    if !types.contains(&t) {
                        when(
                            &mut map,
                            libc::SYS_socket,
                            vec![d(0, O::Eq, family), d(1, O::MaskedEq(SOCK_TYPE_MASK), t)],
                        );
                    }
                }
                let mut c = vec![d(0, O::Eq, family)];
                c.extend(allowed.iter().map(|p| d(2, O::Ne, *p)));
                when(&mut map, libc::SYS_socket, c);
            }
        }
        let arch = TargetArch::try_from(std::env::consts::ARCH).expect("arch");
        let filter = SeccompFilter::new(
            map,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )
        .expect("filter");
        let mut p: Vec<sock_filter> = seccompiler::BpfProgram::try_from(filter)
            .expect("program")
            .into_iter()
            .map(|i| sock_filter {
                code: i.code,
                jt: i.jt,
                jf: i.jf,
                k: i.k,
            })
            .collect();
        let mut prelude = vec![stmt(BPF_LD_W_ABS, SECCOMP_DATA_NR)];
        if cfg!(target_arch = "x86_64") {
            prelude.push(jump(BPF_JMP_JSET_K, 0x4000_0000, 0, 1));
            prelude.push(stmt(BPF_RET_K, RET_DENY));
        }
        prelude.push(jump(BPF_JMP_JEQ_K, libc::SYS_clone3 as u32, 0, 1));
        prelude.push(stmt(
            BPF_RET_K,
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        ));
        p.splice(3..3, prelude);
        p
    }

    /// The supervisor's notify filter as `supervisor/filter.rs` wrote it by
    /// hand before it joined the main program (stacked on top of it).
    pub(crate) fn old_notify_program(list: &[(i64, NotifyWhen)]) -> Vec<sock_filter> {
        let allow = libc::SECCOMP_RET_ALLOW;
        let notify = libc::SECCOMP_RET_USER_NOTIF;
        let arg_lo = |i: u32| 16 + 8 * i;
        let mut p = vec![
            stmt(BPF_LD_W_ABS, SECCOMP_DATA_ARCH),
            jump(BPF_JMP_JEQ_K, target_arch().expect("arch"), 1, 0),
            stmt(BPF_RET_K, allow),
            stmt(BPF_LD_W_ABS, SECCOMP_DATA_NR),
        ];
        if cfg!(target_arch = "x86_64") {
            p.push(jump(BPF_JMP_JSET_K, 0x4000_0000, 0, 1));
            p.push(stmt(BPF_RET_K, allow));
        }
        for (nr, m) in list {
            let nr = *nr as u32;
            match *m {
                NotifyWhen::Always => {
                    p.push(jump(BPF_JMP_JEQ_K, nr, 0, 1));
                    p.push(stmt(BPF_RET_K, notify));
                }
                NotifyWhen::ArgNonNull(i) => {
                    p.push(jump(BPF_JMP_JEQ_K, nr, 0, 6));
                    p.push(stmt(BPF_LD_W_ABS, arg_lo(i)));
                    p.push(jump(BPF_JMP_JEQ_K, 0, 0, 3));
                    p.push(stmt(BPF_LD_W_ABS, arg_lo(i) + 4));
                    p.push(jump(BPF_JMP_JEQ_K, 0, 0, 1));
                    p.push(stmt(BPF_RET_K, allow));
                    p.push(stmt(BPF_RET_K, notify));
                    p.push(stmt(BPF_LD_W_ABS, SECCOMP_DATA_NR));
                }
                NotifyWhen::Arg32Eq(i, value) => {
                    p.push(jump(BPF_JMP_JEQ_K, nr, 0, 4));
                    p.push(stmt(BPF_LD_W_ABS, arg_lo(i)));
                    p.push(jump(BPF_JMP_JEQ_K, value, 0, 1));
                    p.push(stmt(BPF_RET_K, notify));
                    p.push(stmt(BPF_LD_W_ABS, SECCOMP_DATA_NR));
                }
            }
        }
        p.push(stmt(BPF_RET_K, allow));
        p
    }
}
