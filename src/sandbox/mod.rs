//! The kernel boundary: Landlock, seccomp, rlimits, descriptor and
//! environment hygiene for the command that was allowed.
//!
//! The validator (layers 0-3) is a first net; this module is what the kernel
//! enforces whatever the validator missed. Everything is *prepared* in the
//! parent (rulesets, BPF programs, rlimit values) so that the child, between
//! `fork` and `execve`, only applies them without allocating.

pub mod caps;
pub mod env;
pub mod fds;
pub mod kernel;
pub mod landlock;
pub mod limits;
pub mod pty;
pub mod seccomp;
pub mod selftest;
pub mod variables;

pub use kernel::{KernelSupport, probe_kernel};

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What the command may touch, after placeholders (`{cwd}`, `{home}`, ...)
/// were resolved to absolute paths. Built by the profile layer; consumed by
/// [`prepare`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SandboxSpec {
    /// Readable and executable trees (Landlock `Execute|ReadFile|ReadDir`).
    pub read: Vec<PathBuf>,
    /// Fully writable trees (all filesystem rights).
    pub write: Vec<PathBuf>,
    /// Paths that must stay unreadable even below a readable or writable
    /// root. Landlock only grants, so the rules are built around them.
    pub deny_read: Vec<PathBuf>,
    /// Network the command gets.
    pub network: NetworkAccess,
    /// Whether `socket(AF_UNIX, ...)` (connecting to host sockets such as
    /// `docker.sock`) is allowed. `socketpair` always works.
    pub unix_sockets: bool,
    /// System V IPC and POSIX message queues (`[sandbox] sysv_ipc`); denied
    /// by seccomp unless true.
    #[serde(default)]
    pub sysv_ipc: bool,
    /// Capabilities the command keeps (`[sandbox] capabilities`, e.g.
    /// `CAP_NET_BIND_SERVICE`); every other one is removed from all five
    /// sets before exec. Empty (the default): none.
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Extra device nodes granted read, write and ioctl
    /// (`[sandbox] devices`, e.g. `/dev/kvm`, `/dev/nvidia0`).
    #[serde(default)]
    pub devices: Vec<PathBuf>,
    /// Set by the supervisor when it opens pty slaves for the command
    /// (`ioctl(TIOCGPTPEER)` answered outside the Landlock domain, see
    /// [`pty`]): then no `/dev/pts` entry but the command's own terminal is
    /// granted. False: `/dev/pts` is granted as a whole (reported as
    /// degraded), or `openpty` would fail.
    #[serde(default)]
    pub pty_broker: bool,
    /// Set by `run` when safe-exec hands the command the foreground of the
    /// caller's controlling terminal (safe-exec is in the foreground of a
    /// terminal on descriptor 0, 1 or 2, see `run::signals`): only then may
    /// the command change a terminal's foreground process group
    /// (`TIOCSPGRP`, a shell's job control). False (the default): refused,
    /// so a command that was not given the terminal cannot take the
    /// foreground and read what the user types (red team 10 F20).
    #[serde(default)]
    pub job_control: bool,
    /// Resource limits applied with `setrlimit` in the child.
    pub limits: Limits,
    /// Refuse to run (`Required`) or warn (`BestEffort`) when the kernel
    /// cannot enforce everything above.
    pub enforcement: Enforcement,
    /// Wall-clock limit; the whole process group is killed and the run exits 124.
    pub timeout: Option<Duration>,
}

/// The network a command is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkAccess {
    /// No sockets but AF_UNIX (and that only if `unix_sockets`).
    Off,
    /// Unrestricted network (a profile said so).
    Full,
    /// ICMP datagram sockets only (`ping -c N HOST`).
    Ping,
    /// UDP and TCP to port 53 (`dig`, `nslookup`).
    Dns,
    /// TCP connect to ports 80 and 443 plus DNS (`curl -I URL`).
    Http,
    /// TCP and UDP to loopback addresses only (127.0.0.0/8, ::1), any
    /// port: the supervisor checks every address (see `crate::supervisor`).
    Loopback,
}

/// Resource limits; `None` leaves the inherited limit in place.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// `RLIMIT_CORE` in bytes. `None` also means 0: no core dumps of
    /// secrets unless a profile explicitly sets a size.
    pub core: Option<u64>,
    /// `RLIMIT_FSIZE` in bytes.
    pub file_size: Option<u64>,
    /// `RLIMIT_NOFILE`.
    pub open_files: Option<u64>,
    /// `RLIMIT_NPROC`.
    pub processes: Option<u64>,
    /// `RLIMIT_CPU` in seconds.
    pub cpu_seconds: Option<u64>,
    /// `RLIMIT_AS` in bytes.
    pub address_space: Option<u64>,
}

