//! The notification loop: receive, decide, answer.
//!
//! Every answer that is a security decision is either an error or the
//! result of a call the supervisor performed itself on an object it opened
//! or duplicated (never `SECCOMP_USER_NOTIF_FLAG_CONTINUE`, which would let
//! the child swap the memory after the check). `CONTINUE` is used only
//! where the decision does not depend on the child's memory (a socket that
//! is not an internet socket, a connected TCP socket without
//! `MSG_FASTOPEN`) and for the exec-time check, which is a documented first
//! net.

use nix::fcntl::{AT_FDCWD, AtFlags, FcntlArg, OFlag, OpenHow, ResolveFlag, fcntl, open, openat2};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::stat::{FchmodatFlags, Mode, fchmodat, fstat};
use nix::unistd::{Gid, Uid, fchownat};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::filter::{SYS_FCHMODAT2, SYS_REMOVEXATTRAT, SYS_SETXATTRAT};
use super::mem::{self, AsChild};
use super::{Events, ExecJudge, SupervisorSpec};

/// The answer to one notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Return this value from the syscall.
    Value(i64),
    /// Fail with this errno.
    Errno(i32),
    /// Let the kernel run the syscall (never for a decision that depends on
    /// the child's memory).
    Continue,
}

/// State of one supervised run.
pub struct Loop<'a> {
    pub(crate) listener: OwnedFd,
    pub(crate) spec: &'a SupervisorSpec,
    pub(crate) rules: Option<std::sync::Arc<dyn ExecJudge>>,
    pub(crate) first_pid: i32,
    pub(crate) first_exec_done: bool,
    pub(crate) events: Events,
}

fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EPERM)
}

/// The answer for a `nix` call that returns nothing: 0 or its errno.
fn done(r: nix::Result<()>) -> Answer {
    match r {
        Ok(()) => Answer::Value(0),
        Err(e) => Answer::Errno(e as i32),
    }
}

fn cvt(rc: i64) -> Answer {
    if rc < 0 {
        Answer::Errno(crate::sandbox::errno())
    } else {
        Answer::Value(rc)
    }
}

