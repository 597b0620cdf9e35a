//! Signals and the terminal while a command is supervised.
//!
//! safe-exec blocks the signals it forwards (INT, TERM, HUP, QUIT, WINCH,
//! USR1, USR2) plus CHLD, TTIN and TTOU, and reads them from a `signalfd`,
//! so nothing runs in a signal handler. Forwarded signals go to the
//! command's whole process group. The child gets the caller's original
//! signal mask back before `execve`.
//!
//! Terminal: the command always runs in its own process group (so a timeout
//! or a forwarded signal reaches its background jobs too). When safe-exec is
//! in the foreground of a terminal on stdin/stdout/stderr, that group is made
//! the terminal's foreground group (`tcsetpgrp`), as a shell does, so Ctrl-C,
//! window-size changes and full-screen programs (`script`, `stty size`,
//! editors) behave as without safe-exec; the terminal is handed back when
//! the command stops (Ctrl-Z: safe-exec then stops itself so the shell sees
//! the job stop) or ends.

use std::io;
use std::mem::MaybeUninit;

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

fn empty_set() -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        set.assume_init()
    }
}

/// Signals blocked in safe-exec while it supervises.
pub fn supervised_set() -> libc::sigset_t {
    let mut set = empty_set();
    for s in FORWARDED
        .iter()
        .chain(&[libc::SIGCHLD, libc::SIGTTIN, libc::SIGTTOU])
    {
        // SAFETY: adds a valid signal number to a set we own.
        unsafe { libc::sigaddset(&mut set, *s) };
    }
    set
}

/// Blocks `set` on the calling thread; returns the previous mask.
pub fn block(set: &libc::sigset_t) -> io::Result<libc::sigset_t> {
    let mut old = empty_set();
    // SAFETY: pthread_sigmask reads and writes sets we own.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, set, &mut old) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(old)
}

/// Restores a mask saved by [`block`]. Safe between fork and exec.
pub fn set_mask(mask: &libc::sigset_t) {
    // SAFETY: pthread_sigmask reads a set we own.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, mask, std::ptr::null_mut()) };
}

/// A non-blocking signalfd for `set`.
pub struct SignalFd(libc::c_int);

impl SignalFd {
    /// Creates the descriptor (the signals must already be blocked).
    pub fn new(set: &libc::sigset_t) -> io::Result<Self> {
        // SAFETY: signalfd reads a set we own and returns a new descriptor.
        let fd = unsafe { libc::signalfd(-1, set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self(fd))
    }

    /// Raw descriptor, for `poll`.
    pub fn fd(&self) -> libc::c_int {
        self.0
    }

    /// Next pending signal, or `None` when there is none.
    pub fn next(&self) -> Option<libc::c_int> {
        let mut info = MaybeUninit::<libc::signalfd_siginfo>::uninit();
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        // SAFETY: read writes at most `size` bytes into `info`.
        let n = unsafe { libc::read(self.0, info.as_mut_ptr().cast(), size) };
        if n as usize != size {
            return None;
        }
        // SAFETY: the kernel filled the whole struct.
        let info = unsafe { info.assume_init() };
        libc::c_int::try_from(info.ssi_signo).ok()
    }
}

impl Drop for SignalFd {
    fn drop(&mut self) {
        // SAFETY: closing the descriptor we own.
        unsafe { libc::close(self.0) };
    }
}

/// A terminal descriptor (0, 1 or 2) whose foreground process group is ours,
/// i.e. safe-exec runs in the foreground of a terminal.
pub fn foreground_tty() -> Option<libc::c_int> {
    // SAFETY: plain queries on standard descriptors.
    unsafe {
        let pgrp = libc::getpgrp();
        [0, 1, 2]
            .into_iter()
            .find(|fd| libc::isatty(*fd) == 1 && libc::tcgetpgrp(*fd) == pgrp)
    }
}

/// Makes `pgid` the foreground group of `tty`. SIGTTOU must be blocked when
/// the caller is in the background. Safe between fork and exec.
pub fn give_terminal(tty: libc::c_int, pgid: libc::pid_t) {
    // SAFETY: tcsetpgrp on a terminal descriptor; failure is harmless.
    unsafe { libc::tcsetpgrp(tty, pgid) };
}

/// Sends `sig` to the process group `pgid`, or to `pid` if the group is gone.
pub fn signal_group(pgid: libc::pid_t, pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: kill with a negative pid signals a process group.
    unsafe {
        if libc::kill(-pgid, sig) != 0 {
            libc::kill(pid, sig);
        }
    }
}