/// What to do when the kernel cannot enforce the whole spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Enforcement {
    /// Refuse to run (exit 125) naming the missing kernel feature.
    #[default]
    Required,
    /// Run with what the kernel offers; warn and record the achieved level.
    BestEffort,
}

/// What the kernel actually enforced for one run, reported by `check --json`,
/// `doctor`, the audit log and the best-effort warning.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EnforcementReport {
    /// Landlock ABI the kernel offers (0 when Landlock is unavailable).
    pub landlock_abi: u32,
    /// `full`, `partial` or `none`, from the ruleset status the kernel returned.
    pub landlock: String,
    /// Whether the seccomp filter was installed.
    pub seccomp: bool,
    /// Whether `no_new_privs` was set.
    pub no_new_privs: bool,
    /// Features the profile asked for that the kernel could not enforce.
    pub missing: Vec<String>,
    /// Hardening the kernel lacks that the profile does not depend on
    /// (e.g. signal scoping before Landlock ABI 6); reported, never refused.
    pub degraded: Vec<String>,
    /// Capabilities the command keeps (names); empty: none. When
    /// safe-exec itself holds no capabilities there is nothing to drop.
    pub capabilities: Vec<String>,
    /// Whether every capability set was cleared in the child (false only
    /// when the child could not, see `degraded`).
    pub capabilities_dropped: bool,
}

