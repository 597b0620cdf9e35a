//! Capabilities: a command started by root (or by a process holding
//! capabilities) gets none unless the profile lists them
//! (`[sandbox] capabilities = ["CAP_NET_BIND_SERVICE"]`).
//!
//! Between fork and exec the child sets `SECBIT_NOROOT` (locked, so uid 0
//! gains nothing from executing a program), drops every capability not kept
//! from the bounding set, sets the effective, permitted and inheritable sets
//! to the kept ones and makes the ambient set exactly the kept ones (so they
//! survive `execve` under `SECBIT_NOROOT` and `no_new_privs`). Without
//! capabilities, root is an ordinary user with uid 0: file permissions
//! (owner checks) still apply, but it cannot read other users' 0600 files,
//! `ptrace` or read `/proc/<pid>/environ` of processes outside the sandbox
//! (`CAP_SYS_PTRACE`), steal terminals (`CAP_SYS_ADMIN`), set the clock, load
//! modules, bind low ports or use raw sockets.
//!
//! An unprivileged caller holds no capabilities; then nothing is done (its
//! bounding set cannot be changed without `CAP_SETPCAP`, and `no_new_privs`
//! already keeps file capabilities and setuid bits from adding any).

use super::{SandboxError, SandboxSpec};
use nix::unistd::{geteuid, getuid};

/// Capability names, indexed by number (capabilities(7), Linux 6.x).
pub const NAMES: &[&str] = &[
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",
    "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",
    "CAP_SYS_ADMIN",
    "CAP_SYS_BOOT",
    "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_SYS_TTY_CONFIG",
    "CAP_MKNOD",
    "CAP_LEASE",
    "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL",
    "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN",
    "CAP_SYSLOG",
    "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",
    "CAP_AUDIT_READ",
    "CAP_PERFMON",
    "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
];

/// `_LINUX_CAPABILITY_VERSION_3`.
const CAP_V3: u32 = 0x2008_0522;
/// `SECBIT_NOROOT | SECBIT_NOROOT_LOCKED`.
const SECBITS_NOROOT_LOCKED: libc::c_ulong = 0x3;

/// Number of a capability given as `CAP_NET_RAW`, `cap_net_raw` or `net_raw`.
pub fn number(name: &str) -> Option<u32> {
    let upper = name.trim().to_ascii_uppercase();
    let full = if upper.starts_with("CAP_") {
        upper
    } else {
        format!("CAP_{upper}")
    };
    NAMES
        .iter()
        .position(|n| *n == full)
        .and_then(|i| u32::try_from(i).ok())
}

