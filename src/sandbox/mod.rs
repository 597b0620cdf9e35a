//! The kernel boundary: Landlock, seccomp, rlimits, descriptor and
//! environment hygiene for the command that was allowed.
//!
//! The validator (layers 0-3) is a first net; this module is what the kernel
//! enforces whatever the validator missed. Everything is *prepared* in the
//! parent (rulesets, BPF programs, rlimit values) so that the child, between
//! `fork` and `execve`, only applies them without allocating.

pub mod env;

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// What the command may touch, after placeholders (`{cwd}`, `{home}`, ...)
/// were resolved to absolute paths. Built by the profile layer; consumed by
/// [`prepare`].
#[derive(Debug, Clone, Serialize)]
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
    /// Resource limits applied with `setrlimit` in the child.
    pub limits: Limits,
    /// Refuse to run (`Required`) or warn (`BestEffort`) when the kernel
    /// cannot enforce everything above.
    pub enforcement: Enforcement,
    /// Wall-clock limit; the whole process group is killed and the run exits 124.
    pub timeout: Option<Duration>,
}

/// The network a command is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
}

/// Resource limits; `None` leaves the inherited limit in place.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Limits {
    /// `RLIMIT_CORE` in bytes (0 by default: no core dumps of secrets).
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
}
