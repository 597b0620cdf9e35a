//! Reading the child's memory and credentials, and acting with them.

use std::io;

/// Reads exactly `len` bytes at `addr` in `pid`'s memory.
pub fn read(pid: i32, addr: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    if len == 0 {
        return Ok(buf);
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: the local iovec points into `buf`, which has `len` bytes.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n as usize != len {
        return Err(io::Error::from_raw_os_error(libc::EFAULT));
    }
    Ok(buf)
}

/// Writes `data` at `addr` in `pid`'s memory.
pub fn write(pid: i32, addr: u64, data: &[u8]) -> io::Result<()> {
    let local = libc::iovec {
        iov_base: data.as_ptr().cast_mut().cast(),
        iov_len: data.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: data.len(),
    };
    // SAFETY: the kernel only reads the local buffer.
    let n = unsafe { libc::process_vm_writev(pid, &local, 1, &remote, 1, 0) };
    if n < 0 || n as usize != data.len() {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads a NUL-terminated string of at most `max` bytes (ENAMETOOLONG past
/// it), page by page so an unmapped page after the string is not an error.
pub fn read_cstr(pid: i32, addr: u64, max: usize) -> io::Result<Vec<u8>> {
    if addr == 0 {
        return Err(io::Error::from_raw_os_error(libc::EFAULT));
    }
    let mut out = Vec::new();
    let mut at = addr;
    loop {
        let page_left = 4096 - (at % 4096) as usize;
        let chunk = read(pid, at, page_left)?;
        if let Some(i) = chunk.iter().position(|b| *b == 0) {
            out.extend_from_slice(&chunk[..i]);
            return Ok(out);
        }
        out.extend_from_slice(&chunk);
        if out.len() > max {
            return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
        }
        at += page_left as u64;
    }
}

/// Reads a little-endian u64 at `addr`.
pub fn read_u64(pid: i32, addr: u64) -> io::Result<u64> {
    let b = read(pid, addr, 8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(&b);
    Ok(u64::from_le_bytes(a))
}

/// The child's filesystem credentials and effective capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Creds {
    /// Filesystem uid.
    pub fsuid: u32,
    /// Filesystem gid.
    pub fsgid: u32,
    /// Effective capability set (bits).
    pub cap_eff: u64,
}

/// Reads `pid`'s credentials from `/proc/<pid>/status`.
pub fn creds_of(pid: i32) -> io::Result<Creds> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let field = |name: &str, idx: usize| -> Option<&str> {
        s.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().nth(idx))
    };
    let bad = || io::Error::from_raw_os_error(libc::EINVAL);
    Ok(Creds {
        fsuid: field("Uid:", 3)
            .and_then(|v| v.parse().ok())
            .ok_or_else(bad)?,
        fsgid: field("Gid:", 3)
            .and_then(|v| v.parse().ok())
            .ok_or_else(bad)?,
        cap_eff: field("CapEff:", 0)
            .and_then(|v| u64::from_str_radix(v, 16).ok())
            .ok_or_else(bad)?,
    })
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const CAP_V3: u32 = 0x2008_0522;

fn capget() -> io::Result<[CapData; 2]> {
    let mut h = CapHeader {
        version: CAP_V3,
        pid: 0,
    };
    let mut d = [CapData::default(); 2];
    // SAFETY: capget writes two CapData records for version 3.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut h, d.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(d)
}

fn capset(d: &[CapData; 2]) -> io::Result<()> {
    let mut h = CapHeader {
        version: CAP_V3,
        pid: 0,
    };
    // SAFETY: capset reads the header and two records; the raw syscall
    // changes only the calling thread's capabilities.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &mut h, d.as_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn setfsuid(id: u32) -> u32 {
    // SAFETY: raw setfsuid changes only the calling thread; returns the old id.
    unsafe { libc::syscall(libc::SYS_setfsuid, id) as u32 }
}

fn setfsgid(id: u32) -> u32 {
    // SAFETY: raw setfsgid changes only the calling thread; returns the old id.
    unsafe { libc::syscall(libc::SYS_setfsgid, id) as u32 }
}

/// The supervisor thread acting with the child's filesystem identity and no
/// capability the child lacks, so that a call the supervisor performs for
/// the child is never more privileged than the child (root safe-exec, child
/// without capabilities). Restored on drop. Per-thread: raw syscalls.
pub struct AsChild {
    old_fsuid: u32,
    old_fsgid: u32,
    old_caps: Option<[CapData; 2]>,
}

impl AsChild {
    /// Switches the calling thread to `c`.
    pub fn enter(c: Creds) -> io::Result<Self> {
        let caps = capget()?;
        let mine = u64::from(caps[0].effective) | (u64::from(caps[1].effective) << 32);
        let old_caps = if mine & !c.cap_eff != 0 {
            let mut n = caps;
            let keep = mine & c.cap_eff;
            n[0].effective = keep as u32;
            n[1].effective = (keep >> 32) as u32;
            capset(&n)?;
            Some(caps)
        } else {
            None
        };
        let old_fsgid = setfsgid(c.fsgid);
        let old_fsuid = setfsuid(c.fsuid);
        Ok(Self {
            old_fsuid,
            old_fsgid,
            old_caps,
        })
    }
}

impl Drop for AsChild {
    fn drop(&mut self) {
        setfsuid(self.old_fsuid);
        setfsgid(self.old_fsgid);
        if let Some(c) = &self.old_caps {
            let _ = capset(c);
        }
    }
}