/// Why a sandbox could not be prepared. Every message says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A writable root (or the working directory) does not exist.
    #[error(
        "writable root {} does not exist: create it or remove it from [paths] write",
        .0.display()
    )]
    WriteRootMissing(PathBuf),
    /// The temporary directory (`{tmp}`: `$TMPDIR`, else `/tmp`) does not exist.
    #[error(
        "the temporary directory {} does not exist (it is the writable {{tmp}} root: $TMPDIR, else /tmp): set TMPDIR to an existing directory you can write, e.g. `mkdir -p ~/.cache/tmp && export TMPDIR=~/.cache/tmp`, or create it",
        .0.display()
    )]
    TmpMissing(PathBuf),
    /// `enforcement = "required"` and the kernel lacks a needed feature.
    #[error(
        "the kernel cannot enforce this profile: {}; run on a newer kernel or set [sandbox] enforcement = \"best-effort\"",
        .0.join("; ")
    )]
    Unenforceable(Vec<String>),
    /// The Landlock ruleset could not be built.
    #[error("could not build the Landlock ruleset: {0}")]
    Landlock(#[from] ::landlock::RulesetError),
    /// The seccomp filter could not be built.
    #[error("could not build the seccomp filter: {0}")]
    Seccomp(String),
    /// `[sandbox] capabilities` names something that is not a capability.
    #[error(
        "[sandbox] capabilities: unknown capability `{0}`; use names like CAP_NET_BIND_SERVICE (see capabilities(7))"
    )]
    UnknownCapability(String),
    /// A path needed to build the rules could not be read.
    #[error("could not {what} {}: {source}", path.display())]
    Io {
        /// What we were doing.
        what: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Current `errno`, readable between fork and exec.
pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

/// Features `spec` needs that a kernel with Landlock `abi` (and seccomp
/// `seccomp_ok`) cannot enforce (`missing`, refused under `Required`), and
/// hardening it lacks that the spec does not depend on (`degraded`).
pub fn kernel_gaps(spec: &SandboxSpec, abi: u32, seccomp_ok: bool) -> (Vec<String>, Vec<String>) {
    let mut missing = Vec::new();
    let mut degraded = Vec::new();
    if abi == 0 {
        missing.push(
            "Landlock (filesystem rules) not available: the kernel offers none (needs Linux 5.13+ with landlock in the lsm= list)"
                .to_string(),
        );
    } else {
        if abi < 3 {
            missing.push(format!(
                "Landlock ABI 3 (truncate rights) not available: kernel offers ABI {abi}"
            ));
        }
        if abi < 4 && matches!(spec.network, NetworkAccess::Dns | NetworkAccess::Http) {
            missing.push(format!(
                "Landlock ABI 4 (TCP rules) not available: kernel offers ABI {abi}"
            ));
        }
        if abi < 2 {
            degraded.push(format!(
                "Landlock ABI 2 (rename/link across directories) not available: kernel offers ABI {abi}; such renames are refused"
            ));
        }
        if abi < 5 {
            degraded.push(format!(
                "Landlock ABI 5 (device ioctl rules) not available: kernel offers ABI {abi}"
            ));
        }
        if abi < 6 {
            degraded.push(format!(
                "Landlock ABI 6 (signal and abstract-socket scoping) not available: kernel offers ABI {abi}; the command can signal your other processes"
            ));
        }
    }
    if !seccomp_ok {
        missing.push("seccomp filter not available on this kernel or architecture".to_string());
    }
    if abi > 0 && !spec.pty_broker {
        degraded.push(
            "no pty broker (the supervisor answers TIOCGPTPEER): /dev/pts is granted as a whole, so other terminals of this user are reachable"
                .to_string(),
        );
    }
    (missing, degraded)
}

/// What the run would be enforced with, predicted from the kernel, before
/// anything is applied (`check --json`, best-effort warnings).
pub fn predict_report(spec: &SandboxSpec) -> EnforcementReport {
    let abi = kernel::landlock_abi();
    let seccomp_ok = seccomp::target_arch().is_ok() && kernel::seccomp_available();
    report_for(spec, abi, seccomp_ok)
}

fn report_for(spec: &SandboxSpec, abi: u32, seccomp_ok: bool) -> EnforcementReport {
    let (missing, degraded) = kernel_gaps(spec, abi, seccomp_ok);
    EnforcementReport {
        landlock_abi: abi,
        landlock: match abi {
            0 => "none",
            a if a >= landlock::CRATE_ABI => "full",
            _ => "partial",
        }
        .to_string(),
        seccomp: seccomp_ok,
        no_new_privs: true,
        missing,
        degraded,
        capabilities: spec.capabilities.clone(),
        capabilities_dropped: true,
    }
}

/// A JSON summary of what `spec` confines the command to, for
/// `check --json` (`sandbox` key) and `--explain`.
pub fn describe(spec: &SandboxSpec) -> serde_json::Value {
    let abi = kernel::landlock_abi();
    let report = predict_report(spec);
    let rules = landlock::plan(spec)
        .map(|p| serde_json::to_value(p).unwrap_or(serde_json::Value::Null))
        .unwrap_or_else(|e| serde_json::Value::String(e.to_string()));
    serde_json::json!({
        "read": spec.read,
        "write": spec.write,
        "deny_read": spec.deny_read,
        "network": spec.network,
        "unix_sockets": spec.unix_sockets,
        "sysv_ipc": spec.sysv_ipc,
        "capabilities": spec.capabilities,
        "devices": spec.devices,
        "limits": spec.limits,
        "enforcement": spec.enforcement,
        "timeout_seconds": spec.timeout.map(|t| t.as_secs_f64()),
        "landlock": rules,
        "seccomp": seccomp::summary(spec, abi),
        "enforced": report,
    })
}

/// Where applying a prepared sandbox failed (between fork and exec).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ApplyStage {
    /// `setrlimit`.
    Rlimits = 1,
    /// Marking descriptors close-on-exec.
    Descriptors = 2,
    /// `landlock_restrict_self`.
    Landlock = 3,
    /// The kernel returned "not enforced" although Landlock was expected.
    LandlockNotEnforced = 4,
    /// `prctl(PR_SET_NO_NEW_PRIVS)`.
    NoNewPrivs = 5,
    /// Installing the seccomp filter.
    Seccomp = 6,
    /// Process setup around the sandbox (parent-death signal, terminal).
    Process = 7,
    /// Dropping capabilities.
    Capabilities = 8,
}

impl ApplyStage {
    /// Decodes a stage byte sent back by the child.
    pub fn from_u8(b: u8) -> Option<Self> {
        Some(match b {
            1 => Self::Rlimits,
            2 => Self::Descriptors,
            3 => Self::Landlock,
            4 => Self::LandlockNotEnforced,
            5 => Self::NoNewPrivs,
            6 => Self::Seccomp,
            7 => Self::Process,
            8 => Self::Capabilities,
            _ => return None,
        })
    }

    /// What the stage was doing, for error messages.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Rlimits => "setting resource limits",
            Self::Descriptors => "closing inherited descriptors",
            Self::Landlock => "applying the Landlock ruleset",
            Self::LandlockNotEnforced => {
                "applying the Landlock ruleset (the kernel did not enforce it)"
            }
            Self::NoNewPrivs => "setting no_new_privs",
            Self::Seccomp => "installing the seccomp filter",
            Self::Process => "setting up the child process",
            Self::Capabilities => "dropping capabilities",
        }
    }
}

