//! Runs an allowed command: resolve the program, apply the prepared sandbox
//! in the child, and either `execve` in place or supervise the child
//! (forward signals, enforce the wall-clock limit, report the outcome).

pub mod resolve;
pub mod signals;
pub mod spawn;

use std::ffi::OsString;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sandbox::{self, EnforcementReport, NetworkAccess, SandboxError, SandboxSpec};
use crate::supervisor::{self as sup, SupervisorSpec};

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
    /// The supervisor (seccomp user notification, subreaper, protected
    /// files); `None` runs without one. Used only when
    /// [`crate::supervisor::available`]; it implies `supervise`.
    pub supervisor: Option<SupervisorSpec>,
    /// `true`: the caller's process exits right after [`execute`] returns
    /// (the CLI). The supervisor thread is then left parked once it has
    /// handed over what it saw, instead of being joined: joining unmaps its
    /// stack, and on a machine with more than one core that `munmap` sends
    /// an inter-processor interrupt to each core the thread ran on (35-80
    /// µs at the end of every run in a VM, measured with `strace -T`).
    /// `false` (a library caller that runs many commands): joined.
    pub ends_process: bool,
}

/// What the supervisor saw and did during one run.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SupervisorReport {
    /// Notifications answered.
    pub notifications: u64,
    /// Refused calls (metadata outside the roots, external addresses,
    /// exec-time rule matches).
    pub denied: Vec<String>,
    /// Processes of the tree still alive when the command ended, killed.
    pub killed: usize,
    /// Protected paths the command changed, restored.
    pub protected_restored: Vec<String>,
    /// Another confined run in an overlapping root was active during this
    /// one: what was restored may be that run's command's doing.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub protected_concurrent: bool,
    /// Limits hit while taking the protected snapshot.
    pub notes: Vec<String>,
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
    /// What the supervisor did (`None`: no supervisor ran).
    pub supervisor: Option<SupervisorReport>,
}

/// Why a command could not be run. [`RunError::exit_code`] maps each to the
/// contract's exit codes; every message says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The program is not on the command's PATH (exit 127).
    #[error("{program}: command not found (searched PATH={path})")]
    NotFound {
        /// Program as given.
        program: String,
        /// PATH that was searched.
        path: String,
    },
    /// The program exists but cannot be executed (exit 126).
    #[error("{program}: cannot execute: {reason}")]
    NotExecutable {
        /// Program as given or resolved.
        program: String,
        /// Why.
        reason: String,
    },
    /// The working directory is unusable (exit 125).
    #[error("working directory {}: {reason}; pass an existing directory with --cwd", cwd.display())]
    Cwd {
        /// The directory.
        cwd: PathBuf,
        /// Why.
        reason: String,
    },
    /// The argv is empty (exit 125).
    #[error("no program to run")]
    EmptyArgv,
    /// The sandbox could not be prepared, including `Required` refusals
    /// naming the missing kernel feature (exit 125).
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// Applying the sandbox in the child failed (exit 125).
    #[error("could not start {program}: {stage} failed: {source}")]
    Apply {
        /// Program.
        program: String,
        /// Which step.
        stage: &'static str,
        /// OS error.
        source: io::Error,
    },
    /// `fork`/`execve` failed for another reason (exit 125).
    #[error("could not start {program}: {source}")]
    Spawn {
        /// Program.
        program: String,
        /// OS error.
        source: io::Error,
    },
    /// Waiting for or signalling the command failed (exit 125).
    #[error("could not supervise the command: {0}")]
    Supervise(io::Error),
    /// The protected files could not all be snapshotted: the command was
    /// not started (exit 126).
    #[error("denied: the command was not started: {0}")]
    Protected(String),
}

/// Why the supervisor thread refused to let the command start (carried
/// through its channel inside an `io::Error`).
#[derive(Debug)]
struct ProtectedRefusal(String);

impl std::fmt::Display for ProtectedRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProtectedRefusal {}

impl RunError {
    /// Exit code safe-exec exits with for this error (contract table).
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::NotFound { .. } => 127,
            RunError::NotExecutable { .. } | RunError::Protected(_) => 126,
            _ => 125,
        }
    }
}

