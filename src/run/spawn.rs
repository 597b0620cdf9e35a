//! Starting the command: the child-side setup between fork and exec, and
//! the status pipe that tells the parent what the child really got.
//!
//! Everything is allocated before the fork (argv, environment, ruleset,
//! BPF program, rlimit values); the `pre_exec` closure only makes syscalls.
//! The child reports over a close-on-exec pipe: `[0, applied]` just before
//! `execve` (so the parent learns the Landlock status the kernel returned),
//! or `[stage, errno (4 bytes)]` if a step failed.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::sandbox::{Applied, ApplyStage, Prepared};
use crate::supervisor::Listener;

/// The pipe the child reports its sandbox status on.
pub struct StatusPipe {
    read: libc::c_int,
    write: libc::c_int,
}

impl StatusPipe {
    /// Creates the pipe (both ends close-on-exec).
    pub fn new() -> io::Result<Self> {
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

    /// Closes the parent's write end and reads what the child sent.
    /// `Ok(Some(started))`: the sandbox was applied; `Err((stage, errno))`:
    /// the child failed at `stage`; `Ok(None)`: the child sent nothing.
    pub fn collect(mut self) -> Result<Option<Started>, (ApplyStage, i32)> {
        self.close_write();
        read_status(self.read)
    }

    /// The read end, for a supervisor thread that must read the status
    /// while the main thread is still in `spawn` (see [`read_status`]).
    pub fn read_end(&self) -> libc::c_int {
        self.read
    }

    /// Closes the parent's write end (after the fork).
    pub fn close_write(&mut self) {
        if self.write >= 0 {
            // SAFETY: closing our own descriptor once.
            unsafe { libc::close(self.write) };
            self.write = -1;
        }
    }
}

impl Drop for StatusPipe {
    fn drop(&mut self) {
        self.close_write();
        // SAFETY: closing our own descriptor.
        unsafe { libc::close(self.read) };
    }
}

/// What the child reported on success.
#[derive(Debug, Clone, Copy)]
pub struct Started {
    /// What the kernel enforced.
    pub applied: Applied,
    /// The supervisor's listener in the child, when one was installed.
    pub listener: Option<Listener>,
}

/// Length of the success message: `[0, applied, has_listener, fd (4), pid (4)]`.
const STARTED_LEN: usize = 11;

/// Reads the child's status from `fd`: stops after a whole success message
/// (the child is then about to `execve`, which the supervisor must answer)
/// or at end of file.
pub fn read_status(fd: libc::c_int) -> Result<Option<Started>, (ApplyStage, i32)> {
    let mut buf = [0u8; 16];
    let mut len = 0;
    while len < STARTED_LEN {
        // SAFETY: read into the unused tail of our buffer.
        let n = unsafe { libc::read(fd, buf[len..].as_mut_ptr().cast(), STARTED_LEN - len) };
        if n > 0 {
            len += n as usize;
        } else if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        } else {
            break;
        }
    }
    let word = |o: usize| i32::from_le_bytes([buf[o], buf[o + 1], buf[o + 2], buf[o + 3]]);
    match (len, buf[0]) {
        (STARTED_LEN, 0) => Ok(Some(Started {
            applied: Applied(buf[1]),
            listener: (buf[2] == 1).then(|| Listener {
                fd: word(3),
                pid: word(7),
            }),
        })),
        (5.., stage) if stage != 0 => Err((
            ApplyStage::from_u8(stage).unwrap_or(ApplyStage::Process),
            word(1),
        )),
        _ => Ok(None),
    }
}

/// Child-side write of a few bytes; no allocation.
fn send(fd: libc::c_int, bytes: &[u8]) {
    // SAFETY: write from a buffer we own; a short write only loses the report.
    unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
}

/// Supervision-only settings of the child.
#[derive(Clone, Copy)]
pub struct ChildProcess {
    /// safe-exec's pid, to detect that it died before PDEATHSIG was set.
    pub parent: libc::pid_t,
    /// Terminal to make the child's group the foreground of.
    pub tty: Option<libc::c_int>,
    /// Signal mask to restore (the caller's, before safe-exec blocked any).
    pub mask: nix::sys::signal::SigSet,
}

#[allow(clippy::too_many_arguments)]
/// Builds the command with the sandbox applied in `pre_exec`.
/// `child` is `Some` when supervising (own process group, parent-death
/// signal, terminal handover), `None` for exec in place.
pub fn command(
    program: &Path,
    argv: &[OsString],
    env: &[(OsString, OsString)],
    cwd: &Path,
    mut prepared: Prepared,
    pipe: &StatusPipe,
    child: Option<ChildProcess>,
    notify: bool,
) -> Command {
    let mut cmd = Command::new(program);
    if let Some(arg0) = argv.first() {
        cmd.arg0(arg0);
    }
    cmd.args(argv.iter().skip(1))
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd);
    if child.is_some() {
        cmd.process_group(0);
    }
    let status_fd = pipe.write;
    let setup = move || -> io::Result<()> {
        if let Some(c) = &child {
            // SAFETY: prctl/getppid/_exit are async-signal-safe syscalls.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                if libc::getppid() != c.parent {
                    libc::_exit(125); // safe-exec died before PDEATHSIG was armed
                }
            }
            if let Some(tty) = c.tty {
                // SIGTTOU is still blocked here (inherited mask), as needed.
                // SAFETY: getpid has no side effects.
                super::signals::give_terminal(tty, unsafe { libc::getpid() });
            }
            super::signals::set_mask(&c.mask);
        }
        if notify {
            // The supervisor (our parent) takes a duplicate of the listener
            // with pidfd_getfd, which needs this process to be dumpable;
            // execve resets it for the program.
            // SAFETY: prctl with constant arguments.
            unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) };
        }
        match prepared.apply() {
            Ok(applied) => {
                let mut msg = [0u8; STARTED_LEN];
                msg[1] = applied.0;
                if notify {
                    // The filter with the notified syscalls was installed
                    // last by apply, with a listener.
                    let Some(fd) = prepared.listener() else {
                        let e = libc::ENOSYS.to_le_bytes();
                        send(
                            status_fd,
                            &[ApplyStage::Seccomp as u8, e[0], e[1], e[2], e[3]],
                        );
                        return Err(io::Error::from_raw_os_error(libc::ENOSYS));
                    };
                    // SAFETY: getpid has no side effects.
                    let pid = unsafe { libc::getpid() };
                    msg[2] = 1;
                    msg[3..7].copy_from_slice(&fd.to_le_bytes());
                    msg[7..11].copy_from_slice(&pid.to_le_bytes());
                }
                send(status_fd, &msg);
                Ok(())
            }
            Err((stage, errno)) => {
                let e = errno.to_le_bytes();
                send(status_fd, &[stage as u8, e[0], e[1], e[2], e[3]]);
                Err(io::Error::from_raw_os_error(errno))
            }
        }
    };
    // SAFETY: the closure only performs syscalls (see Prepared::apply).
    unsafe { cmd.pre_exec(setup) };
    cmd
}

/// Program path for messages.
pub fn shown(program: &Path) -> String {
    PathBuf::from(program).display().to_string()
}
