//! Descriptor hygiene: nothing but stdin, stdout and stderr reaches the
//! command.
//!
//! The caller (an agent harness) may hold connected sockets, log files or
//! pipes without `O_CLOEXEC`; an inherited connected socket would be a
//! network path that no seccomp rule on `socket()` sees. Every descriptor
//! above 2 is marked close-on-exec just before `execve` (not closed, so the
//! sandbox setup that still needs its own descriptors keeps working).

//!
//! It also holds the `pidfd` calls (`pidfd_open`, `pidfd_getfd`,
//! `pidfd_send_signal`) that the supervisor and the pty broker use to reach
//! a descriptor or process of the command: `nix` has no wrapper for them.
//!
//! The fork-to-exec part works on descriptor *numbers* it does not own
//! (`fcntl` through `libc`: a `nix` call would need an unsafe
//! `BorrowedFd::borrow_raw` for each).

use nix::fcntl::{OFlag, open};
use nix::sys::resource::{Resource, getrlimit};
use nix::sys::stat::Mode;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A pidfd for process `pid` (`pidfd_open`, Linux 5.3).
pub fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes two integers and returns a new descriptor or
    // -1; it touches no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just gave us, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// A duplicate of descriptor `fd` of the process behind `pidfd`
/// (`pidfd_getfd`, Linux 5.6).
pub fn pidfd_getfd(pidfd: &OwnedFd, fd: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_getfd takes integers (our pidfd, a descriptor number in
    // the other process) and returns a new descriptor or -1.
    let m = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if m < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just gave us, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(m as libc::c_int) })
}

/// Sends `signal` to the process behind `pidfd` (`pidfd_send_signal`,
/// Linux 5.1): unlike `kill`, it cannot reach a reused pid.
pub fn pidfd_send_signal(pidfd: &OwnedFd, signal: libc::c_int) -> io::Result<()> {
    // SAFETY: pidfd_send_signal with a NULL siginfo reads no memory of ours.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `CLOSE_RANGE_CLOEXEC` (Linux 5.11).
const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;

/// Marks every descriptor `>= first` close-on-exec. Runs between fork and
/// exec: no allocation. Uses `close_range`, falling back to walking
/// `/proc/self/fd` with `getdents64` into a stack buffer, then to a loop
/// over every possible descriptor.
pub(crate) fn cloexec_from(first: libc::c_int) -> Result<(), i32> {
    // SAFETY: close_range only changes flags of our own descriptors.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first as libc::c_uint,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    if walk_proc_fd(first).is_ok() {
        return Ok(());
    }
    brute_force(first)
}

fn set_cloexec(fd: libc::c_int) {
    // SAFETY: fcntl on a descriptor number; EBADF is harmless.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
        }
    }
}

fn walk_proc_fd(first: libc::c_int) -> Result<(), i32> {
    // The descriptor is closed when `dir` is dropped (close: no allocation).
    let dir = open(
        c"/proc/self/fd",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| e as i32)?;
    let dir_fd = dir.as_raw_fd();
    let mut buf = [0u8; 4096];
    loop {
        let n = getdents(dir_fd, &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        for (name, _) in dirents(&buf[..n]) {
            let mut fd: libc::c_int = 0;
            let mut digits = 0;
            for &c in name {
                if !c.is_ascii_digit() {
                    break;
                }
                fd = fd
                    .saturating_mul(10)
                    .saturating_add(libc::c_int::from(c - b'0'));
                digits += 1;
            }
            if digits > 0 && fd >= first && fd != dir_fd {
                set_cloexec(fd);
            }
        }
    }
}

/// One `getdents64` of the open directory `fd` into `buf`: the number of
/// bytes filled (0 at the end of the directory) or the errno. No
/// allocation (used between fork and exec).
pub(crate) fn getdents(fd: libc::c_int, buf: &mut [u8]) -> Result<usize, i32> {
    let len = libc::c_uint::try_from(buf.len()).unwrap_or(libc::c_uint::MAX);
    // SAFETY: getdents64 writes at most `len` (<= buf.len()) bytes into buf.
    let n = unsafe { libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), len) };
    usize::try_from(n).map_err(|_| super::errno())
}

/// The entries in `filled` (what [`getdents`] returned): each name's bytes
/// (without the NUL) and its `d_type`. `.` and `..` included.
pub(crate) fn dirents(filled: &[u8]) -> impl Iterator<Item = (&[u8], u8)> {
    let mut off = 0usize;
    std::iter::from_fn(move || {
        // struct linux_dirent64 { u64 ino; i64 off; u16 reclen; u8 type; char name[]; }
        let head = filled.get(off..off + 19)?;
        let reclen = usize::from(u16::from_ne_bytes([head[16], head[17]]));
        let d_type = head[18];
        let rec = filled.get(off + 19..off + reclen.max(19))?;
        if reclen < 20 {
            return None;
        }
        off += reclen;
        let name = rec.split(|&b| b == 0).next().unwrap_or(rec);
        Some((name, d_type))
    })
}

fn brute_force(first: libc::c_int) -> Result<(), i32> {
    let max = getrlimit(Resource::RLIMIT_NOFILE)
        .map_or(65536, |(soft, _)| soft.min(1 << 20) as libc::c_int);
    for fd in first..max {
        set_cloexec(fd);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_cloexec(fd: &OwnedFd) -> bool {
        use nix::fcntl::{FcntlArg, fcntl};
        fcntl(fd, FcntlArg::F_GETFD).expect("F_GETFD") & libc::FD_CLOEXEC != 0
    }

    #[test]
    fn proc_walk_marks_descriptors() {
        let fd = open(c"/dev/null", OFlag::O_RDONLY, Mode::empty()).expect("open /dev/null");
        let raw = fd.as_raw_fd();
        assert!(raw > 2);
        assert!(!is_cloexec(&fd));
        walk_proc_fd(raw).expect("walk /proc/self/fd");
        assert!(is_cloexec(&fd));
    }
}
