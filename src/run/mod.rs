//! Runs an allowed command: resolve the program, apply the prepared sandbox
//! in the child, and either `execve` in place or supervise the child
//! (forward signals, enforce the wall-clock limit, report the outcome).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::sandbox::{EnforcementReport, SandboxSpec};

/// Everything needed to start the command; built after the decision is allow.
#[derive(Debug, Clone)]
pub struct ExecPlan {
    /// `argv[0]` is the program as the command named it (`git`, `/bin/true`).
    pub argv: Vec<OsString>,
    /// The environment after scrubbing.
    pub env: Vec<(OsString, OsString)>,
    /// Working directory of the command.
    pub cwd: PathBuf,
    /// The confinement to apply.
    pub sandbox: SandboxSpec,
    /// `false`: nothing needs the result, so `execve` in place (no extra
    /// process). `true`: fork, wait, forward signals, report an [`Outcome`].
    pub supervise: bool,
}

/// How a supervised command ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Exit code safe-exec itself exits with (child's code, 128+N, 124).
    pub exit_code: i32,
    /// Signal that killed the command, if any.
    pub signal: Option<i32>,
    /// Whether the wall-clock limit killed it.
    pub timed_out: bool,
    /// Wall time from start to reap.
    pub duration: Duration,
    /// What the kernel enforced.
    pub enforcement: EnforcementReport,
}
