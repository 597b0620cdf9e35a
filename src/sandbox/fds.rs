//! Descriptor hygiene: nothing but stdin, stdout and stderr reaches the
//! command.
//!
//! The caller (an agent harness) may hold connected sockets, log files or
//! pipes without `O_CLOEXEC`; an inherited connected socket would be a
//! network path that no seccomp rule on `socket()` sees. Every descriptor
//! above 2 is marked close-on-exec just before `execve` (not closed, so the
//! sandbox setup that still needs its own descriptors keeps working).

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
    // SAFETY: open of a constant NUL-terminated path.
    let dir = unsafe {
        libc::open(
            c"/proc/self/fd".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dir < 0 {
        return Err(super::errno());
    }
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: getdents64 writes at most buf.len() bytes into buf.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                dir,
                buf.as_mut_ptr(),
                buf.len() as libc::c_uint,
            )
        };
        if n <= 0 {
            // SAFETY: closing the descriptor we opened.
            unsafe { libc::close(dir) };
            return if n == 0 { Ok(()) } else { Err(super::errno()) };
        }
        let n = n as usize;
        let mut off = 0usize;
        // struct linux_dirent64 { u64 ino; i64 off; u16 reclen; u8 type; char name[]; }
        while off + 19 < n {
            let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
            if reclen == 0 {
                break;
            }
            let mut fd: libc::c_int = 0;
            let mut digits = 0;
            for &c in &buf[off + 19..(off + reclen).min(n)] {
                if !c.is_ascii_digit() {
                    break;
                }
                fd = fd
                    .saturating_mul(10)
                    .saturating_add(libc::c_int::from(c - b'0'));
                digits += 1;
            }
            if digits > 0 && fd >= first && fd != dir {
                set_cloexec(fd);
            }
            off += reclen;
        }
    }
}

fn brute_force(first: libc::c_int) -> Result<(), i32> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    let max = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        lim.rlim_cur.min(1 << 20) as libc::c_int
    } else {
        65536
    };
    for fd in first..max {
        set_cloexec(fd);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_cloexec(fd: libc::c_int) -> bool {
        // SAFETY: F_GETFD on our own descriptor.
        unsafe { libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC != 0 }
    }

    #[test]
    fn proc_walk_marks_descriptors() {
        // SAFETY: dup of stdin-independent descriptor we open ourselves.
        let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
        assert!(fd > 2);
        assert!(!is_cloexec(fd));
        walk_proc_fd(fd).expect("walk /proc/self/fd");
        assert!(is_cloexec(fd));
        // SAFETY: closing what we opened.
        unsafe { libc::close(fd) };
    }
}
