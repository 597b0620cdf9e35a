//! System calls go through `nix` where it has them (issue 15 item 7). A
//! direct `libc::function(...)` call is allowed only in the files listed
//! here, each with a ceiling and the reason `nix` does not do: a new direct
//! call anywhere else, or one more in a listed file, fails this test. Lower
//! a ceiling when a call moves to `nix`; constants (`libc::SYS_*`,
//! `libc::EPERM`) and types are not calls and are not counted.

use std::path::{Path, PathBuf};

/// (file under src/, most direct libc calls, why nix does not do).
const ALLOWED: &[(&str, usize, &str)] = &[
    (
        "src/supervisor/protect/gitlinks.rs",
        1,
        "renameat2 with RENAME_NOREPLACE (moving a new submodule's .git aside): nix wraps it for glibc only, the shipped build is musl",
    ),
    (
        "src/supervisor/notify.rs",
        14,
        "seccomp user-notification ioctls; connect/sendto/sendmsg with sockaddr bytes copied from the child; fchmodat2 and utimensat with AT_EMPTY_PATH; setxattr/removexattr; poll on a raw stop descriptor",
    ),
    (
        "src/supervisor/mod.rs",
        2,
        "SECCOMP_GET_NOTIF_SIZES and the pidfd_getfd probe: raw syscalls",
    ),
    (
        "src/supervisor/filter.rs",
        1,
        "seccomp filter install (team runperf's file)",
    ),
    (
        "src/sandbox/fds.rs",
        7,
        "pidfd_open/pidfd_getfd/pidfd_send_signal and close_range/getdents64 (no wrapper); fcntl on descriptor numbers between fork and exec",
    ),
    (
        "src/sandbox/caps.rs",
        3,
        "capget/capset and the capability prctl options (no wrapper)",
    ),
    (
        "src/sandbox/kernel.rs",
        3,
        "probes: landlock_create_ruleset, SECCOMP_GET_ACTION_AVAIL, x32 getpid",
    ),
    (
        "src/sandbox/selftest.rs",
        8,
        "the probes are raw syscalls on purpose (each asks the filter about one number); _exit in the forked child",
    ),
    ("src/sandbox/pty.rs", 1, "ioctl TIOCGPTPEER (no wrapper)"),
    (
        "src/sys/start.rs",
        5,
        "the binary's entry point: poll and fcntl on descriptor numbers 0-2 that may be closed (nix wants an open, borrowed descriptor); sigaltstack (no wrapper), also read back in its test",
    ),
    (
        "src/sandbox/landlock.rs",
        7,
        "team runperf's file: isatty on a descriptor number; openat(dirfd, O_PATH) (nix::fcntl::openat covers it); run3: landlock_add_rule (raw syscall, no wrapper); fdopendir/readdir64/dirfd/closedir for the relative listing (nix::dir needs nix's `dir` feature, not enabled)",
    ),
    (
        "src/sandbox/seccomp.rs",
        2,
        "team runperf's file: seccomp(SET_MODE_FILTER) with a listener (no wrapper); PR_SET_NO_NEW_PRIVS (nix::sys::prctl::set_no_new_privs covers it)",
    ),
    (
        "src/sandbox/mod.rs",
        1,
        "team runperf's file (sandbox set-up)",
    ),
    (
        "src/bound.rs",
        3,
        "write and _exit inside the allocator and a signal handler, where nothing may allocate; setitimer (ms-precision time bound; nix has only alarm)",
    ),
    (
        "src/cli/hook/isolate.rs",
        3,
        "_exit in the forked deciding child; restore_limits (pre_exec) until it moves to src/sys/rlimit.rs",
    ),
    (
        "src/sys/rlimit.rs",
        2,
        "restore_limits, moved here by team layers: getrlimit/setrlimit (nix::sys::resource covers them)",
    ),
    (
        "src/cli/approval.rs",
        1,
        "getrandom (no nix wrapper; std has none at the minimum Rust version)",
    ),
    (
        "src/hooks/external.rs",
        1,
        "PR_SET_PDEATHSIG in pre_exec (nix::sys::prctl::set_pdeathsig covers it)",
    ),
    (
        "src/sys/external.rs",
        1,
        "the same file after team layers' move",
    ),
    (
        "src/run/resolve.rs",
        1,
        "access(X_OK) (nix::unistd::access covers it; team runperf's file)",
    ),
    (
        "src/run/signals.rs",
        1,
        "tcsetpgrp on a descriptor number between fork and exec",
    ),
    (
        "src/run/spawn.rs",
        32,
        "fork/pre-exec path (team runperf's file); run3: the clone(CLONE_VM | CLONE_VFORK) child, which shares the parent's memory and must not allocate (nix's execve and chdir build vectors or buffers; clone, mmap and mprotect need nix features not enabled): clone, mmap/mprotect/munmap of its stack, sigfillset/pthread_sigmask, signal, chdir, setpgid, execve, _exit, waitpid; discarding a pending stop before execve (signal; sigaction, sigemptyset, sigpending, sigismember in its test: nix has no sigpending)",
    ),
    (
        "src/run/mod.rs",
        13,
        "run path (team runperf's file); run3: mallopt(M_ARENA_MAX) (no wrapper)",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src/").flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Direct calls of `libc` functions in `text`: `libc::name(` with a
/// lower-case name, outside `//` comments.
fn calls(text: &str) -> usize {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .map(|code| {
            let mut n = 0;
            let mut rest = code;
            while let Some(at) = rest.find("libc::") {
                rest = &rest[at + "libc::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let after = rest[name.len()..].trim_start();
                if name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
                    && after.starts_with('(')
                {
                    n += 1;
                }
            }
            n
        })
        .sum()
}

#[test]
fn the_counter_sees_calls_and_not_constants() {
    assert_eq!(calls("let x = unsafe { libc::getpid() };"), 1);
    assert_eq!(calls("libc::syscall (libc::SYS_getpid)"), 1);
    assert_eq!(
        calls("libc::prctl(libc::PR_SET_DUMPABLE, 0); libc::kill(1, 9)"),
        2
    );
    assert_eq!(calls("const A: libc::c_int = libc::EPERM;"), 0);
    assert_eq!(calls("let s: libc::sigset_t; // libc::close(fd)"), 0);
    assert_eq!(calls("libc::c_ulong::from(x)"), 0);
}

#[test]
fn direct_libc_calls_only_where_nix_does_not_do() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    assert!(files.len() > 20, "walked src/: {files:?}");
    let mut problems = Vec::new();
    let mut seen = 0;
    for f in &files {
        let rel = f
            .strip_prefix(root)
            .expect("under the manifest dir")
            .display()
            .to_string();
        let n = calls(&std::fs::read_to_string(f).expect("read"));
        seen += n;
        let allowed = ALLOWED
            .iter()
            .find(|(p, _, _)| *p == rel)
            .map_or(0, |(_, max, _)| *max);
        if n > allowed {
            problems.push(format!(
                "{rel}: {n} direct libc calls, at most {allowed} allowed: use nix \
                 (or, where nix has no wrapper, add the file to ALLOWED with the reason)"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Positive control: the scan finds the calls that are known to exist.
    assert!(seen >= 20, "only {seen} calls found: is the scan broken?");
    for (p, _, why) in ALLOWED {
        assert!(!why.is_empty(), "{p}: give the reason");
    }
}