impl Loop<'_> {
    /// Answers notifications until the listener hangs up (every process of
    /// the tree is gone) or `stop` becomes readable.
    pub fn run(&mut self, stop: libc::c_int) {
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: self.listener.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: stop,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: poll on two descriptors we own.
            let rc = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            if rc < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return;
            }
            if fds[0].revents & libc::POLLIN != 0 {
                self.one();
                continue;
            }
            if fds[0].revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
                || fds[1].revents != 0
            {
                return;
            }
        }
    }

    fn one(&mut self) {
        // SAFETY: an all-zero seccomp_notif is what RECV expects.
        let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: RECV fills the struct we own.
        let rc = unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV as _,
                &mut req,
            )
        };
        if rc != 0 {
            return; // ENOENT: the caller died or was interrupted
        }
        self.events.notifications += 1;
        let answer = if i64::from(req.data.nr) == libc::SYS_ioctl {
            match self.pty_peer(&req) {
                Some(answer) => answer,
                None => return, // answered by SECCOMP_IOCTL_NOTIF_ADDFD
            }
        } else {
            self.decide(&req)
        };
        // SAFETY: zeroed response, then filled in.
        let mut resp: libc::seccomp_notif_resp = unsafe { std::mem::zeroed() };
        resp.id = req.id;
        match answer {
            Answer::Value(v) => resp.val = v,
            Answer::Errno(e) => resp.error = -e,
            Answer::Continue => resp.flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
        }
        // SAFETY: SEND reads the response we own; ENOENT (caller gone) is fine.
        unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND as _,
                &resp,
            )
        };
    }

    /// The notification is still pending (the child did not die and its
    /// pid was not reused); checked after reading its memory.
    fn valid(&self, id: u64) -> bool {
        // SAFETY: ID_VALID reads the id we pass.
        unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ID_VALID as _,
                &id,
            ) == 0
        }
    }

    fn decide(&mut self, req: &libc::seccomp_notif) -> Answer {
        let nr = i64::from(req.data.nr);
        let a = req.data.args;
        let pid = req.pid as i32;
        match nr {
            n if n == libc::SYS_execve || n == libc::SYS_execveat => self.exec(req),
            n if n == libc::SYS_connect => self.connect(req),
            n if n == libc::SYS_sendto => self.sendto(req),
            n if n == libc::SYS_sendmsg => self.sendmsg(req, a[0] as i32, a[1], a[2] as i32),
            n if n == libc::SYS_sendmmsg => self.sendmmsg(req),
            n if n == SYS_SETXATTRAT || n == SYS_REMOVEXATTRAT => Answer::Errno(libc::ENOSYS),
            _ => match meta_call(nr, &a) {
                Some(call) => self.metadata(req.id, pid, call),
                None => Answer::Errno(libc::ENOSYS),
            },
        }
    }

    // ---- pty broker -----------------------------------------------------

    /// `ioctl(master, TIOCGPTPEER, flags)`: opens the slave outside the
    /// Landlock domain ([`crate::sandbox::pty::open_peer`], which accepts
    /// only a ptmx master) and installs it in the child with
    /// `SECCOMP_IOCTL_NOTIF_ADDFD` + `SECCOMP_ADDFD_FLAG_SEND`, which also
    /// answers the call with the new descriptor number. `None`: answered.
    fn pty_peer(&mut self, req: &libc::seccomp_notif) -> Option<Answer> {
        let a = req.data.args;
        // The filter compared the low 32 bits only; so does the kernel.
        if a[1] as u32 != crate::sandbox::seccomp::TIOCGPTPEER as u32 {
            return Some(Answer::Continue);
        }
        let pid = req.pid as i32;
        let flags = a[2] as i32;
        let peer = match crate::sandbox::pty::open_peer(pid, a[0] as i32, flags) {
            Ok(fd) => fd,
            Err(e) => return Some(Answer::Errno(errno_of(&e))),
        };
        if !self.valid(req.id) {
            return None;
        }
        let mut addfd = libc::seccomp_notif_addfd {
            id: req.id,
            flags: libc::SECCOMP_ADDFD_FLAG_SEND as u32,
            srcfd: peer.as_raw_fd() as u32,
            newfd: 0,
            newfd_flags: (flags & libc::O_CLOEXEC) as u32,
        };
        // SAFETY: ADDFD reads the struct we own; the kernel duplicates
        // `peer` into the child and, with FLAG_SEND, answers the call.
        let rc = unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ADDFD as _,
                &addfd,
            )
        };
        if rc >= 0 {
            return None;
        }
        let e = crate::sandbox::errno();
        if e != libc::EINVAL {
            // ENOENT: the caller is gone; anything else: refuse the call.
            return Some(Answer::Errno(e));
        }
        // Kernels before 5.14 have no FLAG_SEND: add, then answer with the
        // number the descriptor got.
        addfd.flags = 0;
        // SAFETY: as above, without FLAG_SEND.
        let newfd = unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ADDFD as _,
                &addfd,
            )
        };
        if newfd < 0 {
            return Some(Answer::Errno(crate::sandbox::errno()));
        }
        Some(Answer::Value(i64::from(newfd)))
    }

    // ---- metadata -------------------------------------------------------

    fn metadata(&mut self, id: u64, pid: i32, call: MetaCall) -> Answer {
        match self.metadata_inner(id, pid, &call) {
            Ok(a) => a,
            Err(e) => Answer::Errno(errno_of(&e)),
        }
    }

    fn metadata_inner(&mut self, id: u64, pid: i32, call: &MetaCall) -> io::Result<Answer> {
        // Copy everything the call needs from the child's memory, once.
        let path = match call.path {
            Some(addr) => Some(mem::read_cstr(pid, addr, libc::PATH_MAX as usize)?),
            None => None,
        };
        let op = read_op(pid, &call.op)?;
        if !self.valid(id) {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        let creds = mem::creds_of(pid)?;
        let _as_child = AsChild::enter(creds)?;
        // glibc emulates fchmodat(AT_SYMLINK_NOFOLLOW) as an O_PATH open
        // plus chmod("/proc/self/fd/N"): a magic link the supervisor must
        // not follow in its own /proc/self; it names the child's fd N.
        let (dirfd, path, empty_ok) = match path.as_deref().and_then(|p| own_fd_path(p, pid)) {
            Some(fd) => (fd, Some(Vec::new()), true),
            None => (call.dirfd, path, call.empty_ok),
        };
        let target = resolve(pid, dirfd, path.as_deref(), call.follow, empty_ok)?;
        let real = fd_path(target.as_raw_fd())?;
        if let Err(why) = self.spec.metadata_allowed(&real) {
            self.events
                .deny(format!("{} {}: {why}", call.op.name(), real.display()));
            return Ok(Answer::Errno(libc::EPERM));
        }
        Ok(perform(&target, &op))
    }

    // ---- exec -----------------------------------------------------------

    fn exec(&mut self, req: &libc::seccomp_notif) -> Answer {
        let pid = req.pid as i32;
        if !self.first_exec_done && pid == self.first_pid {
            // The command itself: the full policy already allowed it.
            self.first_exec_done = true;
            return Answer::Continue;
        }
        let Some(rules) = &self.rules else {
            return Answer::Continue;
        };
        let argv_addr = if i64::from(req.data.nr) == libc::SYS_execve {
            req.data.args[1]
        } else {
            req.data.args[2]
        };
        let argv = match read_argv(pid, argv_addr) {
            Ok(v) => v,
            Err(e) => {
                // Unreadable memory (a non-dumpable program): fail closed.
                self.events.deny(format!(
                    "exec inside the command refused: its arguments could not be read ({e})"
                ));
                return Answer::Errno(libc::EACCES);
            }
        };
        if !self.valid(req.id) {
            return Answer::Errno(libc::ESRCH);
        }
        let views = exec_views(&argv, self.spec.home.as_deref());
        let labels = rules.critical(&views);
        if !labels.is_empty() {
            self.events.deny(format!(
                "exec inside the command refused: `{}`: {}",
                views.first().map(String::as_str).unwrap_or(""),
                labels.join("; ")
            ));
            return Answer::Errno(libc::EACCES);
        }
        Answer::Continue
    }

    // ---- network --------------------------------------------------------

    fn socket_of(&self, pid: i32, fd: i32) -> io::Result<Socket> {
        let s = steal_fd(pid, fd)?;
        let domain = sockopt(s.as_raw_fd(), libc::SO_DOMAIN)?;
        let ty = sockopt(s.as_raw_fd(), libc::SO_TYPE)?;
        let proto = sockopt(s.as_raw_fd(), libc::SO_PROTOCOL)?;
        Ok(Socket {
            fd: s,
            domain,
            ty,
            proto,
        })
    }

    fn connect(&mut self, req: &libc::seccomp_notif) -> Answer {
        let pid = req.pid as i32;
        let a = req.data.args;
        let sock = match self.socket_of(pid, a[0] as i32) {
            Ok(s) => s,
            Err(e) => return Answer::Errno(errno_of(&e)),
        };
        if !sock.is_inet() {
            // Not an internet socket: its family cannot change, and Landlock
            // and the main filter govern it. Nothing here depends on memory.
            return Answer::Continue;
        }
        let addr = match read_addr(pid, a[1], a[2]) {
            Ok(v) => v,
            Err(e) => return Answer::Errno(errno_of(&e)),
        };
        if !self.valid(req.id) {
            return Answer::Errno(libc::ESRCH);
        }
        if let Err(why) = loopback_ok(&addr) {
            self.events.deny(format!("connect to {why}"));
            return Answer::Errno(libc::EACCES);
        }
        // SAFETY: connect on our duplicate with the copied address.
        let rc = unsafe {
            libc::connect(
                sock.fd.as_raw_fd(),
                addr.as_ptr().cast(),
                addr.len() as libc::socklen_t,
            )
        };
        cvt(i64::from(rc))
    }

    fn sendto(&mut self, req: &libc::seccomp_notif) -> Answer {
        let pid = req.pid as i32;
        let a = req.data.args;
        let sock = match self.socket_of(pid, a[0] as i32) {
            Ok(s) => s,
            Err(e) => return Answer::Errno(errno_of(&e)),
        };
        if !sock.is_inet() {
            return Answer::Continue;
        }
        let flags = a[3] as i32;
        let r = (|| -> io::Result<Answer> {
            let addr = read_addr(pid, a[4], a[5])?;
            let len = usize::try_from(a[2]).unwrap_or(usize::MAX).min(MAX_SEND);
            let data = mem::read(pid, a[1], len)?;
            if !self.valid(req.id) {
                return Ok(Answer::Errno(libc::ESRCH));
            }
            if let Err(why) = loopback_ok(&addr) {
                self.events.deny(format!("sendto {why}"));
                return Ok(Answer::Errno(libc::EACCES));
            }
            Ok(send_retry(
                &sock,
                |f| {
                    // SAFETY: sendto on our duplicate with copied buffers.
                    unsafe {
                        libc::sendto(
                            sock.fd.as_raw_fd(),
                            data.as_ptr().cast(),
                            data.len(),
                            f,
                            addr.as_ptr().cast(),
                            addr.len() as libc::socklen_t,
                        ) as i64
                    }
                },
                flags,
            ))
        })();
        r.unwrap_or_else(|e| Answer::Errno(errno_of(&e)))
    }

    fn sendmsg(&mut self, req: &libc::seccomp_notif, fd: i32, msg: u64, flags: i32) -> Answer {
        let pid = req.pid as i32;
        let sock = match self.socket_of(pid, fd) {
            Ok(s) => s,
            Err(e) => return Answer::Errno(errno_of(&e)),
        };
        if !sock.is_inet() {
            return Answer::Continue;
        }
        if sock.is_tcp() && flags & libc::MSG_FASTOPEN == 0 {
            // TCP ignores msg_name without MSG_FASTOPEN (a register value
            // the child cannot change): data goes to the connected peer,
            // which connect checked. Nothing depends on memory.
            return Answer::Continue;
        }
        let r = (|| -> io::Result<Answer> {
            let copied = CopiedMsg::read(pid, msg)?;
            if !self.valid(req.id) {
                return Ok(Answer::Errno(libc::ESRCH));
            }
            if let Some(name) = &copied.name
                && let Err(why) = loopback_ok(name)
            {
                self.events.deny(format!("sendmsg {why}"));
                return Ok(Answer::Errno(libc::EACCES));
            }
            Ok(send_retry(
                &sock,
                |f| copied.send(sock.fd.as_raw_fd(), f),
                flags,
            ))
        })();
        r.unwrap_or_else(|e| Answer::Errno(errno_of(&e)))
    }

    fn sendmmsg(&mut self, req: &libc::seccomp_notif) -> Answer {
        let pid = req.pid as i32;
        let a = req.data.args;
        let sock = match self.socket_of(pid, a[0] as i32) {
            Ok(s) => s,
            Err(e) => return Answer::Errno(errno_of(&e)),
        };
        if !sock.is_inet() {
            return Answer::Continue;
        }
        if sock.is_tcp() && (a[3] as i32) & libc::MSG_FASTOPEN == 0 {
            return Answer::Continue;
        }
        // One message at a time (a short count is valid for sendmmsg): the
        // first message, through the same path as sendmsg; its msg_len is
        // written back into the child's array as the kernel would.
        if a[2] == 0 {
            return Answer::Value(0);
        }
        match self.sendmsg(req, a[0] as i32, a[1], a[3] as i32) {
            Answer::Value(n) => {
                let len = (n as u32).to_le_bytes();
                // struct mmsghdr { struct msghdr msg_hdr (56 bytes); unsigned msg_len; }
                match mem::write(pid, a[1] + 56, &len) {
                    Ok(()) => Answer::Value(1),
                    Err(e) => Answer::Errno(errno_of(&e)),
                }
            }
            other => other,
        }
    }
}