/// Runs `plan`: resolves the program, prepares the sandbox, and either
/// `execve`s in place (`supervise == false` and no timeout: never returns on
/// success) or forks, supervises and reports an [`Outcome`].
///
/// The environment gets `SAFE_EXEC_SANDBOX=1` (and
/// `SAFE_EXEC_NETWORK_DISABLED=1` when the network is off).
pub fn execute(mut plan: ExecPlan) -> Result<Outcome, RunError> {
    let start = Instant::now();
    let program = plan.argv.first().ok_or(RunError::EmptyArgv)?;
    match std::fs::metadata(&plan.cwd) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(RunError::Cwd {
                cwd: plan.cwd.clone(),
                reason: "not a directory".into(),
            });
        }
        Err(e) => {
            return Err(RunError::Cwd {
                cwd: plan.cwd.clone(),
                reason: e.to_string(),
            });
        }
    }
    let mut env = plan.env.clone();
    sandbox::env::add_markers(&mut env, plan.sandbox.network == NetworkAccess::Off);
    let resolved = resolve::resolve(program, &env, &plan.cwd)?;
    // The supervisor brokers the command's own pseudo-terminals
    // (`ioctl(TIOCGPTPEER)`, see `sandbox::pty`), so Landlock grants no
    // /dev/pts entry but the given terminal; without it /dev/pts stays
    // granted as a whole or `openpty` would fail.
    if plan.supervisor.is_some() && sup::available() {
        plan.sandbox.pty_broker = true;
    }
    let had_supervisor = plan.supervisor.is_some();
    let supervisor: Option<Arc<SupervisorSpec>> = match plan.supervisor.take() {
        Some(spec) if sup::available() => Some(Arc::new(spec)),
        _ => None,
    };
    // The supervisor's notified syscalls go into the sandbox's own filter
    // (one program, installed with a listener).
    let notified: Vec<(i64, sandbox::seccomp::NotifyWhen)> = match &supervisor {
        Some(spec) => sup::filter::notified(sup::filter::Notify {
            metadata: true,
            network: plan.sandbox.network == NetworkAccess::Loopback,
            exec: spec.exec_judge.is_some(),
        })
        .into_iter()
        .map(|(nr, when, _why)| (nr, when))
        .collect(),
        None => Vec::new(),
    };
    // The shared baselines' directory exists before the sandbox is
    // planned, so the `deny_read` entry that covers it is denied.
    if let Some(dir) = supervisor.as_ref().and_then(|s| s.baselines.as_deref()) {
        sup::protect::shared::prepare_dir(dir);
    }
    // Job control (TIOCSPGRP) only for a command handed the foreground of
    // the caller's terminal (see `supervise_inner`; in place, the command
    // is safe-exec's process in the caller's group).
    plan.sandbox.job_control = signals::foreground_tty().is_some();
    let prepared = sandbox::prepare_with(&plan.sandbox, &notified)?;
    let mut report = prepared.report.clone();
    // Only reachable under best-effort (`prepare` refuses it under required):
    // the contract says such a run goes ahead *with a warning*.
    if !report.missing.is_empty() {
        eprintln!(
            "safe-exec: warning: best-effort sandbox: not enforced on this kernel: {}",
            report.missing.join("; ")
        );
    }
    let pipe = spawn::StatusPipe::new().map_err(RunError::Supervise)?;
    let shown = spawn::shown(&resolved);
    if had_supervisor && supervisor.is_none() {
        if plan.sandbox.network == NetworkAccess::Loopback
            && plan.sandbox.enforcement == sandbox::Enforcement::Required
        {
            return Err(RunError::Sandbox(SandboxError::Unenforceable(vec![
                "seccomp user notification (loopback-only network) not available: needs Linux 5.9+"
                    .into(),
            ])));
        }
        report
            .degraded
            .push("supervisor (seccomp user notification) not available on this kernel".into());
    }

    if !plan.supervise && plan.sandbox.timeout.is_none() && supervisor.is_none() {
        let mut cmd = spawn::command(
            &resolved, &plan.argv, &env, &plan.cwd, prepared, &pipe, None, false,
        );
        let err = cmd.exec();
        return Err(start_error(
            &shown,
            err,
            pipe.collect().map(|o| o.map(|s| s.applied)),
        ));
    }

    // safe-exec stays alive beside the command: it must not hold, readable,
    // what was scrubbed from the command (K7).
    sandbox::env::protect_self(&env);
    let set = signals::supervised_set();
    let old_mask = signals::block(&set).map_err(RunError::Supervise)?;
    let mut sup_report = supervisor.as_ref().map(|_| SupervisorReport::default());
    let result = supervise(
        &plan,
        &resolved,
        &env,
        prepared,
        pipe,
        &set,
        old_mask,
        start,
        &mut report,
        supervisor,
        sup_report.as_mut(),
    );
    signals::set_mask(&old_mask);
    result.map(|(mut exit_code, signal, timed_out)| {
        if let Some(r) = &sup_report
            && !r.protected_restored.is_empty()
        {
            if r.protected_concurrent {
                eprintln!(
                    "safe-exec: denied: protected files inside the writable roots changed while this run or a concurrent one in the same root ran; they were put back: {}",
                    r.protected_restored.join(", ")
                );
            } else {
                eprintln!(
                    "safe-exec: denied: the command changed protected files inside the writable roots; they were put back: {}",
                    r.protected_restored.join(", ")
                );
            }
            if exit_code == 0 {
                exit_code = 126;
            }
        }
        Outcome {
            exit_code,
            signal,
            timed_out,
            duration: start.elapsed(),
            enforcement: report,
            supervisor: sup_report,
        }
    })
}

