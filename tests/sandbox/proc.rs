//! Syscall and process containment: research catalogue §10 items 13-18,
//! exit codes, timeouts and orphans.
use crate::common::sandbox as common;
use common::*;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Sleeper(Child);

impl Sleeper {
    fn new() -> Sleeper {
        Sleeper(
            Command::new("sleep")
                .arg("60")
                .stdin(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }
    fn pid(&self) -> String {
        self.0.id().to_string()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_gone(pid: i32) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(5) {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn ptrace_of_an_outside_process_is_denied() {
    let Some(w) = landlock_world() else {
        return;
    };
    let s = Sleeper::new();
    assert_eq!(w.probe(&["ptrace", &s.pid()]), EPERM);
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.pid())).unwrap();
    assert!(status.contains("TracerPid:\t0"), "not traced");
    let ctl = probe_unsandboxed(&["ptrace", &s.pid()]);
    if ctl != 0 {
        skip(&format!(
            "ptrace restricted on this host (errno {ctl}): no control"
        ));
    }
}

#[test]
fn process_vm_readv_is_denied() {
    let Some(w) = landlock_world() else {
        return;
    };
    assert_eq!(
        w.probe(&["process_vm_readv", "self"]),
        EPERM,
        "even on itself"
    );
    assert_eq!(
        probe_unsandboxed(&["process_vm_readv", "self"]),
        0,
        "control"
    );
}

#[test]
fn kill_of_an_outside_process_is_denied_inside_is_allowed() {
    let Some(w) = landlock_world() else {
        return;
    };
    let s = Sleeper::new();
    assert_eq!(w.probe(&["kill", &s.pid()]), EPERM);
    assert!(alive(s.0.id() as i32), "the outside process survived");
    let out = w.bash("sleep 30 & kill $!; wait $!; echo $?");
    assert_eq!(
        stdout(&out).trim(),
        "143",
        "control: own children can be signalled"
    );
    let s2 = Sleeper::new();
    assert_eq!(probe_unsandboxed(&["kill", &s2.pid()]), 0, "control");
}

#[test]
fn namespaces_cannot_be_created() {
    let Some(w) = landlock_world() else {
        return;
    };
    assert_eq!(w.probe(&["unshare", "0x10000000"]), EPERM, "CLONE_NEWUSER");
    assert_eq!(w.probe(&["unshare", "0x40000000"]), EPERM, "CLONE_NEWNET");
    assert_eq!(w.probe(&["setns"]), EPERM);
    assert_eq!(w.probe(&["clone-newuser"]), EPERM);
    assert_eq!(
        w.probe(&["clone-plain"]),
        0,
        "control: plain clone (fork) works"
    );
    assert_eq!(
        w.probe(&["clone3"]),
        ENOSYS,
        "clone3 makes libc fall back to clone"
    );
    assert_eq!(probe_unsandboxed(&["unshare", "0x10000000"]), 0, "control");
    assert_eq!(probe_unsandboxed(&["clone3"]), 0, "control");
    let out = w.sh("echo a | cat; (echo sub); true & wait");
    assert_eq!(
        (code(&out), stdout(&out).as_str()),
        (0, "a\nsub\n"),
        "fork still works"
    );
}

#[test]
fn kernel_attack_surface_syscalls_are_denied() {
    let Some(w) = landlock_world() else {
        return;
    };
    assert_eq!(w.probe(&["bpf"]), EPERM);
    assert_eq!(w.probe(&["perf_event_open"]), EPERM);
    assert_eq!(w.probe(&["keyctl"]), EPERM);
    assert_ne!(
        probe_unsandboxed(&["keyctl"]),
        EPERM,
        "control: keyrings answer otherwise"
    );
    let mounts_before = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert_eq!(w.probe(&["mount", &w.w("")]), EPERM);
    assert_eq!(
        std::fs::read_to_string("/proc/self/mounts").unwrap(),
        mounts_before
    );
}

#[test]
fn terminal_injection_ioctls_are_denied_including_high_bits() {
    let Some(w) = landlock_world() else {
        return;
    };
    for cmd in ["0x5412", "0xffffffff00005412", "0x541C", "0x100005412"] {
        assert_eq!(w.probe(&["ioctl", "0", cmd]), EPERM, "{cmd}");
        assert_eq!(
            probe_unsandboxed(&["ioctl", "0", cmd]),
            libc::ENOTTY,
            "control {cmd}"
        );
    }
    // control: other ioctls are untouched
    assert_eq!(w.probe(&["ioctl", "0", "0x5401"]), libc::ENOTTY);
}

#[test]
fn x32_and_foreign_arch_syscalls_are_blocked() {
    if !require_landlock() {
        return;
    }
    if !cfg!(target_arch = "x86_64") {
        skip("x32/i386 entry points exist only on x86_64");
        return;
    }
    let w = World::new();
    assert_eq!(w.probe(&["x32-getpid"]), EPERM);
    assert_ne!(
        probe_unsandboxed(&["x32-getpid"]),
        EPERM,
        "control: ENOSYS or success"
    );
    assert_eq!(
        w.probe(&["int80-getpid"]),
        128 + libc::SIGSYS,
        "killed by the arch check"
    );
    assert_eq!(probe_unsandboxed(&["int80-getpid"]), 0, "control");
}

#[test]
fn no_new_privs_is_set() {
    let Some(w) = landlock_world() else {
        return;
    };
    let out = w.run(&[probe().to_str().unwrap(), "print-nnp"]);
    assert_eq!(stdout(&out).trim(), "1");
    let ctl = Command::new(probe()).arg("print-nnp").output().unwrap();
    assert_eq!(stdout(&ctl).trim(), "0", "control");
}

#[test]
fn exit_codes_follow_the_contract() {
    let Some(w) = landlock_world() else {
        return;
    };
    assert_eq!(code(&w.sh("exit 3")), 3);
    let k = w.script("k.sh", "kill -9 $$");
    assert_eq!(code(&w.run(&[&k])), 137);
    // supervised: safe-exec itself exits 128+N
    let out = w.supervised(&[&k]).output().unwrap();
    assert_eq!(out.status.code(), Some(137), "{}", stderr(&out));
    let out = w.supervised_c("exit 3").output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let out = w.run(&["no-such-program-xyz"]);
    assert_eq!(code(&out), 127);
    assert!(
        stderr(&out).contains("command not found"),
        "{}",
        stderr(&out)
    );
    std::fs::write(w.work.join("plain"), "x").unwrap();
    let out = w.run(&["./plain"]);
    assert_eq!(code(&out), 126, "{}", stderr(&out));
    let out = w.run(&["./missing"]);
    assert_eq!(code(&out), 127);
}

#[test]
fn timeout_kills_the_whole_group_and_exits_124() {
    let Some(mut w) = landlock_world() else {
        return;
    };
    w.timeout(1);
    let pidfile = w.w("bg.pid");
    let t = Instant::now();
    let out = w.sh(&format!("sleep 300 & echo $! > {pidfile}; sleep 300"));
    assert_eq!(code(&out), 124, "{}", stderr(&out));
    assert!(t.elapsed() < Duration::from_secs(10));
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_gone(pid),
        "background grandchild {pid} was left behind"
    );
    w.timeout(30);
    assert_eq!(code(&w.sh("exit 0")), 0, "control: under the limit");
}

#[test]
fn background_jobs_do_not_outlive_the_command() {
    let Some(mut w) = landlock_world() else {
        return;
    };
    // Supervised (a time limit is set): safe-exec kills the command's process
    // group when the command ends. Without a limit it execs in place and
    // there is no safe-exec left to do so.
    w.timeout(300);
    let pidfile = w.w("bg.pid");
    let out = w.sh(&format!("sleep 300 & echo $! > {pidfile}"));
    assert_eq!(code(&out), 0);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(wait_gone(pid), "orphan {pid} left behind");
}

/// Starts `script` supervised (`safe-exec --timeout 300 -- ./script.sh`):
/// with a time limit safe-exec stays as the parent (without one it execs in
/// place).
fn start(w: &World, script: &str) -> Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = w.supervised_bash(script);
    // The command inherits the caller's ignored signals, as it would
    // without safe-exec, and bash cannot trap a signal that was ignored when
    // it started: under `nohup` (SIGHUP ignored) the traps below would never
    // run. These tests are about forwarding, so they start from the default.
    // SAFETY: signal(2) between fork and exec, async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_file(p: &std::path::Path) -> String {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(10) {
        if let Ok(s) = std::fs::read_to_string(p)
            && s.ends_with('\n')
        {
            return s;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{} never written", p.display());
}

#[test]
fn signals_are_forwarded_to_the_command() {
    let Some(w) = landlock_world() else {
        return;
    };
    let ready = w.work.join("ready");
    let got = w.work.join("got");
    let mut child = start(
        &w,
        &format!(
            "trap 'echo HUP > {g}' HUP; trap 'echo TERM >> {g}; exit 7' TERM; echo up > {r}; while :; do sleep 0.05; done",
            g = got.display(),
            r = ready.display()
        ),
    );
    wait_file(&ready);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    wait_file(&got);
    // SAFETY: kill(2) on the pid of a child this test started; no memory is involved.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(7));
    assert_eq!(std::fs::read_to_string(&got).unwrap(), "HUP\nTERM\n");
}

#[test]
fn command_dies_with_safe_exec() {
    let Some(w) = landlock_world() else {
        return;
    };
    let pidfile = w.work.join("pid");
    let mut child = start(
        &w,
        &format!("echo $$ > {}; exec sleep 300", pidfile.display()),
    );
    let pid: i32 = wait_file(&pidfile).trim().parse().unwrap();
    assert!(alive(pid));
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    assert!(wait_gone(pid), "command {pid} outlived safe-exec");
}

#[test]
fn exec_in_place_leaves_no_extra_process() {
    let Some(mut w) = landlock_world() else {
        return;
    };
    // Nothing needs the result (the audit log, on by default, does).
    w.profile["audit"] = serde_json::json!({"enabled": false});
    let out = w.sh("echo $PPID; grep NoNewPrivs /proc/self/status");
    let s = stdout(&out);
    let mut lines = s.lines();
    // The supervisor (seccomp user notification, subreaper) keeps
    // safe-exec as the parent wherever the kernel offers it; only then is
    // there one process more than the caller.
    let ppid = lines.next().map(str::to_string);
    if safe_exec::supervisor::available() {
        assert_ne!(
            ppid.as_deref(),
            Some(std::process::id().to_string().as_str()),
            "safe-exec stays as the supervising parent: {}",
            stderr(&out)
        );
    } else {
        assert_eq!(
            ppid.as_deref(),
            Some(std::process::id().to_string().as_str()),
            "bash's parent is the caller: {}",
            stderr(&out)
        );
    }
    assert_eq!(
        lines
            .next()
            .map(|l| l.split_whitespace().collect::<Vec<_>>()),
        Some(vec!["NoNewPrivs:", "1"])
    );
    // and it is sandboxed
    assert_eq!(w.probe(&["open-read", &w.h(".ssh/id_rsa")]), EACCES);
}