/// Largest payload the supervisor copies for one send (a stream socket gets
/// a short write past it, as the kernel may give).
const MAX_SEND: usize = 1 << 20;

struct Socket {
    fd: OwnedFd,
    domain: i32,
    ty: i32,
    proto: i32,
}

impl Socket {
    fn is_inet(&self) -> bool {
        self.domain == libc::AF_INET || self.domain == libc::AF_INET6
    }
    fn is_tcp(&self) -> bool {
        self.ty == libc::SOCK_STREAM && (self.proto == libc::IPPROTO_TCP || self.proto == 0)
    }
}

/// Retries a send on our duplicate without blocking the supervisor for
/// long: non-blocking first, then up to 5 s of waiting for room when the
/// child's socket is blocking.
fn send_retry(sock: &Socket, f: impl Fn(i32) -> i64, flags: i32) -> Answer {
    // F_GETFL on our duplicate (it shares the child's file description).
    let fl = fcntl(&sock.fd, FcntlArg::F_GETFL).unwrap_or(-1);
    let blocking = fl >= 0 && fl & libc::O_NONBLOCK == 0 && flags & libc::MSG_DONTWAIT == 0;
    for _ in 0..50 {
        let rc = f(flags | libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL);
        if rc >= 0 {
            return Answer::Value(rc);
        }
        let e = crate::sandbox::errno();
        if !(blocking && (e == libc::EAGAIN || e == libc::EWOULDBLOCK)) {
            return Answer::Errno(e);
        }
        let _ = poll(
            &mut [PollFd::new(sock.fd.as_fd(), PollFlags::POLLOUT)],
            PollTimeout::from(100u8),
        );
    }
    Answer::Errno(libc::EAGAIN)
}