/// Maps a failed start to the right error, using what the child reported.
fn start_error(
    program: &str,
    err: io::Error,
    status: Result<Option<sandbox::Applied>, (sandbox::ApplyStage, i32)>,
) -> RunError {
    if let Err((stage, errno)) = status {
        return RunError::Apply {
            program: program.to_string(),
            stage: stage.describe(),
            source: io::Error::from_raw_os_error(errno),
        };
    }
    match err.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => RunError::NotExecutable {
            program: program.to_string(),
            reason: format!(
                "{err} (inside the sandbox: is the program or its interpreter outside the profile's readable roots?)"
            ),
        },
        Some(libc::ENOENT) => RunError::NotFound {
            program: program.to_string(),
            path: "(the program or its #! interpreter vanished or is missing)".into(),
        },
        Some(libc::ENOEXEC) => RunError::NotExecutable {
            program: program.to_string(),
            reason: format!("{err}"),
        },
        _ => RunError::Spawn {
            program: program.to_string(),
            source: err,
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn supervise(
    plan: &ExecPlan,
    resolved: &std::path::Path,
    env: &[(OsString, OsString)],
    prepared: sandbox::Prepared,
    pipe: spawn::StatusPipe,
    set: &nix::sys::signal::SigSet,
    old_mask: nix::sys::signal::SigSet,
    start: Instant,
    report: &mut EnforcementReport,
    supervisor: Option<Arc<SupervisorSpec>>,
    sup_report: Option<&mut SupervisorReport>,
) -> Result<(i32, Option<i32>, bool), RunError> {
    let Some(spec) = supervisor else {
        return supervise_inner(
            plan, resolved, env, prepared, pipe, set, old_mask, start, report, None,
        );
    };
    let roots = spec.write_roots.clone();
    sup::protect::read_git_globals();
    sup::reap::become_subreaper().map_err(RunError::Supervise)?;
    let stop = StopPipe::new().map_err(RunError::Supervise)?;
    let read_end = pipe.read_end();
    // The child shares safe-exec's memory until its execve (see
    // `spawn::spawn`), so its `PR_SET_DUMPABLE` (which `pidfd_getfd`
    // needs) is safe-exec's too: the supervisor thread puts this value
    // back as soon as it holds the listener, before it answers the
    // child's execve, i.e. before the command runs.
    let dumpable = nix::sys::prctl::get_dumpable().ok();
    // A channel of one slot, allocated here: its `send` allocates nothing,
    // so for a command that execs nothing more the supervisor thread never
    // allocates and glibc creates no malloc arena for it (a 128 MiB
    // reservation, trimmed, and its page faults).
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    // The thread's own start (std registers its thread-local destructors)
    // allocates too: let it share the main malloc arena instead of glibc
    // creating one per thread. safe-exec's few threads (this one, the
    // hooks' I/O pumps) contend for nothing that matters.
    // (glibc only: musl's allocator has no per-thread arenas.)
    // SAFETY: mallopt only sets a malloc tunable.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1)
    };
    // Not a scoped thread: with `plan.ends_process` it is never joined
    // (see there), so it owns what it uses and hands its result over by
    // `done` whether it is joined or not.
    let (done_tx, done_rx) = std::sync::mpsc::sync_channel(1);
    let park = plan.ends_process;
    let stop_read = stop.read;
    let thread_spec = Arc::clone(&spec);
    let thread_roots = roots.clone();
    let handle = std::thread::Builder::new()
        .spawn(move || {
            let out = supervisor_thread(
                &thread_spec,
                &thread_roots,
                read_end,
                stop_read,
                dumpable,
                &tx,
            );
            let _ = done_tx.send(out);
            drop((thread_spec, thread_roots, tx));
            // The process exits next (`ExecPlan::ends_process`): ending
            // this thread would only cost its stack's unmapping.
            if park {
                loop {
                    std::thread::park();
                }
            }
        })
        .map_err(RunError::Supervise)?;
    let r = supervise_inner(
        plan,
        resolved,
        env,
        prepared,
        pipe,
        set,
        old_mask,
        start,
        report,
        Some(&rx),
    );
    // No process of the tree outlives the command.
    let killed = sup::reap::kill_tree();
    stop.signal();
    // Without the snapshot (the thread ended abnormally; a bug) nothing can
    // be compared: fail rather than report the protected files as checked
    // (an empty snapshot would call every protected file new).
    let done = done_rx.recv();
    if !park {
        let _ = handle.join();
    }
    let Ok((events, mut snapshot, shared)) = done else {
        return Err(RunError::Supervise(io::Error::other(
            "the supervisor thread failed: the protected files were not checked",
        )));
    };
    // Under the shared lock when the baseline was published, which is
    // withdrawn after.
    let restored = match shared {
        Some(s) => s.finish(&mut snapshot, &roots, &spec.protected),
        None => snapshot.restore(&roots, &spec.protected),
    };
    if let Some(rep) = sup_report {
        rep.notifications = events.notifications;
        rep.denied = events.denied;
        rep.killed = killed;
        rep.protected_concurrent = restored.iter().any(|l| sup::protect::Snapshot::unsure(l));
        rep.protected_restored = restored;
        rep.notes = snapshot.notes.clone();
    }
    r
}

/// The supervisor thread's work for one run: the protected files'
/// snapshot, the listener taken from the child, then serving its
/// notifications until `stop_read` is readable.
fn supervisor_thread(
    spec: &SupervisorSpec,
    roots: &[PathBuf],
    read_end: libc::c_int,
    stop_read: libc::c_int,
    dumpable: Option<bool>,
    tx: &StatusTx,
) -> (
    sup::Events,
    sup::protect::Snapshot,
    Option<sup::protect::shared::Shared>,
) {
    // The protected files' snapshot is taken here, first, while the
    // calling thread clones the child and the child sets up its sandbox
    // (on the other core when there is one). The command cannot start
    // before it is complete: the child's first execve is always notified
    // (`sup::filter::notified`) and waits until this thread answers it in
    // `sup::serve`, after the snapshot; until then the child runs only
    // safe-exec's own set-up, which writes nothing in the roots.
    // With the baselines concurrent runs share (`protect::shared`):
    // another active run's wins for the paths it protects.
    let (snapshot, shared) = match &spec.baselines {
        Some(dir) => sup::protect::shared::begin(dir, roots, &spec.protected, &spec.deny_read),
        None => (sup::protect::Snapshot::take(roots, &spec.protected), None),
    };
    let status = spawn::read_status(read_end);
    let taken = match &status {
        Ok(Some(spawn::Started {
            listener: Some(l), ..
        })) => Some((sup::take_listener(*l), *l)),
        _ => None,
    };
    restore_dumpable(dumpable);
    // A snapshot that cannot cover every protected path (a bound hit, a
    // file too large or unreadable) fails closed: the child, still
    // waiting in its first execve, never runs.
    if !snapshot.refused.is_empty() {
        if let Some((_, l)) = &taken {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(l.pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = tx.send(Err(io::Error::other(ProtectedRefusal(
            snapshot.refused.join("; "),
        ))));
        return (sup::Events::default(), snapshot, shared);
    }
    let listener = match taken {
        Some((taken, l)) => match taken {
            Ok(fd) => Some((fd, l.pid)),
            Err(e) => {
                // The child waits in execve for an answer that would never
                // come: end it.
                // SAFETY: kill our own child.
                unsafe { libc::kill(l.pid, libc::SIGKILL) };
                let _ = tx.send(Err(e));
                return (sup::Events::default(), snapshot, shared);
            }
        },
        _ => None,
    };
    let _ = tx.send(Ok(status));
    let events = match listener {
        Some((fd, pid)) => sup::serve(fd, spec, pid, stop_read),
        None => sup::Events::default(),
    };
    (events, snapshot, shared)
}

/// Puts safe-exec's dumpable flag back to `value` (from `PR_GET_DUMPABLE`)
/// after a child that shared its memory set it (see `spawn::spawn`).
fn restore_dumpable(value: Option<bool>) {
    if let Some(v) = value {
        let _ = nix::sys::prctl::set_dumpable(v);
    }
}

/// A pipe whose readability tells the supervisor thread to stop.
struct StopPipe {
    read: libc::c_int,
    write: libc::c_int,
}

impl StopPipe {
    fn new() -> io::Result<Self> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            read: fds[0],
            write: fds[1],
        })
    }

    fn signal(&self) {
        // SAFETY: write one byte to our pipe.
        unsafe { libc::write(self.write, [1u8].as_ptr().cast(), 1) };
    }
}

