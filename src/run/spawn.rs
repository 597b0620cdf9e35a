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
    /// Start the child in a new session (`setsid`: no controlling
    /// terminal) instead of only a new process group: none of its stdio is
    /// the caller's controlling terminal.
    pub new_session: bool,
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
        child_setup(&mut prepared, status_fd, child.as_ref(), notify, true)
    };
    // SAFETY: the closure only performs syscalls (see Prepared::apply).
    unsafe { cmd.pre_exec(setup) };
    cmd
}

/// What the child does between the fork (or clone) and `execve`: the
/// supervision settings (parent-death signal, terminal), the sandbox, and
/// the status message. System calls only, no allocation. `restore_mask`:
/// give the caller's signal mask back after the terminal handover (the
/// `fork` path; [`spawn`]'s child does it just before `execve`).
fn child_setup(
    prepared: &mut Prepared,
    status_fd: libc::c_int,
    child: Option<&ChildProcess>,
    notify: bool,
    restore_mask: bool,
) -> io::Result<()> {
    {
        if let Some(c) = child {
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
            if restore_mask {
                super::signals::set_mask(&c.mask);
            }
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
    }
}

/// Everything the child of [`spawn`] uses, built before the clone: the
/// child shares the parent's memory and only makes system calls.
struct ChildArgs<'a> {
    program: &'a std::ffi::CStr,
    argv: &'a [*const libc::c_char],
    /// `/bin/sh PROGRAM ARG...`: what runs when `execve` says ENOEXEC (a
    /// script without `#!`), as glibc's `execvp`, which
    /// `std::process::Command` uses, does.
    sh_argv: &'a [*const libc::c_char],
    envp: &'a [*const libc::c_char],
    cwd: &'a std::ffi::CStr,
    /// `setsid` rather than `setpgid(0, 0)` (see [`ChildProcess`]).
    new_session: bool,
    setup: &'a mut dyn FnMut() -> io::Result<()>,
    /// The mask the program starts with.
    mask: libc::sigset_t,
    /// Written by the child when it fails (errno of the failing step or of
    /// `execve`) before it exits; read by the parent after the clone
    /// returns (CLONE_VFORK: the child has then exec'd or exited).
    err: libc::c_int,
}

/// Size of the child's stack (mapped lazily: only the pages the setup
/// touches are ever faulted in).
const CHILD_STACK: usize = 256 * 1024;

/// Signals whose handlers safe-exec may have installed (the deciding
/// bound's fault handlers, `src/bound.rs`; std's own stack-overflow
/// handlers are gone with the own entry point); set back to the default in the
/// child before anything is unblocked, so that no handler of the parent
/// can run in the child, which shares its memory. `execve` resets them
/// anyway; ignored signals stay ignored (SIGPIPE is set back to the default
/// as `std::process::Command` does).
const RESET_IN_CHILD: [libc::c_int; 3] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGPIPE];

/// Job-control stops that may be pending in the child while every signal
/// is blocked (Ctrl-Z typed once the terminal is the child's and before its
/// `execve`).
const STOPS: [libc::c_int; 3] = [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU];

/// Discards a pending [`STOPS`] signal, keeping each one's action. Unblocked
/// before `execve`, it would stop the child there, while CLONE_VFORK keeps
/// the calling thread suspended until the child execs or exits: no one would
/// hand the terminal back or ever resume it (with `fork` the parent saw the
/// stop). Setting a signal's action to ignore discards its pending instances
/// (POSIX `sigaction`), then the action is put back. A stop typed in the few
/// instructions between this and `execve` is still delivered there. System
/// calls only, no allocation: safe in the child, which shares the parent's
/// memory.
fn discard_pending_stops() {
    for sig in STOPS {
        // SAFETY: `signal` only changes this process's action for `sig`
        // (the child has its own table: no CLONE_SIGHAND); no handler is
        // installed for these signals, so the previous action is default
        // or ignore, and putting it back is exact.
        unsafe {
            let previous = libc::signal(sig, libc::SIG_IGN);
            if previous != libc::SIG_ERR && previous != libc::SIG_IGN {
                libc::signal(sig, previous);
            }
        }
    }
}

extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `ChildArgs` the parent passed to clone; the
    // parent is suspended (CLONE_VFORK) until this child execs or exits,
    // so nothing else touches it meanwhile.
    let a = unsafe { &mut *arg.cast::<ChildArgs>() };
    let fail = |a: &mut ChildArgs, errno: libc::c_int| -> ! {
        a.err = if errno == 0 { libc::EINVAL } else { errno };
        // SAFETY: _exit ends this process without running anything of the
        // parent's (no atexit handlers, no stdio flush in shared memory).
        unsafe { libc::_exit(127) }
    };
    // SAFETY: system calls on values prepared by the parent; every signal
    // is still blocked (the parent blocked them all before the clone).
    unsafe {
        for sig in RESET_IN_CHILD {
            libc::signal(sig, libc::SIG_DFL);
        }
        if libc::chdir(a.cwd.as_ptr()) != 0 {
            fail(a, crate::sandbox::errno());
        }
        // (nix's setsid is the bare syscall: no allocation, errno kept)
        let grouped = if a.new_session {
            nix::unistd::setsid().is_ok()
        } else {
            libc::setpgid(0, 0) == 0
        };
        if !grouped {
            fail(a, crate::sandbox::errno());
        }
    }
    if let Err(e) = (a.setup)() {
        fail(a, e.raw_os_error().unwrap_or(libc::EINVAL));
    }
    discard_pending_stops();
    // SAFETY: execve with NULL-terminated arrays of NUL-terminated strings
    // that the parent keeps alive until this child has exec'd or exited.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &a.mask, std::ptr::null_mut());
        libc::execve(a.program.as_ptr(), a.argv.as_ptr(), a.envp.as_ptr());
        if crate::sandbox::errno() == libc::ENOEXEC {
            libc::execve(a.sh_argv[0], a.sh_argv.as_ptr(), a.envp.as_ptr());
            // As execvp: the error reported is the program's own.
            fail(a, libc::ENOEXEC);
        }
    }
    fail(a, crate::sandbox::errno())
}

/// Starts the command supervised: the child sets itself up exactly as
/// [`command`]'s `pre_exec` does (own process group, parent-death signal,
/// terminal, the sandbox, the status message) and execs `program`.
///
/// The child is started with `clone(CLONE_VM | CLONE_VFORK)` on a stack of
/// its own, as `posix_spawn` does: no copy of safe-exec's page tables, no
/// copy-on-write faults afterwards in either process, and an `execve` that
/// has no copied address space to tear down. The calling thread is
/// suspended until the child has exec'd or exited; safe-exec's other
/// threads run on, so the supervisor thread (started before) receives the
/// listener and answers the child's `execve`, as with `fork`.
///
/// Every signal is blocked in the parent around the clone and in the child
/// until just before `execve` (then the caller's original mask, as before),
/// so no signal handler runs in the child.
///
/// Returns the child's pid; when the child failed before or at `execve` it
/// has been reaped and the error is its errno (the status pipe tells which
/// step failed).
#[allow(clippy::too_many_arguments)]
pub fn spawn(
    program: &Path,
    argv: &[OsString],
    env: &[(OsString, OsString)],
    cwd: &Path,
    prepared: &mut Prepared,
    pipe: &StatusPipe,
    child: ChildProcess,
    notify: bool,
) -> io::Result<libc::pid_t> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let cstr = |b: &[u8]| CString::new(b).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL));
    let program_c = cstr(program.as_os_str().as_bytes())?;
    let cwd_c = cstr(cwd.as_os_str().as_bytes())?;
    let argv_c: Vec<CString> = argv
        .iter()
        .map(|a| cstr(a.as_bytes()))
        .collect::<io::Result<_>>()?;
    let envp_c: Vec<CString> = env
        .iter()
        .map(|(k, v)| {
            let mut kv = Vec::with_capacity(k.len() + v.len() + 1);
            kv.extend_from_slice(k.as_bytes());
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            cstr(&kv)
        })
        .collect::<io::Result<_>>()?;
    let argv_p: Vec<*const libc::c_char> = argv_c
        .iter()
        .map(|c| c.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let sh = c"/bin/sh";
    let sh_argv_p: Vec<*const libc::c_char> = [sh.as_ptr(), program_c.as_ptr()]
        .into_iter()
        .chain(argv_c.iter().skip(1).map(|c| c.as_ptr()))
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let envp_p: Vec<*const libc::c_char> = envp_c
        .iter()
        .map(|c| c.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let status_fd = pipe.write;
    let mut setup =
        || -> io::Result<()> { child_setup(prepared, status_fd, Some(&child), notify, false) };
    let mut args = ChildArgs {
        program: &program_c,
        argv: &argv_p,
        sh_argv: &sh_argv_p,
        envp: &envp_p,
        cwd: &cwd_c,
        new_session: child.new_session,
        setup: &mut setup,
        mask: *child.mask.as_ref(),
        err: 0,
    };
    // One stack per process, kept: unmapping it after each child would be
    // an `munmap` while the supervisor thread runs on the other CPU (a TLB
    // shootdown), and a later child maps it again. The lock is held until
    // the clone returns, when the child no longer runs on it.
    let mut kept = CHILD_STACK_KEPT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let stack = match kept.take() {
        Some(s) => s,
        None => ChildStack::new()?,
    };
    // SAFETY: a full signal set, filled by sigfillset.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `old` receives the calling thread's mask.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: sigfillset/pthread_sigmask on sets we own.
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    }
    // SAFETY: `child_main` runs on its own stack (`stack.top()`), only
    // reads `args` (alive in this frame: the parent is suspended until the
    // child has exec'd or exited) and writes `args.err`; CLONE_VM without
    // CLONE_FILES/CLONE_FS/CLONE_SIGHAND: the child has its own descriptor
    // table, working directory and signal dispositions.
    let pid = unsafe {
        libc::clone(
            child_main,
            stack.top(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&raw mut args).cast(),
        )
    };
    let clone_err = io::Error::last_os_error();
    // SAFETY: puts back the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    *kept = Some(stack);
    drop(kept);
    if pid < 0 {
        return Err(clone_err);
    }
    // SAFETY: the child wrote `err` (or not) before it exec'd or exited;
    // the clone returned after that.
    let err = unsafe { std::ptr::read_volatile(&raw const args.err) };
    if err != 0 {
        let mut st = 0;
        // SAFETY: reaping our own child, which has exited.
        while unsafe { libc::waitpid(pid, &mut st, 0) } < 0
            && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
        {}
        return Err(io::Error::from_raw_os_error(err));
    }
    Ok(pid)
}