fn sockopt(fd: i32, opt: i32) -> io::Result<i32> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes an int into `v`.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(v)
}

/// A duplicate of the child's descriptor `fd` (pidfd_getfd).
fn steal_fd(pid: i32, fd: i32) -> io::Result<OwnedFd> {
    let pidfd = crate::sandbox::fds::pidfd_open(pid)?;
    crate::sandbox::fds::pidfd_getfd(&pidfd, fd)
}

fn read_addr(pid: i32, addr: u64, len: u64) -> io::Result<Vec<u8>> {
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if addr == 0 || !(2..=128).contains(&len) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    mem::read(pid, addr, len)
}

/// Whether a copied socket address is loopback; `Err` describes it.
pub fn loopback_ok(addr: &[u8]) -> Result<(), String> {
    if addr.len() < 2 {
        return Err("a malformed address".into());
    }
    let family = i32::from(u16::from_ne_bytes([addr[0], addr[1]]));
    let port_of = |a: &[u8]| u16::from_be_bytes([a[2], a[3]]);
    match family {
        libc::AF_UNSPEC => Ok(()), // disconnect
        libc::AF_INET if addr.len() >= 8 => {
            let ip = std::net::Ipv4Addr::new(addr[4], addr[5], addr[6], addr[7]);
            check_ip(std::net::IpAddr::V4(ip), port_of(addr))
        }
        libc::AF_INET6 if addr.len() >= 24 => {
            let mut o = [0u8; 16];
            o.copy_from_slice(&addr[8..24]);
            let ip = std::net::Ipv6Addr::from(o);
            let ip = match ip.to_ipv4_mapped() {
                Some(v4) => std::net::IpAddr::V4(v4),
                None => std::net::IpAddr::V6(ip),
            };
            check_ip(ip, port_of(addr))
        }
        _ => Err(format!(
            "an address of family {family} (network is loopback-only)"
        )),
    }
}

fn check_ip(ip: std::net::IpAddr, port: u16) -> Result<(), String> {
    if !ip.is_loopback() {
        return Err(format!(
            "{ip} port {port} refused: the network is loopback-only (127.0.0.0/8, ::1)"
        ));
    }
    if port == 53 {
        return Err(format!(
            "{ip} port 53 refused: a local DNS resolver forwards queries outside"
        ));
    }
    Ok(())
}

/// A `struct msghdr` and what it points to, copied once.
struct CopiedMsg {
    name: Option<Vec<u8>>,
    iov: Vec<Vec<u8>>,
    control: Vec<u8>,
}