impl Drop for StopPipe {
    fn drop(&mut self) {
        // SAFETY: closing our descriptors.
        unsafe {
            libc::close(self.read);
            libc::close(self.write);
        }
    }
}

/// What the supervisor thread tells the calling thread of the child's start.
type Status = io::Result<Result<Option<spawn::Started>, (sandbox::ApplyStage, i32)>>;
type StatusRx = std::sync::mpsc::Receiver<Status>;
type StatusTx = std::sync::mpsc::SyncSender<Status>;

#[allow(clippy::too_many_arguments)]
fn supervise_inner(
    plan: &ExecPlan,
    resolved: &std::path::Path,
    env: &[(OsString, OsString)],
    prepared: sandbox::Prepared,
    mut pipe: spawn::StatusPipe,
    set: &nix::sys::signal::SigSet,
    old_mask: nix::sys::signal::SigSet,
    start: Instant,
    report: &mut EnforcementReport,
    supervisor: Option<&StatusRx>,
) -> Result<(i32, Option<i32>, bool), RunError> {
    let sigfd = signals::SignalFd::new(set).map_err(RunError::Supervise)?;
    let tty = signals::foreground_tty();
    // SAFETY: getpid/getpgrp have no side effects.
    let (me, my_pgrp) = unsafe { (libc::getpid(), libc::getpgrp()) };
    let shown = spawn::shown(resolved);
    let rx = supervisor;
    let mut prepared = prepared;
    let dumpable = nix::sys::prctl::get_dumpable().ok();
    let spawned = spawn::spawn(
        resolved,
        &plan.argv,
        env,
        &plan.cwd,
        &mut prepared,
        &pipe,
        spawn::ChildProcess {
            parent: me,
            tty,
            new_session: tty.is_none() && !signals::stdio_is_controlling_tty(),
            mask: old_mask,
        },
        rx.is_some(),
    );
    drop(prepared);
    // The child has exec'd or exited: whatever it set on the memory it
    // shared is safe-exec's alone now (the supervisor thread, when there
    // is one, has already put it back before the command could run).
    restore_dumpable(dumpable);
    pipe.close_write();
    let status = match rx {
        // The supervisor thread read the status (it had to answer the
        // child's execve before spawn could return).
        Some(rx) => match rx.recv() {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                if let Ok(pid) = spawned {
                    // Reaping our own child (killed by the supervisor thread).
                    let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None);
                }
                if let Some(r) = e
                    .get_ref()
                    .and_then(|r| r.downcast_ref::<ProtectedRefusal>())
                {
                    return Err(RunError::Protected(r.0.clone()));
                }
                return Err(RunError::Supervise(e));
            }
            Err(_) => Ok(None),
        },
        None => pipe.collect(),
    };
    let pid = match spawned {
        Ok(pid) => pid,
        Err(e) => {
            return Err(start_error(&shown, e, status.map(|o| o.map(|s| s.applied))));
        }
    };
    if let Some(t) = tty {
        signals::give_terminal(t, pid); // also done in the child; whoever is first wins the race
    }
    match status {
        Ok(Some(started)) => started.applied.update(report),
        Ok(None) => {}
        Err((stage, errno)) => {
            return Err(RunError::Apply {
                program: shown,
                stage: stage.describe(),
                source: io::Error::from_raw_os_error(errno),
            });
        }
    }
    let subreaper = rx.is_some();
    let deadline = plan.sandbox.timeout.map(|t| start + t);
    let mut timed_out = false;
    let status = loop {
        let flags = libc::WNOHANG | if tty.is_some() { libc::WUNTRACED } else { 0 };
        let mut status = 0;
        // SAFETY: waitpid on our own child.
        let rc = unsafe { libc::waitpid(pid, &mut status, flags) };
        if rc == pid {
            if libc::WIFSTOPPED(status) {
                if let Some(t) = tty {
                    job_stop(t, my_pgrp, pid);
                }
                continue;
            }
            break status;
        }
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(RunError::Supervise(e));
        }
        if subreaper {
            // Orphans of the tree are reparented to us: reap them as they
            // exit (not the command itself, which is waited for above).
            sup::reap::reap_orphans(pid);
        }
        let timeout_ms = match deadline {
            None => -1,
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    timed_out = true;
                    signals::signal_group(pid, pid, libc::SIGKILL);
                    if subreaper {
                        sup::reap::kill_tree();
                    }
                    let mut st = 0;
                    // SAFETY: blocking waitpid on our own child.
                    while unsafe { libc::waitpid(pid, &mut st, 0) } < 0
                        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
                    {
                    }
                    break st;
                }
                i32::try_from((d - now).as_millis().saturating_add(1)).unwrap_or(i32::MAX)
            }
        };
        let mut pfd = libc::pollfd {
            fd: sigfd.fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll on one descriptor we own.
        unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        while let Some(sig) = sigfd.next() {
            if signals::FORWARDED.contains(&sig) {
                signals::signal_group(pid, pid, sig);
            }
        }
    };
    // No orphans: whatever is left of the command's process group goes too.
    signals::signal_group(pid, pid, libc::SIGKILL);
    if let Some(t) = tty {
        signals::give_terminal(t, my_pgrp);
    }
    let (code, signal) = if timed_out {
        (124, Some(libc::SIGKILL))
    } else if libc::WIFSIGNALED(status) {
        let s = libc::WTERMSIG(status);
        (128 + s, Some(s))
    } else {
        (libc::WEXITSTATUS(status), None)
    };
    Ok((code, signal, timed_out))
}

/// The command stopped (Ctrl-Z): take the terminal back, stop safe-exec so
/// the shell sees the job stop, and on `fg` hand the terminal back and
/// continue the command's group.
fn job_stop(tty: libc::c_int, my_pgrp: libc::pid_t, pid: libc::pid_t) {
    signals::give_terminal(tty, my_pgrp);
    // SAFETY: stopping ourselves; execution resumes on SIGCONT.
    unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
    if signals::foreground_tty() == Some(tty) {
        signals::give_terminal(tty, pid);
    }
    signals::signal_group(pid, pid, libc::SIGCONT);
}
