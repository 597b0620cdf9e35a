//! The supervisor: what Landlock cannot express, answered by safe-exec
//! itself while the command runs (seccomp user notification).
//!
//! - metadata calls (chmod, chown, utime, xattr families) are performed by
//!   the supervisor on a descriptor it opened itself, only inside a writable
//!   root and never on a protected path;
//! - loopback-only network: connect/sendto/sendmsg addresses are copied once
//!   and the call is made on a duplicate of the child's socket;
//! - exec-time checks: every exec inside the tree is matched against the
//!   critical safety rules with its real argv (a first net);
//! - lifetime: safe-exec is the subreaper of the tree and kills what is left
//!   when the command ends or times out;
//! - protected files: snapshot before, restore after.
//!
//! docs/sandbox.md lists each mechanism's guarantee and limits.

pub mod filter;
pub mod mem;
pub mod notify;
pub mod protect;
pub mod reap;

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use std::sync::Arc;

/// Judges the real argv of a program started inside the tree (the exec-time
/// check, a first net). The caller injects it (run mode builds it from the
/// profile's safety rules, see `policy::exec_judge`), so the supervisor
/// knows nothing of the policy.
pub trait ExecJudge: Send + Sync + std::fmt::Debug {
    /// Why the exec must be refused, one label per critical match of the
    /// views (`program arg...`, see `notify::exec_views`); empty: let it
    /// run. The labels are joined with `; ` into the denial's reason.
    fn critical(&self, views: &[String]) -> Vec<String>;
}

/// What the supervisor enforces for one run. Built by the CLI from the
/// profile; `None` in the plan means no supervisor.
#[derive(Debug, Clone, Default)]
pub struct SupervisorSpec {
    /// Writable roots (metadata calls allowed beneath them).
    pub write_roots: Vec<PathBuf>,
    /// `[paths] protected` patterns, relative to each writable root.
    pub protected: Vec<String>,
    /// The exec-time check (the profile's safety rules, injected by the
    /// caller); `None` turns the exec-time checks off.
    pub exec_judge: Option<Arc<dyn ExecJudge>>,
    /// Home directory (so `rm -rf /home/u` is also seen as `rm -rf ~`).
    pub home: Option<PathBuf>,
    /// Whether connects are restricted to loopback (network = "loopback").
    pub loopback: bool,
    /// Where concurrent runs publish the protected files' baselines they
    /// share (`{state}/protect`, see [`protect::shared`]); `None`: this
    /// run's snapshot is its own.
    pub baselines: Option<PathBuf>,
    /// The sandbox's `deny_read` paths: a run whose command could write
    /// `baselines` is refused.
    pub deny_read: Vec<PathBuf>,
}

impl SupervisorSpec {
    /// Whether a metadata change of `path` (already resolved by the
    /// supervisor) may go ahead.
    pub fn metadata_allowed(&self, path: &Path) -> Result<(), String> {
        let Some(root) = self
            .write_roots
            .iter()
            .filter(|r| path.starts_with(r))
            .max_by_key(|r| r.as_os_str().len())
        else {
            return Err("outside the writable roots (Landlock does not cover metadata; the supervisor does)".into());
        };
        let rel = path.strip_prefix(root).unwrap_or(path);
        for root in self.write_roots.iter().filter(|r| path.starts_with(r)) {
            let rel = path.strip_prefix(root).unwrap_or(path);
            // A venv's pyvenv.cfg and activate scripts are protected in the
            // venvs that exist before the run (their content and mode are
            // put back by the snapshot); a metadata change of one is the
            // same as anywhere else, and refusing it would break making a
            // venv (`python -m venv` copies the activate scripts' modes).
            if let Some(p) = self
                .protected
                .iter()
                .find(|p| !protect::venv_metadata_free(p) && protect::matches(p, rel))
            {
                return Err(format!(
                    "protected path (matches `{p}` under {})",
                    root.display()
                ));
            }
        }
        let _ = rel;
        Ok(())
    }
}

/// What happened during one run.
#[derive(Debug, Clone, Default)]
pub struct Events {
    /// Notifications answered.
    pub notifications: u64,
    /// Refusals, one line each (also printed on stderr as they happen).
    pub denied: Vec<String>,
}

impl Events {
    fn deny(&mut self, line: String) {
        if self.denied.len() < 20 {
            eprintln!("safe-exec: denied: {line}");
        }
        self.denied.push(line);
    }
}

