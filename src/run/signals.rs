//! Signals and the terminal while a command is supervised.
//!
//! safe-exec blocks the signals it forwards (INT, TERM, HUP, QUIT, WINCH,
//! USR1, USR2) plus CHLD, TTIN and TTOU, and reads them from a `signalfd`,
//! so nothing runs in a signal handler. Forwarded signals go to the
//! command's whole process group. The child gets the caller's original
//! signal mask back before `execve`.
//!
//! Terminal: the command always runs in its own process group (so a timeout
//! or a forwarded signal reaches its background jobs too), and in a session
//! of its own, without a controlling terminal, when none of descriptors 0-2
//! is safe-exec's controlling terminal (stdio redirected by a harness: the
//! user's terminal is then out of its reach). When safe-exec is
//! in the foreground of a terminal on stdin/stdout/stderr, that group is made
//! the terminal's foreground group (`tcsetpgrp`), as a shell does, so Ctrl-C,
//! window-size changes and full-screen programs (`script`, `stty size`,
//! editors) behave as without safe-exec; the terminal is handed back when
//! the command stops (Ctrl-Z: safe-exec then stops itself so the shell sees
//! the job stop) or ends.

use nix::sys::signal::{SigSet, SigmaskHow, Signal, kill, pthread_sigmask};
use nix::sys::signalfd::{self, SfdFlags};
use nix::unistd::{Pid, getpgrp, isatty, tcgetpgrp};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

/// Signals forwarded to the command's process group.
pub const FORWARDED: [libc::c_int; 7] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGWINCH,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

/// Signals blocked in safe-exec while it supervises.
pub fn supervised_set() -> SigSet {
    let mut set = SigSet::empty();
    for s in FORWARDED
        .iter()
        .chain(&[libc::SIGCHLD, libc::SIGTTIN, libc::SIGTTOU])
    {
        if let Ok(sig) = Signal::try_from(*s) {
            set.add(sig);
        }
    }
    set
}

/// Blocks `set` on the calling thread; returns the previous mask.
pub fn block(set: &SigSet) -> io::Result<SigSet> {
    let mut old = SigSet::empty();
    pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(set), Some(&mut old))?;
    Ok(old)
}

/// Restores a mask saved by [`block`]. Safe between fork and exec.
pub fn set_mask(mask: &SigSet) {
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(mask), None);
}

/// A non-blocking signalfd for `set`.
pub struct SignalFd(signalfd::SignalFd);

impl SignalFd {
    /// Creates the descriptor (the signals must already be blocked).
    pub fn new(set: &SigSet) -> io::Result<Self> {
        let fd =
            signalfd::SignalFd::with_flags(set, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)?;
        Ok(Self(fd))
    }

    /// Raw descriptor, for `poll`.
    pub fn fd(&self) -> libc::c_int {
        self.0.as_raw_fd()
    }

    /// Next pending signal, or `None` when there is none.
    pub fn next(&self) -> Option<libc::c_int> {
        let info = self.0.read_signal().ok()??;
        libc::c_int::try_from(info.ssi_signo).ok()
    }
}

/// A terminal descriptor (0, 1 or 2) whose foreground process group is ours,
/// i.e. safe-exec runs in the foreground of a terminal.
pub fn foreground_tty() -> Option<libc::c_int> {
    let pgrp = getpgrp();
    let ours =
        |fd: BorrowedFd<'_>| isatty(fd).unwrap_or(false) && tcgetpgrp(fd).is_ok_and(|g| g == pgrp);
    if ours(io::stdin().as_fd()) {
        Some(0)
    } else if ours(io::stdout().as_fd()) {
        Some(1)
    } else if ours(io::stderr().as_fd()) {
        Some(2)
    } else {
        None
    }
}

/// Whether descriptor 0, 1 or 2 is safe-exec's controlling terminal
/// (`tcgetpgrp` answers only for the caller's own controlling terminal).
/// When none is, the command is started in a session of its own (`setsid`),
/// without a controlling terminal: a harness that redirected the command's
/// stdio does not hand it the user's terminal (red team 10 F20).
pub fn stdio_is_controlling_tty() -> bool {
    [
        io::stdin().as_fd(),
        io::stdout().as_fd(),
        io::stderr().as_fd(),
    ]
    .into_iter()
    .any(|fd| tcgetpgrp(fd).is_ok())
}

/// Makes `pgid` the foreground group of `tty`. SIGTTOU must be blocked when
/// the caller is in the background. Safe between fork and exec. Takes the
/// descriptor number (0, 1 or 2) that [`foreground_tty`] found, so it stays
/// a `libc` call: `nix::unistd::tcsetpgrp` wants a borrowed descriptor.
pub fn give_terminal(tty: libc::c_int, pgid: libc::pid_t) {
    // SAFETY: tcsetpgrp on a descriptor number; touches no memory, and
    // failure (not a terminal, closed) is harmless.
    unsafe { libc::tcsetpgrp(tty, pgid) };
}

/// Sends `sig` to the process group `pgid`, or to `pid` if the group is gone.
pub fn signal_group(pgid: libc::pid_t, pid: libc::pid_t, sig: libc::c_int) {
    let Ok(sig) = Signal::try_from(sig) else {
        return;
    };
    if kill(Pid::from_raw(-pgid), sig).is_err() {
        let _ = kill(Pid::from_raw(pid), sig);
    }
}
