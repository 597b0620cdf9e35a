//! Issue 11, row K2 with the pty broker: the supervisor answers the
//! command's `ioctl(master, TIOCGPTPEER)` (src/sandbox/pty.rs,
//! src/supervisor/notify.rs), so Landlock grants no `/dev/pts` entry but the
//! command's own terminal. Another terminal of the same user (a pty the test
//! opened) is EACCES from inside, as root and as an unprivileged user, with
//! positive controls: the same open outside safe-exec works, and the
//! command's own new ptys work (TIOCGPTPEER, glibc's openpty, `script`,
//! python's `os.openpty` and `pty.fork`).
use crate::common::sandbox as common;
use common::*;

/// Python: `os.openpty()` and `pty.fork()` (glibc openpty/forkpty), the
/// child's output read back through the master.
const PY_PTY: &str = "import os, pty\n\
m, s = os.openpty()\n\
assert os.isatty(s), 'openpty slave is not a tty'\n\
os.write(m, b'x\\n'); assert os.read(s, 8).startswith(b'x')\n\
pid, fd = pty.fork()\n\
if pid == 0:\n    os.write(1, b'from-child'); os._exit(0)\n\
data = b''\n\
while b'from-child' not in data:\n    data += os.read(fd, 100)\n\
os.waitpid(pid, 0)\n\
print('pty-ok')\n";

#[test]
fn k2_broker_another_terminal_is_eacces_as_root_and_own_ptys_work() {
    let Some(w) = landlock_world() else {
        return;
    };
    let (_m, _slave, other) = other_terminal(0);
    let other = other.display().to_string();
    // Positive control: the same open outside safe-exec works.
    assert_eq!(
        probe_unsandboxed(&["open-tty", &other]),
        0,
        "control outside"
    );
    // The escape, read/write of another terminal: refused by Landlock (the
    // pty is the caller's own, mode 0620, so not a DAC refusal), both
    // exec-in-place and supervised with a time limit.
    assert_eq!(w.probe(&["open-tty", &other]), EACCES, "another terminal");
    let out = w
        .supervised(&[
            probe().display().to_string(),
            "open-tty".into(),
            hidden(&other),
        ])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        EACCES,
        "another terminal (--timeout): {}",
        stderr(&out)
    );
    // The command's own new terminal, by every spelling.
    assert_eq!(w.probe(&["own-pty"]), 0, "TIOCGPTPEER, no O_CLOEXEC");
    assert_eq!(
        w.probe(&["own-pty", "cloexec"]),
        0,
        "TIOCGPTPEER, O_CLOEXEC"
    );
    assert_eq!(probe_unsandboxed(&["own-pty"]), 0, "control own-pty");
    // The request with garbage in its high 32 bits is still TIOCGPTPEER
    // for the kernel, so the filter compares only the low half.
    assert_eq!(
        probe_unsandboxed(&["own-pty", "plain", "hi"]),
        0,
        "control hi"
    );
    assert_eq!(w.probe(&["own-pty", "plain", "hi"]), 0, "high bits set");
    assert_eq!(
        w.probe(&["own-pty", "cloexec", "hi"]),
        0,
        "high bits, O_CLOEXEC"
    );
    // Documented limit: the slave of its own pty opened *by name*
    // (ptsname + open, no TIOCGPTPEER) is refused like any other entry of
    // /dev/pts; glibc 2.34+ openpty/forkpty never do this.
    assert_eq!(w.probe(&["own-pty-by-name"]), EACCES, "by name");
    assert_eq!(
        probe_unsandboxed(&["own-pty-by-name"]),
        0,
        "control by name"
    );
    if have("script") {
        let out = w.run(&["script", "-q", "-c", "true", "/dev/null"]);
        assert_eq!(code(&out), 0, "script -q -c true: {}", stderr(&out));
        let out = w.run(&["script", "-qc", "tty", "/dev/null"]);
        assert!(
            code(&out) == 0 && stdout(&out).contains("/dev/pts/") || code(&out) == 126,
            "script -qc tty: {} {}",
            stdout(&out),
            stderr(&out)
        );
    } else {
        assert!(std::env::var("CI").is_err(), "script missing in CI");
    }
    if have("python3") {
        let out = w.run(&["python3", "-c", PY_PTY]);
        assert_eq!(code(&out), 0, "python pty: {}", stderr(&out));
        assert!(stdout(&out).contains("pty-ok"), "{}", stdout(&out));
    } else {
        assert!(std::env::var("CI").is_err(), "python3 missing in CI");
    }
}

#[test]
fn k2_broker_another_terminal_of_the_same_user_is_eacces_unprivileged() {
    if !require_landlock() || !is_root() {
        return;
    }
    let w = World::new();
    let u = AsUser::new(&w);
    // Another terminal of the unprivileged user (owned by it, 0620).
    let (_m, _slave, other) = other_terminal(TEST_USER);
    let other = other.display().to_string();
    assert_eq!(
        u.unsandboxed(&w, &["open-tty", &other]),
        0,
        "control as the user"
    );
    assert_eq!(
        u.sandboxed(&w, &["open-tty", &other]),
        EACCES,
        "another terminal"
    );
    assert_eq!(u.sandboxed(&w, &["own-pty"]), 0, "own pty");
    assert_eq!(
        u.sandboxed(&w, &["own-pty", "cloexec"]),
        0,
        "own pty, O_CLOEXEC"
    );
    assert_eq!(u.unsandboxed(&w, &["own-pty"]), 0, "control own pty");
    if have("script") {
        let out = u.safe_exec(
            &w,
            &["script", "-q", "-c", "true", "/dev/null"].map(String::from),
        );
        assert_eq!(code(&out), 0, "script as the user: {}", stderr(&out));
    }
    if std::path::Path::new("/usr/bin/python3").exists() {
        let out = u.safe_exec(
            &w,
            &["/usr/bin/python3".to_string(), "-c".into(), PY_PTY.into()],
        );
        assert_eq!(code(&out), 0, "python pty as the user: {}", stderr(&out));
        assert!(stdout(&out).contains("pty-ok"), "{}", stdout(&out));
    }
}

#[test]
fn doctor_reports_the_supervisor_and_each_of_its_mechanisms() {
    let w = World::new();
    let out = w.safe_exec().args(["doctor", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("doctor --json");
    let sup = &v["supervisor"];
    // This kernel (6.x, seccomp user notification) runs the supervisor.
    assert_eq!(sup["available"], true, "{sup}");
    let names: Vec<&str> = sup["mechanisms"]
        .as_array()
        .expect("mechanisms")
        .iter()
        .map(|m| {
            assert_eq!(m["enforced"], true, "{m}");
            assert!(m["detail"].as_str().is_some_and(|d| d.len() > 20), "{m}");
            m["name"].as_str().unwrap()
        })
        .collect();
    for name in [
        "supervisor",
        "supervisor.metadata",
        "supervisor.loopback",
        "supervisor.exec_checks",
        "supervisor.lifetime",
        "supervisor.protected_files",
        "supervisor.pty_broker",
    ] {
        assert!(names.contains(&name), "doctor misses {name}: {names:?}");
    }
    // The sandbox's own pty_broker line agrees with the supervisor.
    let broker = v["mechanisms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "pty_broker")
        .expect("pty_broker")
        .clone();
    assert_eq!(broker["enforced"], true, "{broker}");
    let text = w.safe_exec().arg("doctor").output().unwrap();
    assert!(
        stdout(&text).contains("supervisor: available"),
        "{}",
        stdout(&text)
    );
    assert!(
        stdout(&text).contains("supervisor.pty_broker"),
        "{}",
        stdout(&text)
    );
}