impl CopiedMsg {
    fn read(pid: i32, addr: u64) -> io::Result<Self> {
        let h = mem::read(pid, addr, 56)?;
        let u = |o: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&h[o..o + 8]);
            u64::from_le_bytes(a)
        };
        let (name_p, name_len) = (u(0), u(8) & 0xffff_ffff);
        let (iov_p, iov_len) = (u(16), u(24));
        let (ctl_p, ctl_len) = (u(32), u(40));
        let name = if name_p != 0 && name_len != 0 {
            Some(read_addr(pid, name_p, name_len)?)
        } else {
            None
        };
        if iov_len > 1024 || ctl_len > 65536 {
            return Err(io::Error::from_raw_os_error(libc::EMSGSIZE));
        }
        let mut iov = Vec::new();
        let mut total = 0usize;
        for i in 0..iov_len {
            let base = mem::read_u64(pid, iov_p + i * 16)?;
            let len = usize::try_from(mem::read_u64(pid, iov_p + i * 16 + 8)?)
                .unwrap_or(usize::MAX)
                .min(MAX_SEND - total);
            iov.push(mem::read(pid, base, len)?);
            total += len;
        }
        let control = if ctl_p != 0 {
            mem::read(pid, ctl_p, ctl_len as usize)?
        } else {
            Vec::new()
        };
        Ok(Self { name, iov, control })
    }

    fn send(&self, fd: i32, flags: i32) -> i64 {
        let mut iov: Vec<libc::iovec> = self
            .iov
            .iter()
            .map(|b| libc::iovec {
                iov_base: b.as_ptr().cast_mut().cast(),
                iov_len: b.len(),
            })
            .collect();
        let mut control = self.control.clone();
        // SAFETY: an all-zero msghdr is valid; the fields are set below.
        let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
        if let Some(n) = &self.name {
            m.msg_name = n.as_ptr().cast_mut().cast();
            m.msg_namelen = n.len() as libc::socklen_t;
        }
        m.msg_iov = iov.as_mut_ptr();
        // (`size_t` in glibc, `int` in musl.)
        m.msg_iovlen = iov.len() as _;
        if !control.is_empty() {
            m.msg_control = control.as_mut_ptr().cast();
            m.msg_controllen = control.len() as _;
        }
        // SAFETY: every pointer in `m` refers to buffers alive for the call.
        unsafe { libc::sendmsg(fd, &m, flags) as i64 }
    }
}

// ---- exec helpers -------------------------------------------------------

fn read_argv(pid: i32, addr: u64) -> io::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut total = 0usize;
    if addr == 0 {
        return Ok(out);
    }
    for i in 0..4096u64 {
        let p = mem::read_u64(pid, addr + i * 8)?;
        if p == 0 {
            return Ok(out);
        }
        let s = mem::read_cstr(pid, p, 256 * 1024)?;
        total += s.len();
        if total > 1024 * 1024 {
            return Err(io::Error::from_raw_os_error(libc::E2BIG));
        }
        out.push(String::from_utf8_lossy(&s).into_owned());
    }
    Err(io::Error::from_raw_os_error(libc::E2BIG))
}

/// What the rules see of an exec: `program arg...` with the program's base
/// name, the same with the home directory written `~`, and the script of a
/// `sh -c SCRIPT`.
pub fn exec_views(argv: &[String], home: Option<&Path>) -> Vec<String> {
    let mut words: Vec<String> = argv.to_vec();
    if let Some(first) = words.first_mut()
        && let Some(base) = Path::new(first.as_str()).file_name()
    {
        *first = base.to_string_lossy().into_owned();
    }
    let quote = |w: &str| {
        if w.is_empty()
            || w.chars()
                .any(|c| c.is_whitespace() || "'\"`;&|<>()\\$".contains(c))
        {
            format!("'{}'", w.replace('\'', "'\\''"))
        } else {
            w.to_string()
        }
    };
    let line = words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
    let mut views = vec![line.clone()];
    if let Some(h) = home.and_then(|h| h.to_str()).filter(|h| h.len() > 1) {
        let tilde: Vec<String> = words
            .iter()
            .map(|w| {
                if w == h {
                    "~".to_string()
                } else if let Some(rest) = w.strip_prefix(&format!("{h}/")) {
                    format!("~/{rest}")
                } else {
                    quote(w)
                }
            })
            .collect();
        let t = tilde.join(" ");
        if t != line {
            views.push(t);
        }
    }
    let shells = ["sh", "bash", "dash", "zsh", "ksh", "ash"];
    let script = words
        .iter()
        .position(|w| w.starts_with('-') && w.contains('c') && !w.starts_with("--"))
        .and_then(|i| words.get(i + 1));
    if words.first().is_some_and(|p| shells.contains(&p.as_str()))
        && let Some(script) = script
    {
        views.push(script.trim().to_string());
        for part in script.split(['\n', ';', '&', '|']) {
            let part = part.trim();
            if !part.is_empty() {
                views.push(part.to_string());
            }
        }
    }
    views
}

// ---- metadata helpers ---------------------------------------------------

/// A decoded metadata syscall.
#[derive(Debug)]
struct MetaCall {
    dirfd: i32,
    path: Option<u64>,
    follow: bool,
    empty_ok: bool,
    op: OpArgs,
}

#[derive(Debug)]
enum OpArgs {
    Chmod(u32),
    Chown(u32, u32),
    /// Pointer to times and their layout.
    Times(u64, TimesLayout),
    SetXattr {
        name: u64,
        value: u64,
        size: u64,
        flags: i32,
    },
    RemoveXattr {
        name: u64,
    },
}

#[derive(Debug, Clone, Copy)]
enum TimesLayout {
    Utimbuf,
    Timeval2,
    Timespec2,
}