/// Whether this kernel and build can run the supervisor: seccomp user
/// notification with a listener, `pidfd_getfd` and `openat2` (Linux 5.9+),
/// probed once.
pub fn available() -> bool {
    use std::sync::OnceLock;
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            return false;
        }
        // SECCOMP_GET_NOTIF_SIZES answers on kernels with user notification.
        let mut sizes = libc::seccomp_notif_sizes {
            seccomp_notif: 0,
            seccomp_notif_resp: 0,
            seccomp_data: 0,
        };
        // SAFETY: the kernel writes the sizes struct we own.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_GET_NOTIF_SIZES,
                0,
                &mut sizes as *mut libc::seccomp_notif_sizes,
            )
        };
        if rc != 0 || sizes.seccomp_notif as usize > std::mem::size_of::<libc::seccomp_notif>() {
            return false;
        }
        // pidfd_getfd exists (5.6): EBADF for a bad pidfd, ENOSYS if absent.
        // SAFETY: harmless call with an invalid descriptor.
        let rc = unsafe { libc::syscall(libc::SYS_pidfd_getfd, -1, 0, 0) };
        rc < 0 && crate::sandbox::errno() != libc::ENOSYS
    })
}

/// What the child sends back about the listener it created.
#[derive(Debug, Clone, Copy)]
pub struct Listener {
    /// The listener's descriptor number in the child.
    pub fd: i32,
    /// The child's pid.
    pub pid: i32,
}

/// Takes a duplicate of the child's listener descriptor.
pub fn take_listener(l: Listener) -> std::io::Result<OwnedFd> {
    let pidfd = crate::sandbox::fds::pidfd_open(l.pid)?;
    crate::sandbox::fds::pidfd_getfd(&pidfd, l.fd)
}

/// Runs the notification loop on the current thread until the tree is gone
/// or `stop` is readable.
pub fn serve(
    listener: OwnedFd,
    spec: &SupervisorSpec,
    first_pid: i32,
    stop: libc::c_int,
) -> Events {
    let mut l = notify::Loop {
        listener,
        spec,
        rules: spec.exec_judge.clone(),
        first_pid,
        first_exec_done: false,
        events: Events::default(),
    };
    l.run(stop);
    l.events
}

/// Whether this kernel and build enforce loopback-only connects (the
/// supervisor's address checks). The policy allows loopback requests
/// (`curl localhost:8000`) only when this is true.
pub fn loopback_enforced() -> bool {
    available() && crate::sandbox::kernel::seccomp_available()
}

/// What `safe-exec doctor` reports about the supervisor: whether it runs
/// here and each of its mechanisms. Probed on this kernel: seccomp user
/// notification with a listener and `pidfd_getfd` ([`available`]), seccomp
/// itself ([`loopback_enforced`]) and `PR_SET_CHILD_SUBREAPER`.
pub fn mechanisms() -> Vec<crate::sandbox::selftest::Mechanism> {
    use crate::sandbox::selftest::Mechanism;
    let ok = available();
    let why_not = "the supervisor does not run on this kernel (needs seccomp user notification with a listener and pidfd_getfd, Linux 5.9+)";
    let subreaper = nix::sys::prctl::get_child_subreaper().is_ok();
    let m = |name: &'static str, enforced: bool, yes: &str| Mechanism {
        name,
        enforced,
        detail: if enforced {
            yes.to_string()
        } else {
            why_not.to_string()
        },
    };
    vec![
        m(
            "supervisor",
            ok,
            "seccomp user notification available: safe-exec supervises every sandboxed run",
        ),
        m(
            "supervisor.metadata",
            ok,
            "chmod/chown/utime/xattr calls are performed by the supervisor, only inside a writable root and never on a protected path",
        ),
        m(
            "supervisor.loopback",
            ok && loopback_enforced(),
            "network = \"loopback\": connect/sendto/sendmsg addresses are checked to be 127.0.0.0/8 or ::1",
        ),
        m(
            "supervisor.exec_checks",
            ok,
            "every exec inside the tree is matched against the critical safety rules with its real argv (a first net)",
        ),
        Mechanism {
            name: "supervisor.lifetime",
            enforced: ok && subreaper,
            detail: if !ok {
                why_not.to_string()
            } else if subreaper {
                "safe-exec is the subreaper of the tree and kills what is left when the command ends or times out".into()
            } else {
                "PR_SET_CHILD_SUBREAPER refused here: orphaned processes of the tree can outlive the command".into()
            },
        },
        m(
            "supervisor.protected_files",
            ok,
            "protected files under the writable roots are snapshotted before the run and restored after it",
        ),
        m(
            "supervisor.pty_broker",
            ok,
            "ioctl(TIOCGPTPEER) on the command's own pty master is answered by the supervisor: Landlock grants no /dev/pts entry but the command's own terminal",
        ),
    ]
}