/// What the child actually got, packed in one byte so it can be sent over a
/// pipe without allocating: bits 0-1 Landlock (0 none, 1 partial, 2 full),
/// bit 2 seccomp, bit 3 no_new_privs, bit 4 capabilities not dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Applied(pub u8);

impl Applied {
    /// Updates `report` with what was really enforced.
    pub fn update(self, report: &mut EnforcementReport) {
        report.landlock = match self.0 & 3 {
            2 => "full",
            1 => "partial",
            _ => "none",
        }
        .to_string();
        report.seccomp = self.0 & 4 != 0;
        report.no_new_privs = self.0 & 8 != 0;
        report.capabilities_dropped = self.0 & 16 == 0;
    }
}

/// A sandbox ready to apply: ruleset created, filter compiled, limits
/// computed. Built in the parent by [`prepare`]; [`Prepared::apply`] only
/// performs syscalls, so it is safe between fork and exec.
pub struct Prepared {
    ruleset: Option<::landlock::RulesetCreated>,
    filter: Option<seccomp::BpfProgram>,
    /// The filter holds the supervisor's notified syscalls: install it
    /// with a listener (see [`Prepared::listener`]).
    notify: bool,
    listener: libc::c_int,
    rlimits: Vec<limits::Rlimit>,
    caps: caps::CapDrop,
    required: bool,
    landlock_expected: bool,
    /// What the kernel is expected to enforce (updated with [`Applied`]).
    pub report: EnforcementReport,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("report", &self.report)
            .finish_non_exhaustive()
    }
}

/// Prepares `spec` for the running kernel. Under `Required`, refuses with
/// [`SandboxError::Unenforceable`] naming each missing kernel feature.
pub fn prepare(spec: &SandboxSpec) -> Result<Prepared, SandboxError> {
    prepare_with(spec, &[])
}

/// [`prepare`] for a supervised run: the seccomp filter also returns
/// `USER_NOTIF` for `notify` (one program, installed with a listener; the
/// child sends [`Prepared::listener`] to the supervisor). Fails when the
/// filter cannot be built, whatever the enforcement level: the supervisor
/// cannot work without it.
pub fn prepare_with(
    spec: &SandboxSpec,
    notify: &[(i64, seccomp::NotifyWhen)],
) -> Result<Prepared, SandboxError> {
    let abi = kernel::landlock_abi();
    let arch_ok = seccomp::target_arch().is_ok();
    let seccomp_ok = arch_ok && kernel::seccomp_available();
    let report = report_for(spec, abi, seccomp_ok);
    let required = spec.enforcement == Enforcement::Required;
    if required && !report.missing.is_empty() {
        return Err(SandboxError::Unenforceable(report.missing.clone()));
    }
    let caps = caps::CapDrop::prepare(&spec.capabilities)?;
    let plan = landlock::plan(spec)?;
    let ruleset = if abi > 0 {
        Some(landlock::build(&plan)?)
    } else {
        None
    };
    let filter = if arch_ok || !notify.is_empty() {
        Some(seccomp::build_with(spec, abi, notify)?)
    } else {
        None
    };
    Ok(Prepared {
        ruleset,
        filter,
        notify: !notify.is_empty(),
        listener: -1,
        rlimits: limits::prepare(&spec.limits),
        caps,
        required,
        landlock_expected: abi > 0,
        report,
    })
}