impl OpArgs {
    fn name(&self) -> &'static str {
        match self {
            OpArgs::Chmod(_) => "chmod",
            OpArgs::Chown(..) => "chown",
            OpArgs::Times(..) => "utime",
            OpArgs::SetXattr { .. } => "setxattr",
            OpArgs::RemoveXattr { .. } => "removexattr",
        }
    }
}

enum Op {
    Chmod(u32),
    Chown(u32, u32),
    Times(Option<[libc::timespec; 2]>),
    SetXattr(CString, Vec<u8>, i32),
    RemoveXattr(CString),
}

fn meta_call(nr: i64, a: &[u64; 6]) -> Option<MetaCall> {
    let at = libc::AT_FDCWD;
    let mk = |dirfd: i32, path: Option<u64>, follow: bool, empty_ok: bool, op: OpArgs| {
        Some(MetaCall {
            dirfd,
            path,
            follow,
            empty_ok,
            op,
        })
    };
    let nofollow = |f: u64| (f as i32) & libc::AT_SYMLINK_NOFOLLOW == 0;
    let empty = |f: u64| (f as i32) & libc::AT_EMPTY_PATH != 0;
    #[cfg(target_arch = "x86_64")]
    {
        match nr {
            libc::SYS_chmod => return mk(at, Some(a[0]), true, false, OpArgs::Chmod(a[1] as u32)),
            libc::SYS_chown => {
                return mk(
                    at,
                    Some(a[0]),
                    true,
                    false,
                    OpArgs::Chown(a[1] as u32, a[2] as u32),
                );
            }
            libc::SYS_lchown => {
                return mk(
                    at,
                    Some(a[0]),
                    false,
                    false,
                    OpArgs::Chown(a[1] as u32, a[2] as u32),
                );
            }
            libc::SYS_utime => {
                return mk(
                    at,
                    Some(a[0]),
                    true,
                    false,
                    OpArgs::Times(a[1], TimesLayout::Utimbuf),
                );
            }
            libc::SYS_utimes => {
                return mk(
                    at,
                    Some(a[0]),
                    true,
                    false,
                    OpArgs::Times(a[1], TimesLayout::Timeval2),
                );
            }
            libc::SYS_futimesat => {
                return mk(
                    a[0] as i32,
                    Some(a[1]),
                    true,
                    false,
                    OpArgs::Times(a[2], TimesLayout::Timeval2),
                );
            }
            _ => {}
        }
    }
    match nr {
        libc::SYS_fchmodat => mk(
            a[0] as i32,
            Some(a[1]),
            true,
            false,
            OpArgs::Chmod(a[2] as u32),
        ),
        SYS_FCHMODAT2 => mk(
            a[0] as i32,
            Some(a[1]),
            nofollow(a[3]),
            empty(a[3]),
            OpArgs::Chmod(a[2] as u32),
        ),
        libc::SYS_fchmod => mk(a[0] as i32, None, true, true, OpArgs::Chmod(a[1] as u32)),
        libc::SYS_fchownat => mk(
            a[0] as i32,
            Some(a[1]),
            nofollow(a[4]),
            empty(a[4]),
            OpArgs::Chown(a[2] as u32, a[3] as u32),
        ),
        libc::SYS_fchown => mk(
            a[0] as i32,
            None,
            true,
            true,
            OpArgs::Chown(a[1] as u32, a[2] as u32),
        ),
        libc::SYS_utimensat => {
            // A NULL path means the descriptor itself.
            let path = if a[1] == 0 { None } else { Some(a[1]) };
            mk(
                a[0] as i32,
                path,
                nofollow(a[3]),
                empty(a[3]),
                OpArgs::Times(a[2], TimesLayout::Timespec2),
            )
        }
        libc::SYS_setxattr | libc::SYS_lsetxattr => mk(
            at,
            Some(a[0]),
            nr == libc::SYS_setxattr,
            false,
            OpArgs::SetXattr {
                name: a[1],
                value: a[2],
                size: a[3],
                flags: a[4] as i32,
            },
        ),
        libc::SYS_fsetxattr => mk(
            a[0] as i32,
            None,
            true,
            true,
            OpArgs::SetXattr {
                name: a[1],
                value: a[2],
                size: a[3],
                flags: a[4] as i32,
            },
        ),
        libc::SYS_removexattr | libc::SYS_lremovexattr => mk(
            at,
            Some(a[0]),
            nr == libc::SYS_removexattr,
            false,
            OpArgs::RemoveXattr { name: a[1] },
        ),
        libc::SYS_fremovexattr => mk(
            a[0] as i32,
            None,
            true,
            true,
            OpArgs::RemoveXattr { name: a[1] },
        ),
        _ => None,
    }
}

