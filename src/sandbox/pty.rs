//! Pseudo-terminals the command opens itself.
//!
//! Landlock checks the open of a pty slave even when it comes from
//! `ioctl(master, TIOCGPTPEER)` (the kernel opens `/dev/pts/N` by path on
//! the caller's behalf). Granting `/dev/pts` would also grant every other
//! terminal of the user (K2), so the slave is opened *outside* the Landlock
//! domain by the supervisor, which answers the command's
//! `ioctl(master, TIOCGPTPEER, flags)` (a seccomp user notification) with
//! [`open_peer`] and injects the descriptor (`SECCOMP_IOCTL_NOTIF_ADDFD`).
//! Only the peer of a master the command already holds can be opened that
//! way, and a master can only come from `/dev/ptmx`, which always creates a
//! new terminal.

use nix::sys::stat::{fstat, major, minor};
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

/// `TIOCGPTPEER`.
const TIOCGPTPEER: libc::c_ulong = 0x5441;

/// Opens the slave of the pty master that process `pid` holds as
/// descriptor `fd`, with the command's `flags` (only the access mode,
/// `O_NONBLOCK` and `O_CLOEXEC` are honoured; `O_NOCTTY` is always added so
/// the supervisor never acquires the terminal). Fails with `EINVAL` when
/// `fd` is not a pty master.
pub fn open_peer(pid: libc::pid_t, fd: libc::c_int, flags: libc::c_int) -> io::Result<OwnedFd> {
    let pidfd = super::fds::pidfd_open(pid)?;
    let master = super::fds::pidfd_getfd(&pidfd, fd)?;
    open_peer_of(&master, flags)
}

/// [`open_peer`] on a master descriptor this process holds.
pub fn open_peer_of(master: &OwnedFd, flags: libc::c_int) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    let st = fstat(master)?;
    // /dev/ptmx and /dev/pts/ptmx are character device 5:2.
    let is_ptmx = st.st_mode & libc::S_IFMT == libc::S_IFCHR
        && major(st.st_rdev) == 5
        && minor(st.st_rdev) == 2;
    if !is_ptmx {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let allowed = libc::O_ACCMODE | libc::O_NONBLOCK | libc::O_CLOEXEC;
    let flags = (flags & allowed) | libc::O_NOCTTY;
    // SAFETY: ioctl on a pty master we own; returns a new descriptor or -1.
    // (`nix` has no TIOCGPTPEER wrapper; its ioctl macros are unsafe too.)
    let peer = unsafe { libc::ioctl(master.as_raw_fd(), TIOCGPTPEER as _, flags) };
    if peer < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(peer) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn opens_the_peer_of_a_master_and_nothing_else() {
        use nix::fcntl::OFlag;
        let master = nix::pty::posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY).expect("posix_openpt");
        nix::pty::unlockpt(&master).expect("unlockpt");
        let me = nix::unistd::getpid().as_raw();
        let peer = open_peer(me, master.as_raw_fd(), libc::O_RDWR).expect("peer");
        assert!(nix::unistd::isatty(&peer).expect("isatty"));
        let null = std::fs::File::open("/dev/null").expect("null");
        let e = open_peer(me, null.as_raw_fd(), libc::O_RDWR).expect_err("not a master");
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    }
}
