//! Reading the child's memory and credentials, and acting with them.

use crate::sandbox::caps::{CapData, capget, capset};
use nix::sys::uio::{RemoteIoVec, process_vm_readv, process_vm_writev};
use nix::unistd::{Gid, Pid, Uid};
use std::io::{self, IoSlice, IoSliceMut};

/// Reads exactly `len` bytes at `addr` in `pid`'s memory.
pub fn read(pid: i32, addr: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    if len == 0 {
        return Ok(buf);
    }
    let remote = [RemoteIoVec {
        base: addr as usize,
        len,
    }];
    let n = process_vm_readv(
        Pid::from_raw(pid),
        &mut [IoSliceMut::new(&mut buf)],
        &remote,
    )?;
    if n != len {
        return Err(io::Error::from_raw_os_error(libc::EFAULT));
    }
    Ok(buf)
}

/// Writes `data` at `addr` in `pid`'s memory.
pub fn write(pid: i32, addr: u64, data: &[u8]) -> io::Result<()> {
    let remote = [RemoteIoVec {
        base: addr as usize,
        len: data.len(),
    }];
    let n = process_vm_writev(Pid::from_raw(pid), &[IoSlice::new(data)], &remote)?;
    if n != data.len() {
        return Err(io::Error::from_raw_os_error(libc::EFAULT));
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

fn setfsuid(id: u32) -> u32 {
    nix::unistd::setfsuid(Uid::from_raw(id)).as_raw()
}

fn setfsgid(id: u32) -> u32 {
    nix::unistd::setfsgid(Gid::from_raw(id)).as_raw()
}

/// The supervisor thread acting with the child's filesystem identity and no
/// capability the child lacks, so that a call the supervisor performs for
/// the child is never more privileged than the child (root safe-exec, child
/// without capabilities). Restored on drop. Per-thread: `capset`,
/// `setfsuid` and `setfsgid` change only the calling thread (the C library
/// does not broadcast them to other threads as it does `setuid`).
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