fn read_op(pid: i32, op: &OpArgs) -> io::Result<Op> {
    let i64_at = |b: &[u8], o: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[o..o + 8]);
        i64::from_le_bytes(a)
    };
    Ok(match op {
        OpArgs::Chmod(m) => Op::Chmod(*m),
        OpArgs::Chown(u, g) => Op::Chown(*u, *g),
        OpArgs::Times(0, _) => Op::Times(None),
        OpArgs::Times(p, layout) => {
            let ts = |sec: i64, nsec: i64| libc::timespec {
                tv_sec: sec,
                tv_nsec: nsec,
            };
            Op::Times(Some(match layout {
                TimesLayout::Utimbuf => {
                    let b = mem::read(pid, *p, 16)?;
                    [ts(i64_at(&b, 0), 0), ts(i64_at(&b, 8), 0)]
                }
                TimesLayout::Timeval2 => {
                    let b = mem::read(pid, *p, 32)?;
                    [
                        ts(i64_at(&b, 0), i64_at(&b, 8).saturating_mul(1000)),
                        ts(i64_at(&b, 16), i64_at(&b, 24).saturating_mul(1000)),
                    ]
                }
                TimesLayout::Timespec2 => {
                    let b = mem::read(pid, *p, 32)?;
                    [
                        ts(i64_at(&b, 0), i64_at(&b, 8)),
                        ts(i64_at(&b, 16), i64_at(&b, 24)),
                    ]
                }
            }))
        }
        OpArgs::SetXattr {
            name,
            value,
            size,
            flags,
        } => {
            let n = mem::read_cstr(pid, *name, 255)?;
            let size = usize::try_from(*size).unwrap_or(usize::MAX);
            if size > 65536 {
                return Err(io::Error::from_raw_os_error(libc::E2BIG));
            }
            let v = mem::read(pid, *value, size)?;
            let n = CString::new(n).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
            Op::SetXattr(n, v, *flags)
        }
        OpArgs::RemoveXattr { name } => {
            let n = mem::read_cstr(pid, *name, 255)?;
            let n = CString::new(n).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
            Op::RemoveXattr(n)
        }
    })
}

fn open_path(p: &[u8], flags: OFlag) -> io::Result<OwnedFd> {
    // A path with a NUL inside is EINVAL (NixPath).
    Ok(open(p, flags | OFlag::O_CLOEXEC, Mode::empty())?)
}

/// Opens what the child named, as an `O_PATH` descriptor: the base is `/`
/// for an absolute path, the child's cwd or its descriptor otherwise (read
/// through `/proc/<pid>/`); the rest is resolved by `openat2` without magic
/// links (no `/proc/self/fd/N` tricks through the supervisor's own table).
fn resolve(
    pid: i32,
    dirfd: i32,
    path: Option<&[u8]>,
    follow: bool,
    empty_ok: bool,
) -> io::Result<OwnedFd> {
    let base = match path {
        Some(p) if p.first() == Some(&b'/') => open_path(b"/", OFlag::O_PATH | OFlag::O_DIRECTORY)?,
        _ if dirfd == libc::AT_FDCWD => {
            open_path(format!("/proc/{pid}/cwd").as_bytes(), OFlag::O_PATH)?
        }
        _ if dirfd < 0 => return Err(io::Error::from_raw_os_error(libc::EBADF)),
        _ => open_path(format!("/proc/{pid}/fd/{dirfd}").as_bytes(), OFlag::O_PATH)?,
    };
    let p = match path {
        None => return Ok(base),
        Some([]) => {
            if empty_ok {
                return Ok(base);
            }
            return Err(io::Error::from_raw_os_error(libc::ENOENT));
        }
        Some(p) => p,
    };
    let nofollow = if follow {
        OFlag::empty()
    } else {
        OFlag::O_NOFOLLOW
    };
    let how = OpenHow::new()
        .flags(OFlag::O_PATH | OFlag::O_CLOEXEC | nofollow)
        .resolve(ResolveFlag::RESOLVE_NO_MAGICLINKS);
    // A path with a NUL inside is EINVAL (NixPath), as before.
    Ok(openat2(&base, p, how)?)
}

/// `N` when `p` is `/proc/self/fd/N`, `/proc/thread-self/fd/N`,
/// `/dev/fd/N` or `/proc/<pid>/fd/N` for the calling task.
pub fn own_fd_path(p: &[u8], pid: i32) -> Option<i32> {
    let s = std::str::from_utf8(p).ok()?;
    let own = format!("/proc/{pid}/fd/");
    let rest = [
        "/proc/self/fd/",
        "/proc/thread-self/fd/",
        "/dev/fd/",
        own.as_str(),
    ]
    .iter()
    .find_map(|pre| s.strip_prefix(pre))?;
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok()
}

/// The path the kernel reports for our descriptor.
fn fd_path(fd: i32) -> io::Result<PathBuf> {
    let p = std::fs::read_link(format!("/proc/self/fd/{fd}"))?;
    if p.as_os_str().as_bytes().ends_with(b" (deleted)") || !p.is_absolute() {
        // Deleted files and anonymous objects have no place in a root.
        return Err(io::Error::from_raw_os_error(libc::EPERM));
    }
    Ok(p)
}

fn is_symlink(fd: &OwnedFd) -> bool {
    fstat(fd).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK)
}