impl Prepared {
    /// Applies everything to the calling thread, in order: rlimits,
    /// close-on-exec for descriptors above 2, Landlock (which sets
    /// no_new_privs), no_new_privs, seccomp last (so the filter does not
    /// constrain the setup itself). Runs between fork and exec: performs
    /// syscalls only, never allocates. Under `Required` any failure is an
    /// error; under `BestEffort` only what could not be skipped is.
    pub fn apply(&mut self) -> Result<Applied, (ApplyStage, i32)> {
        let mut applied = 0u8;
        limits::apply(&self.rlimits).map_err(|e| (ApplyStage::Rlimits, e))?;
        fds::cloexec_from(3).map_err(|e| (ApplyStage::Descriptors, e))?;
        // Capabilities before Landlock and seccomp (dropping the bounding
        // set needs CAP_SETPCAP, which goes last). Always required: a
        // root command must never keep capabilities it was not given.
        match self.caps.apply() {
            Ok(()) => {}
            Err(e) if self.required => return Err((ApplyStage::Capabilities, e)),
            Err(_) => applied |= 16,
        }
        // A duplicate of the ruleset's descriptor is restricted with (and
        // closed in this process): the child may share the parent's memory
        // (`run::spawn` starts it with CLONE_VM | CLONE_VFORK), so the
        // parent's `Prepared` is left as it was and closes its own.
        let ruleset = match self.ruleset.as_ref().map(|r| r.try_clone()) {
            Some(Ok(r)) => Some(r),
            Some(Err(_)) if self.required => return Err((ApplyStage::Landlock, errno())),
            _ => None,
        };
        if let Some(ruleset) = ruleset {
            match ruleset.restrict_self() {
                Ok(status) => match status.ruleset {
                    ::landlock::RulesetStatus::FullyEnforced => applied |= 2,
                    ::landlock::RulesetStatus::PartiallyEnforced => applied |= 1,
                    ::landlock::RulesetStatus::NotEnforced => {
                        if self.required && self.landlock_expected {
                            return Err((ApplyStage::LandlockNotEnforced, libc::ENOSYS));
                        }
                    }
                },
                Err(_) => {
                    if self.required {
                        return Err((ApplyStage::Landlock, errno()));
                    }
                }
            }
        }
        // SAFETY: prctl with constant arguments.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } == 0 {
            applied |= 8;
        } else if self.required {
            return Err((ApplyStage::NoNewPrivs, errno()));
        }
        if let Some(filter) = &self.filter {
            match seccomp::install(filter, self.notify) {
                Ok(fd) => {
                    applied |= 4;
                    if self.notify {
                        self.listener = fd;
                    }
                }
                Err(e) => {
                    // Without the filter there is no listener either.
                    if self.required || self.notify {
                        return Err((ApplyStage::Seccomp, e));
                    }
                }
            }
        }
        Ok(Applied(applied))
    }

    /// The supervisor's listener descriptor once [`Prepared::apply`]
    /// installed a filter prepared with notified syscalls, else `None`.
    pub fn listener(&self) -> Option<libc::c_int> {
        (self.listener >= 0).then_some(self.listener)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(network: NetworkAccess) -> SandboxSpec {
        SandboxSpec {
            read: vec![],
            write: vec![],
            deny_read: vec![],
            network,
            unix_sockets: false,
            sysv_ipc: false,
            capabilities: vec![],
            devices: vec![],
            pty_broker: true,
            job_control: false,
            limits: Limits::default(),
            enforcement: Enforcement::Required,
            timeout: None,
        }
    }

    #[test]
    fn gaps_name_the_missing_kernel_feature() {
        let (m, _) = kernel_gaps(&spec(NetworkAccess::Http), 3, true);
        assert_eq!(
            m,
            vec!["Landlock ABI 4 (TCP rules) not available: kernel offers ABI 3".to_string()]
        );
        let (m, _) = kernel_gaps(&spec(NetworkAccess::Off), 3, true);
        assert!(m.is_empty(), "seccomp covers network off: {m:?}");
        let (m, _) = kernel_gaps(&spec(NetworkAccess::Off), 2, true);
        assert_eq!(m.len(), 1);
        assert!(m[0].contains("ABI 3 (truncate"));
        let (m, _) = kernel_gaps(&spec(NetworkAccess::Off), 0, false);
        assert_eq!(m.len(), 2);
        let (m, d) = kernel_gaps(&spec(NetworkAccess::Off), 7, true);
        assert!(m.is_empty() && d.is_empty());
        let (_, d) = kernel_gaps(&spec(NetworkAccess::Off), 4, true);
        assert_eq!(d.len(), 2);
    }

    #[test]
    fn unenforceable_message_tells_what_to_do() {
        let e = SandboxError::Unenforceable(vec!["X not available".into()]);
        let msg = e.to_string();
        assert!(msg.contains("X not available") && msg.contains("best-effort"));
    }

    #[test]
    fn applied_byte_round_trips_into_the_report() {
        let mut r = EnforcementReport::default();
        Applied(2 | 4 | 8).update(&mut r);
        assert_eq!(r.landlock, "full");
        assert!(r.seccomp && r.no_new_privs);
        Applied(0).update(&mut r);
        assert_eq!(r.landlock, "none");
        assert!(!r.seccomp);
    }

    #[test]
    fn describe_lists_rules_and_filter() {
        let mut s = spec(NetworkAccess::Off);
        s.read = vec![PathBuf::from("/usr")];
        let v = describe(&s);
        assert_eq!(v["network"], "off");
        assert!(
            v["landlock"]["rules"]
                .as_array()
                .is_some_and(|r| !r.is_empty())
        );
        assert!(v["seccomp"].as_array().is_some_and(|r| r.len() > 10));
    }
}
