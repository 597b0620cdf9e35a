//! What the running kernel can enforce.
//!
//! `safe-exec doctor` prints this, and [`super::prepare`] uses the Landlock
//! ABI to decide whether a spec can be enforced at all (`Required`) or only in
//! part (`BestEffort`). Everything here is a cheap probe: one syscall or one
//! small `/proc` read each, no side effects on the calling process.

use std::fs;

use serde::Serialize;

/// `LANDLOCK_CREATE_RULESET_VERSION`: ask `landlock_create_ruleset` for the ABI.
const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
/// `SECCOMP_GET_ACTION_AVAIL` operation of `seccomp(2)`.
const SECCOMP_GET_ACTION_AVAIL: libc::c_uint = 2;
/// `__X32_SYSCALL_BIT`: set in the syscall number by x32 binaries on x86_64.
pub const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// What the kernel offers to confine a command, for `doctor` and enforcement.
#[derive(Debug, Clone, Serialize)]
pub struct KernelSupport {
    /// `uname -r`, to quote in bug reports.
    pub kernel_release: String,
    /// Landlock ABI the kernel offers (0 when Landlock is unavailable).
    pub landlock_abi: u32,
    /// `available`, `disabled` (built but not in the `lsm=` list) or
    /// `not-implemented` (kernel built without Landlock).
    pub landlock_status: String,
    /// Highest ABI this build of safe-exec knows how to use.
    pub landlock_abi_supported_by_safe_exec: u32,
    /// Whether seccomp filters (with `SECCOMP_RET_ERRNO`) can be installed.
    pub seccomp: bool,
    /// `no_new_privs` is already set on this process (inherited from a parent
    /// sandbox); harmless, reported for context.
    pub no_new_privs: bool,
    /// `Seccomp:` of `/proc/self/status`: 0 none, 1 strict, 2 filter (we are
    /// already below a seccomp filter, e.g. Docker's default profile).
    pub seccomp_mode: Option<u32>,
    /// `Seccomp_filters:` of `/proc/self/status`: filters already stacked.
    pub seccomp_filters: Option<u32>,
    /// Whether this process already runs inside a Landlock domain. The
    /// kernel has no interface that says so without side effects, so this is
    /// `None` (unknown); kept so the JSON shape is stable.
    pub landlock_domain: Option<bool>,
    /// Container runtime detected from well-known marker files, if any.
    pub container: Option<String>,
    /// Whether the x32 syscall ABI is enabled (x86_64 only; `None` elsewhere).
    /// The seccomp filter guards against it either way.
    pub x32_enabled: Option<bool>,
}

/// Probes the running kernel; see [`KernelSupport`].
pub fn probe_kernel() -> KernelSupport {
    let (abi, status) = landlock_abi_status();
    let status_file = fs::read_to_string("/proc/self/status").unwrap_or_default();
    KernelSupport {
        kernel_release: kernel_release(),
        landlock_abi: abi,
        landlock_status: status.to_string(),
        landlock_abi_supported_by_safe_exec: super::landlock::CRATE_ABI,
        seccomp: seccomp_available(),
        no_new_privs: status_field(&status_file, "NoNewPrivs:") == Some(1),
        seccomp_mode: status_field(&status_file, "Seccomp:"),
        seccomp_filters: status_field(&status_file, "Seccomp_filters:"),
        landlock_domain: None,
        container: detect_container(),
        x32_enabled: x32_enabled(),
    }
}

/// Landlock ABI version offered by the kernel, 0 when there is none.
pub fn landlock_abi() -> u32 {
    landlock_abi_status().0
}

/// [`probe_landlock`], asked once per process: the kernel's answer cannot
/// change while it runs, and `decide` needs it for every command.
fn landlock_abi_status() -> (u32, &'static str) {
    static ANSWER: std::sync::OnceLock<(u32, &'static str)> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(probe_landlock)
}

fn probe_landlock() -> (u32, &'static str) {
    // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns a number.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if rc > 0 {
        return (u32::try_from(rc).unwrap_or(0), "available");
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => (0, "disabled"),
        _ => (0, "not-implemented"),
    }
}

/// Whether seccomp filters returning `SECCOMP_RET_ERRNO` can be installed
/// (asked once per process).
pub fn seccomp_available() -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(probe_seccomp)
}

fn probe_seccomp() -> bool {
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL reads one u32 we own.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_GET_ACTION_AVAIL,
            0usize,
            &action as *const u32,
        )
    };
    rc == 0
}

fn status_field(status: &str, key: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().parse().ok())
}

fn kernel_release() -> String {
    fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn detect_container() -> Option<String> {
    if fs::metadata("/.dockerenv").is_ok() {
        return Some("docker".into());
    }
    if fs::metadata("/run/.containerenv").is_ok() {
        return Some("podman".into());
    }
    if let Ok(v) = std::env::var("container")
        && !v.is_empty()
    {
        return Some(v);
    }
    let cgroup = fs::read_to_string("/proc/1/cgroup").unwrap_or_default();
    for (marker, name) in [
        ("kubepods", "kubernetes"),
        ("docker", "docker"),
        ("lxc", "lxc"),
        ("containerd", "containerd"),
    ] {
        if cgroup.contains(marker) {
            return Some(name.into());
        }
    }
    None
}

#[cfg(target_arch = "x86_64")]
fn x32_enabled() -> Option<bool> {
    // SAFETY: getpid through the x32 entry point has no side effects; with
    // x32 disabled the kernel answers ENOSYS.
    let rc = unsafe { libc::syscall(libc::SYS_getpid | X32_SYSCALL_BIT) };
    Some(rc > 0)
}

#[cfg(not(target_arch = "x86_64"))]
fn x32_enabled() -> Option<bool> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_status_fields() {
        let s = "Name:\tx\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t3\n";
        assert_eq!(status_field(s, "NoNewPrivs:"), Some(1));
        assert_eq!(status_field(s, "Seccomp:"), Some(2));
        assert_eq!(status_field(s, "Seccomp_filters:"), Some(3));
        assert_eq!(status_field(s, "Missing:"), None);
    }

    #[test]
    fn probe_reports_a_consistent_landlock_status() {
        let k = probe_kernel();
        assert_eq!(k.landlock_abi > 0, k.landlock_status == "available");
        assert!(!k.kernel_release.is_empty());
    }
}