/// Performs `op` on the object behind the `O_PATH` descriptor `fd`.
fn perform(target: &OwnedFd, op: &Op) -> Answer {
    let fd = target.as_raw_fd();
    let proc_path = match CString::new(format!("/proc/self/fd/{fd}")) {
        Ok(p) => p,
        Err(_) => return Answer::Errno(libc::EINVAL),
    };
    let empty = c"";
    match op {
        Op::Chmod(mode) => {
            if is_symlink(target) {
                return Answer::Errno(libc::EOPNOTSUPP);
            }
            // SAFETY: fchmodat2 on our descriptor with an empty path.
            let rc = unsafe {
                libc::syscall(
                    SYS_FCHMODAT2,
                    fd,
                    empty.as_ptr(),
                    *mode,
                    libc::AT_EMPTY_PATH,
                )
            };
            if rc == 0 {
                return Answer::Value(0);
            }
            let e = crate::sandbox::errno();
            if e != libc::ENOSYS && e != libc::EINVAL {
                return Answer::Errno(e);
            }
            // Kernels before 6.6: the magic link names the same inode.
            done(fchmodat(
                AT_FDCWD,
                proc_path.as_c_str(),
                Mode::from_bits_retain(*mode),
                FchmodatFlags::FollowSymlink,
            ))
        }
        // (uid_t)-1 / (gid_t)-1 mean "leave it", passed through unchanged.
        Op::Chown(u, g) => done(fchownat(
            target,
            empty,
            Some(Uid::from_raw(*u)),
            Some(Gid::from_raw(*g)),
            AtFlags::AT_EMPTY_PATH,
        )),
        Op::Times(t) => {
            let ptr = t.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
            // SAFETY: utimensat on our descriptor with AT_EMPTY_PATH and a
            // constant empty path; `ptr` is NULL or two timespecs we own.
            // (`nix::sys::stat::utimensat` cannot pass AT_EMPTY_PATH.)
            cvt(i64::from(unsafe {
                libc::utimensat(fd, empty.as_ptr(), ptr, libc::AT_EMPTY_PATH)
            }))
        }
        Op::SetXattr(name, value, flags) => {
            if is_symlink(target) {
                return Answer::Errno(libc::EPERM);
            }
            // SAFETY: setxattr through the magic link of our descriptor.
            cvt(i64::from(unsafe {
                libc::setxattr(
                    proc_path.as_ptr(),
                    name.as_ptr(),
                    value.as_ptr().cast(),
                    value.len(),
                    *flags,
                )
            }))
        }
        Op::RemoveXattr(name) => {
            if is_symlink(target) {
                return Answer::Errno(libc::EPERM);
            }
            // SAFETY: removexattr through the magic link of our descriptor.
            cvt(i64::from(unsafe {
                libc::removexattr(proc_path.as_ptr(), name.as_ptr())
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(a: [u8; 4], port: u16) -> Vec<u8> {
        let mut v = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        v.extend(port.to_be_bytes());
        v.extend(a);
        v.extend([0u8; 8]);
        v
    }

    fn v6(a: std::net::Ipv6Addr, port: u16) -> Vec<u8> {
        let mut v = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
        v.extend(port.to_be_bytes());
        v.extend([0u8; 4]);
        v.extend(a.octets());
        v.extend([0u8; 4]);
        v
    }

    #[test]
    fn loopback_addresses() {
        assert!(loopback_ok(&v4([127, 0, 0, 1], 8000)).is_ok());
        assert!(loopback_ok(&v4([127, 9, 8, 7], 1)).is_ok());
        assert!(loopback_ok(&v4([10, 0, 0, 1], 80)).is_err());
        assert!(loopback_ok(&v4([0, 0, 0, 0], 80)).is_err());
        assert!(loopback_ok(&v4([127, 0, 0, 53], 53)).is_err());
        assert!(loopback_ok(&v6(std::net::Ipv6Addr::LOCALHOST, 80)).is_ok());
        let mapped = std::net::Ipv4Addr::new(127, 0, 0, 1).to_ipv6_mapped();
        assert!(loopback_ok(&v6(mapped, 80)).is_ok());
        let ext = std::net::Ipv4Addr::new(1, 1, 1, 1).to_ipv6_mapped();
        assert!(loopback_ok(&v6(ext, 80)).is_err());
        assert!(loopback_ok(&v6("2001:db8::1".parse().expect("ip"), 80)).is_err());
        assert!(loopback_ok(&v4([127, 0, 0, 1], 80)[..4]).is_err());
    }

    #[test]
    fn own_fd_paths() {
        assert_eq!(own_fd_path(b"/proc/self/fd/3", 7), Some(3));
        assert_eq!(own_fd_path(b"/proc/7/fd/12", 7), Some(12));
        assert_eq!(own_fd_path(b"/dev/fd/0", 7), Some(0));
        assert_eq!(own_fd_path(b"/proc/8/fd/3", 7), None);
        assert_eq!(own_fd_path(b"/proc/self/fd/3/x", 7), None);
        assert_eq!(own_fd_path(b"/proc/self/fd/", 7), None);
    }

    #[test]
    fn exec_views_name_the_program_and_home() {
        let v = exec_views(
            &["/bin/rm".into(), "-rf".into(), "/home/u".into()],
            Some(Path::new("/home/u")),
        );
        assert_eq!(v[0], "rm -rf /home/u");
        assert_eq!(v[1], "rm -rf ~");
        let v = exec_views(
            &["/bin/sh".into(), "-c".into(), "echo hi; rm -rf /".into()],
            None,
        );
        assert!(v.iter().any(|s| s == "rm -rf /"));
    }
}