/// The child's stack for [`spawn`]: an anonymous mapping with a guard page
/// below it.
struct ChildStack {
    base: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by the process; it is used by
// one child at a time, under `CHILD_STACK_KEPT`'s lock.
unsafe impl Send for ChildStack {}

/// The stack the last child ran on, for the next (see [`spawn`]).
static CHILD_STACK_KEPT: std::sync::Mutex<Option<ChildStack>> = std::sync::Mutex::new(None);

impl ChildStack {
    fn new() -> io::Result<Self> {
        let guard = 4096;
        let len = CHILD_STACK + guard;
        // SAFETY: a fresh private anonymous mapping, no address hint.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = Self { base, len };
        // SAFETY: the lowest page of our own mapping becomes inaccessible.
        if unsafe { libc::mprotect(base, guard, libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }

    fn top(&self) -> *mut libc::c_void {
        // SAFETY: one past the end of our mapping, 16-byte aligned (page
        // aligned), where a downward-growing stack starts.
        unsafe { self.base.cast::<u8>().add(self.len).cast() }
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping once; the child no longer runs
        // on it (it has exec'd or exited when the clone returned).
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// Program path for messages.
pub fn shown(program: &Path) -> String {
    PathBuf::from(program).display().to_string()
}

#[cfg(test)]
mod stop_tests {
    use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};

    /// A stop signal pending on a thread that blocks it is discarded, and
    /// the signal's action is default again afterwards (the command gets
    /// the caller's dispositions). Run on its own thread, which never
    /// unblocks a pending stop (that would stop the whole test process).
    #[test]
    fn a_pending_stop_is_discarded_and_its_action_kept() {
        let result = std::thread::spawn(|| {
            let mut stops = SigSet::empty();
            for s in [Signal::SIGTSTP, Signal::SIGTTIN, Signal::SIGTTOU] {
                stops.add(s);
            }
            pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&stops), None)
                .map_err(|e| e.to_string())?;
            let pending = |s: Signal| {
                // SAFETY: sigpending writes the pending set into `set`,
                // which sigemptyset initialised.
                unsafe {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    libc::sigpending(&mut set) != 0
                        || libc::sigismember(&set, s as libc::c_int) == 1
                }
            };
            for s in [Signal::SIGTSTP, Signal::SIGTTIN, Signal::SIGTTOU] {
                // raise: directed at this thread, which blocks it.
                nix::sys::signal::raise(s).map_err(|e| e.to_string())?;
                if !pending(s) {
                    return Err(format!("control: {s} is not pending after raising it"));
                }
            }
            super::discard_pending_stops();
            for s in [Signal::SIGTSTP, Signal::SIGTTIN, Signal::SIGTTOU] {
                if pending(s) {
                    return Err(format!("{s} still pending"));
                }
                // SAFETY: reads the action only (a null new action).
                let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
                // SAFETY: `old` is a valid sigaction to write into.
                unsafe { libc::sigaction(s as libc::c_int, std::ptr::null(), &mut old) };
                if old.sa_sigaction != libc::SIG_DFL {
                    return Err(format!("{s}: action changed"));
                }
            }
            Ok(())
        })
        .join();
        assert_eq!(result.ok(), Some(Ok(())));
    }
}