/// Whether the spec keeps capability `name`.
pub fn keeps(spec: &SandboxSpec, name: &str) -> bool {
    let Some(n) = number(name) else { return false };
    spec.capabilities.iter().any(|c| number(c) == Some(n))
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct` (version 3 uses two: bits 0-31, 32-63).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CapData {
    pub(crate) effective: u32,
    pub(crate) permitted: u32,
    pub(crate) inheritable: u32,
}

/// The five sets of the calling thread (bounding and ambient as masks).
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct CapSets {
    /// Effective set.
    pub effective: u64,
    /// Permitted set.
    pub permitted: u64,
    /// Inheritable set.
    pub inheritable: u64,
    /// Bounding set.
    pub bounding: u64,
    /// Ambient set.
    pub ambient: u64,
}

/// The calling thread's capability sets (one `capget`; `nix` has no
/// wrapper). Per-thread.
pub(crate) fn capget() -> std::io::Result<[CapData; 2]> {
    let mut header = CapHeader {
        version: CAP_V3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: capget reads the header and writes two CapData into our array.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut header as *mut CapHeader,
            data.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(data)
}

/// Sets the calling thread's capability sets (one `capset`; `nix` has no
/// wrapper). Per-thread; no allocation (runs between fork and exec).
pub(crate) fn capset(data: &[CapData; 2]) -> std::io::Result<()> {
    let mut header = CapHeader {
        version: CAP_V3,
        pid: 0,
    };
    // SAFETY: capset reads the header and the two CapData we own; it changes
    // only the calling thread's capabilities.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            data.as_ptr(),
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `prctl` with integer arguments only (the capability options, which `nix`
/// does not wrap). Returns the raw result; errno is left set on -1.
fn prctl(option: libc::c_int, arg2: libc::c_ulong, arg3: libc::c_ulong) -> libc::c_int {
    // SAFETY: every option this module passes (PR_CAPBSET_READ/DROP,
    // PR_CAP_AMBIENT, PR_SET_SECUREBITS) takes integers, never pointers, so
    // the call touches no memory of ours. Async-signal-safe (used between
    // fork and exec).
    unsafe { libc::prctl(option, arg2, arg3, 0 as libc::c_ulong, 0 as libc::c_ulong) }
}

/// Permitted and inheritable sets of the calling thread (one `capget`).
fn held() -> (u64, u64) {
    let Ok(data) = capget() else {
        // Unknown: assume something is held, so the drop is attempted.
        return (u64::MAX, 0);
    };
    let join = |lo: u32, hi: u32| u64::from(lo) | (u64::from(hi) << 32);
    (
        join(data[0].permitted, data[1].permitted),
        join(data[0].inheritable, data[1].inheritable),
    )
}

/// Reads the calling thread's capability sets.
pub fn current() -> CapSets {
    let join = |lo: u32, hi: u32| u64::from(lo) | (u64::from(hi) << 32);
    let mut sets = CapSets::default();
    if let Ok(data) = capget() {
        sets.effective = join(data[0].effective, data[1].effective);
        sets.permitted = join(data[0].permitted, data[1].permitted);
        sets.inheritable = join(data[0].inheritable, data[1].inheritable);
    }
    for cap in 0..=last_cap() {
        let c = libc::c_ulong::from(cap);
        if prctl(libc::PR_CAPBSET_READ, c, 0) == 1 {
            sets.bounding |= 1 << cap;
        }
        if prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_IS_SET as libc::c_ulong,
            c,
        ) == 1
        {
            sets.ambient |= 1 << cap;
        }
    }
    sets
}

/// Names of the capabilities in `mask`.
pub fn names(mask: u64) -> Vec<String> {
    (0..64u32)
        .filter(|c| mask & (1 << c) != 0)
        .map(|c| {
            NAMES
                .get(c as usize)
                .map(|s| (*s).to_string())
                .unwrap_or_else(|| format!("cap_{c}"))
        })
        .collect()
}

/// Highest capability number the kernel knows.
pub fn last_cap() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .filter(|n: &u32| *n < 64)
        .unwrap_or(40)
}

/// A prepared capability drop (computed in the parent).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CapDrop {
    /// Whether there is anything to drop (root, or capabilities held).
    act: bool,
    /// Whether the caller is (e)uid 0: then `SECBIT_NOROOT` is set too.
    root: bool,
    keep: u64,
    last: u32,
    /// The bounding set when the capabilities are prepared (`CapBnd` of
    /// `/proc/self/status`); all ones when it could not be read. The
    /// bounding set never grows, so the child needs to drop only what is
    /// in it (a container's root holds 14 of 41, a host's root all).
    bounding: u64,
}

/// The calling thread's bounding set from `/proc/self/status` (`CapBnd:`).
fn bounding_set() -> Option<u64> {
    use std::io::Read;
    // One read into room for the whole file (~1.4 KiB): `read_to_string`
    // would start from the size `statx` reports for a proc file (0) and
    // read 32, 32, 64... bytes, eight reads.
    let mut status = String::with_capacity(4096);
    std::fs::File::open("/proc/self/status")
        .ok()?
        .read_to_string(&mut status)
        .ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapBnd:"))?;
    u64::from_str_radix(hex.trim(), 16).ok()
}

/// The calling thread's bounding set and the kernel's last capability,
/// asked with `PR_CAPBSET_READ` (which fails with `EINVAL` past the last
/// one): ~42 calls of a few hundred nanoseconds, where `/proc/self/status`
/// makes the kernel format the whole status file (memory counters under
/// the mmap lock, signal masks...) and `cap_last_cap` is another file.
/// `None` when the first read fails (no such prctl).
fn bounding_and_last() -> Option<(u64, u32)> {
    let mut set = 0u64;
    for cap in 0u32..64 {
        match prctl(libc::PR_CAPBSET_READ, libc::c_ulong::from(cap), 0) {
            1 => set |= 1 << cap,
            0 => {}
            _ if cap > 0 && super::errno() == libc::EINVAL => return Some((set, cap - 1)),
            _ => return None,
        }
    }
    Some((set, 63))
}

impl CapDrop {
    /// Parses the kept names; unknown names are an error.
    pub(crate) fn prepare(kept: &[String]) -> Result<Self, SandboxError> {
        let mut keep = 0u64;
        for name in kept {
            let n = number(name).ok_or_else(|| SandboxError::UnknownCapability(name.clone()))?;
            keep |= 1 << n;
        }
        // One capget: the ambient set is always a subset of permitted and
        // inheritable, so these two say whether anything is held.
        let (permitted, inheritable) = held();
        let root = getuid().is_root() || geteuid().is_root();
        let act = root || permitted != 0 || inheritable != 0;
        let (bounding, last) = match act.then(bounding_and_last) {
            None => (0, 0),
            Some(Some(known)) => known,
            Some(None) => (bounding_set().unwrap_or(u64::MAX), last_cap()),
        };
        Ok(Self {
            act,
            root,
            keep,
            last,
            bounding,
        })
    }

    /// Applies the drop to the calling thread. Runs between fork and exec:
    /// syscalls only. Returns the errno of the first failing step.
    pub(crate) fn apply(&self) -> Result<(), i32> {
        if !self.act {
            return Ok(());
        }
        if self.root && prctl(libc::PR_SET_SECUREBITS, SECBITS_NOROOT_LOCKED, 0) != 0 {
            return Err(super::errno());
        }
        for cap in 0..=self.last {
            if self.keep & (1 << cap) != 0 || self.bounding & (1 << cap) == 0 {
                continue;
            }
            let cap = libc::c_ulong::from(cap);
            // DROP first: with CAP_SETPCAP (root) it succeeds whether or not
            // the capability is in the bounding set, so one prctl per
            // capability instead of READ + DROP. Only when it fails is the
            // set read, and a failure counts only for a capability that is
            // there (as before: an absent one needs no drop).
            if prctl(libc::PR_CAPBSET_DROP, cap, 0) != 0 {
                let e = super::errno();
                if prctl(libc::PR_CAPBSET_READ, cap, 0) == 1 {
                    return Err(e);
                }
            }
        }
        if prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
        ) != 0
        {
            return Err(super::errno());
        }
        let lo = (self.keep & 0xffff_ffff) as u32;
        let hi = (self.keep >> 32) as u32;
        let data = [
            CapData {
                effective: lo,
                permitted: lo,
                inheritable: lo,
            },
            CapData {
                effective: hi,
                permitted: hi,
                inheritable: hi,
            },
        ];
        capset(&data).map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))?;
        for cap in 0..=self.last {
            if self.keep & (1 << cap) == 0 {
                continue;
            }
            if prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_RAISE as libc::c_ulong,
                libc::c_ulong::from(cap),
            ) != 0
            {
                return Err(super::errno());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounding_set_by_prctl_is_the_one_proc_shows() {
        let (set, last) = bounding_and_last().expect("PR_CAPBSET_READ");
        assert_eq!(last, last_cap());
        assert_eq!(Some(set), bounding_set());
        // And after a drop in a thread of its own (the set is per thread).
        std::thread::spawn(|| {
            let before = bounding_and_last().expect("read").0;
            if before & (1 << 27) != 0 {
                // CAP_MKNOD: dropping it needs CAP_SETPCAP (root here).
                let dropped = prctl(libc::PR_CAPBSET_DROP, 27, 0) == 0;
                let after = bounding_and_last().expect("read").0;
                // This thread's own status (`/proc/self` is the main
                // thread's).
                let status = std::fs::read_to_string("/proc/thread-self/status").expect("status");
                let hex = status
                    .lines()
                    .find_map(|l| l.strip_prefix("CapBnd:"))
                    .expect("CapBnd");
                assert_eq!(Some(after), u64::from_str_radix(hex.trim(), 16).ok());
                assert_eq!(after != before, dropped);
                assert_eq!(after & (1 << 27) == 0, dropped);
            }
        })
        .join()
        .expect("thread");
    }

    #[test]
    fn names_parse_in_every_spelling() {
        assert_eq!(number("CAP_NET_BIND_SERVICE"), Some(10));
        assert_eq!(number("cap_net_bind_service"), Some(10));
        assert_eq!(number("net_bind_service"), Some(10));
        assert_eq!(number("CAP_CHECKPOINT_RESTORE"), Some(40));
        assert_eq!(number("CAP_WHATEVER"), None);
        assert!(matches!(
            CapDrop::prepare(&["CAP_NOPE".into()]),
            Err(SandboxError::UnknownCapability(_))
        ));
        assert_eq!(names(1 << 21 | 1), vec!["CAP_CHOWN", "CAP_SYS_ADMIN"]);
    }
}
