//! Issue 11, rows K1-K7 and item 3: each escape run for real with a
//! harmless payload (a victim process the test started, a System V segment
//! the test created, a pty the test opened as "another terminal"), with a
//! positive control beside it (the same operation outside safe-exec
//! succeeds), as root and as an unprivileged user where they differ.
//! Operations are performed by the probe (tests/probe/kernel_ops.rs), which
//! exits with the errno.
use crate::common::sandbox as common;
use common::*;

use serde_json::json;
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};

/// A process the test started, killed on drop.
struct Victim(Child);

impl Victim {
    fn new(cmd: &mut Command) -> Victim {
        Victim(cmd.stdin(Stdio::null()).spawn().expect("victim"))
    }
    fn sleep() -> Victim {
        Victim::new(Command::new("sleep").arg("60"))
    }
    fn pid(&self) -> String {
        self.0.id().to_string()
    }
    fn limits(&self) -> String {
        std::fs::read_to_string(format!("/proc/{}/limits", self.0.id()))
            .expect("limits")
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .unwrap_or("")
            .to_string()
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn k1_pid_targeting_calls_reach_only_the_caller() {
    let Some(w) = landlock_world() else {
        return;
    };
    let v = Victim::sleep();
    let before = v.limits();
    let p = v.pid();
    // The escape: another process's limits, priority, CPUs, scheduling
    // class and I/O priority.
    assert_eq!(w.probe(&["prlimit-nofile", &p, "77"]), EPERM, "prlimit64");
    assert_eq!(v.limits(), before, "victim's limit unchanged");
    assert_eq!(
        w.probe(&["setpriority", "0", &p, "5"]),
        EPERM,
        "setpriority"
    );
    assert_eq!(w.probe(&["sched_setaffinity", &p]), EPERM);
    assert_eq!(w.probe(&["sched_setscheduler", &p]), EPERM);
    assert_eq!(w.probe(&["ioprio_set", "1", &p]), EPERM, "ioprio_set");
    // Process groups and users reach processes outside the sandbox.
    assert_eq!(w.probe(&["setpriority", "1", "0", "5"]), EPERM, "PRIO_PGRP");
    assert_eq!(w.probe(&["setpriority", "2", "0", "5"]), EPERM, "PRIO_USER");
    assert_eq!(w.probe(&["ioprio_set", "3", "0"]), EPERM, "IOPRIO_WHO_USER");
    // The same calls on the caller itself keep working, and reading a
    // limit of another process is not an escape.
    for args in [
        &["prlimit-nofile", "0", "512"][..],
        // 19, the lowest priority: raising one's own nice value needs no
        // privilege whatever it is now (5 would be a lowering, EACCES, when
        // the tests run under `nice -n 10`).
        &["setpriority", "0", "0", "19"],
        &["sched_setaffinity", "0"],
        &["sched_setscheduler", "0"],
        &["ioprio_set", "1", "0"],
        &["prlimit-read", &p],
    ] {
        assert_eq!(w.probe(args), 0, "{args:?} on the caller");
    }
    // Positive control: outside safe-exec the victim's limit changes.
    assert_eq!(
        probe_unsandboxed(&["prlimit-nofile", &p, "77"]),
        0,
        "control"
    );
    assert!(
        v.limits().contains("77"),
        "control changed it: {}",
        v.limits()
    );
    assert_eq!(probe_unsandboxed(&["sched_setaffinity", &p]), 0, "control");
}

#[test]
fn k1_as_an_unprivileged_user_too() {
    if !require_landlock() {
        return;
    }
    if !is_root() {
        // The same test as above then runs as this user.
        return;
    }
    let w = World::new();
    let u = AsUser::new(&w);
    let v = Victim::new(setpriv_test_user().args(["sleep", "60"]));
    let p = v.pid();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let before = v.limits();
    assert_eq!(
        u.sandboxed_supervised(&w, &["prlimit-nofile", &p, "77"]),
        EPERM
    );
    assert_eq!(v.limits(), before);
    assert_eq!(
        u.sandboxed_supervised(&w, &["setpriority", "0", &p, "5"]),
        EPERM
    );
    assert_eq!(
        u.sandboxed_supervised(&w, &["sched_setaffinity", &p]),
        EPERM
    );
    assert_eq!(
        u.sandboxed_supervised(&w, &["prlimit-nofile", "0", "512"]),
        0,
        "self"
    );
    assert_eq!(
        u.unsandboxed(&w, &["prlimit-nofile", &p, "77"]),
        0,
        "control"
    );
    assert!(v.limits().contains("77"));
}

/// A System V segment the test owns, removed on drop.
struct Segment {
    key: i32,
}

impl Segment {
    fn key_for(tag: i32) -> i32 {
        0x5e00_0000 | ((std::process::id() as i32 & 0xffff) << 4) | tag
    }
    /// Made by the probe (as `user` if given) so that its owner is right.
    fn make(tag: i32, user: Option<(&AsUser, &World)>) -> Segment {
        let key = Self::key_for(tag);
        let k = key.to_string();
        let rc = match user {
            Some((u, w)) => u.unsandboxed(w, &["shm-make", &k]),
            None => probe_unsandboxed(&["shm-make", &k]),
        };
        assert_eq!(rc, 0, "creating the segment");
        Segment { key }
    }
    fn contents(&self) -> String {
        // SAFETY: attach read-only, copy 8 bytes, detach.
        unsafe {
            let id = libc::shmget(self.key, 0, 0);
            assert!(id >= 0, "segment exists");
            let p = libc::shmat(id, std::ptr::null(), libc::SHM_RDONLY);
            assert!(p as isize != -1);
            let mut b = [0u8; 8];
            std::ptr::copy_nonoverlapping(p.cast::<u8>(), b.as_mut_ptr(), 8);
            libc::shmdt(p);
            String::from_utf8_lossy(&b).into_owned()
        }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: remove the segment we made.
        unsafe {
            let id = libc::shmget(self.key, 0, 0);
            if id >= 0 {
                libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
            }
        }
    }
}

#[test]
fn k3_sysv_ipc_of_other_processes_is_out_of_reach() {
    let Some(mut w) = landlock_world() else {
        return;
    };
    let seg = Segment::make(1, None);
    let k = seg.key.to_string();
    assert_eq!(
        w.probe(&["shm-write", &k, "OWNED!!!"]),
        EPERM,
        "shmget/shmat"
    );
    assert_eq!(seg.contents(), "original", "segment untouched");
    let mq = format!("/safe-exec-test-{}", std::process::id());
    assert_eq!(w.probe(&["mq-open", &mq]), EPERM, "POSIX message queue");
    // Positive controls: outside safe-exec, and inside with sysv_ipc = true.
    assert_eq!(probe_unsandboxed(&["mq-open", &mq]), 0, "control: mq_open");
    let name = std::ffi::CString::new(mq.clone()).unwrap();
    // SAFETY: removing the queue the control created.
    unsafe { libc::mq_unlink(name.as_ptr()) };
    w.set("sysv_ipc", json!(true));
    assert_eq!(
        w.probe(&["shm-write", &k, "switch!!"]),
        0,
        "sysv_ipc = true"
    );
    assert_eq!(seg.contents(), "switch!!");
    assert_eq!(probe_unsandboxed(&["shm-write", &k, "control"]), 0);
    assert_eq!(seg.contents(), "control!", "control wrote");
}

#[test]
fn k3_as_an_unprivileged_user_too() {
    if !require_landlock() || !is_root() {
        return;
    }
    let w = World::new();
    let u = AsUser::new(&w);
    let seg = Segment::make(2, Some((&u, &w)));
    let k = seg.key.to_string();
    assert_eq!(
        u.sandboxed_supervised(&w, &["shm-write", &k, "OWNED!!!"]),
        EPERM
    );
    assert_eq!(seg.contents(), "original");
    assert_eq!(
        u.unsandboxed(&w, &["shm-write", &k, "control!"]),
        0,
        "control"
    );
    assert_eq!(seg.contents(), "control!");
}

#[test]
fn k4_fanotify_is_refused() {
    let Some(w) = landlock_world() else {
        return;
    };
    assert_eq!(w.probe(&["fanotify_init"]), EPERM);
    if is_root() {
        assert_eq!(probe_unsandboxed(&["fanotify_init"]), 0, "control as root");
    }
}

#[test]
fn k2_other_terminals_and_devices_are_out_of_reach() {
    let Some(w) = landlock_world() else {
        return;
    };
    // Devices never granted: a virtual console, the kernel log, a block device.
    let mut devices = vec!["/dev/tty1".to_string(), "/dev/kmsg".to_string()];
    if let Some(b) = std::fs::read_dir("/sys/block").ok().and_then(|d| {
        d.filter_map(|e| e.ok())
            .map(|e| format!("/dev/{}", e.file_name().to_string_lossy()))
            .find(|p| std::path::Path::new(p).exists())
    }) {
        devices.push(b);
    }
    for d in &devices {
        if !std::path::Path::new(d).exists() {
            continue;
        }
        assert_eq!(w.probe(&["open-tty", d]), EACCES, "{d}");
        if is_root() {
            assert_eq!(probe_unsandboxed(&["open-tty", d]), 0, "control {d}");
        }
    }
    // The harmless devices stay usable.
    for d in ["/dev/null", "/dev/zero", "/dev/full", "/dev/urandom"] {
        assert_eq!(w.probe(&["open-read", d]), 0, "{d}");
    }
    assert_eq!(w.probe(&["open-tty", "/dev/ptmx"]), 0, "/dev/ptmx");

    // Another terminal of the same user: with the pty broker on (what the
    // supervisor sets), only the terminal the command was given is granted.
    let (_m1, given, given_path) = other_terminal(0);
    let (_m2, _other, other_path) = other_terminal(0);
    let mut spec = driver_spec(&w, "off");
    spec["sandbox"]["pty_broker"] = json!(true);
    let spec_path = w.base.join("spec-pty.json");
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(spec_driver())
            .arg("--spec")
            .arg(&spec_path)
            .arg("--supervise")
            .arg("--cwd")
            .arg(&w.work)
            .arg("--")
            .arg(probe())
            .args(args)
            .env("HOME", &w.home)
            .stdin(given.try_clone().unwrap())
            .output()
            .unwrap();
        code(&out)
    };
    let other = other_path.display().to_string();
    let mine = given_path.display().to_string();
    assert_eq!(run(&["open-tty", &other]), EACCES, "another terminal");
    assert_eq!(run(&["open-tty", &mine]), 0, "the terminal it was given");
    assert_eq!(run(&["open-tty", "/dev/tty1"]), EACCES);
    assert_eq!(probe_unsandboxed(&["open-tty", &other]), 0, "control");
    let _ = given.as_raw_fd();
}

#[test]
fn k5_terminal_takeover_is_refused() {
    let Some(w) = landlock_world() else {
        return;
    };
    let (_m, slave, path) = other_terminal(0);
    // The victim session: the pty is its controlling terminal.
    let victim = Victim(
        Command::new("setsid")
            .args(["-c", "sleep", "60"])
            .stdin(slave.try_clone().unwrap())
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    let with_tty = |args: &[&str]| {
        let mut argv: Vec<String> = vec![probe().display().to_string()];
        argv.extend(args.iter().map(|a| a.to_string()));
        let out = w
            .command(&argv)
            .stdin(slave.try_clone().unwrap())
            .output()
            .unwrap();
        code(&out)
    };
    let tiocsetd = "0x5423";
    assert_eq!(with_tty(&["steal-tty", "0"]), EPERM, "TIOCSCTTY steal");
    assert_eq!(
        with_tty(&["ioctl-path", &hidden("/proc/self/fd/0"), tiocsetd, "0"]),
        EPERM,
        "TIOCSETD"
    );
    assert_eq!(with_tty(&["vhangup"]), EPERM, "vhangup");
    // Ordinary terminal ioctls on the given terminal still work (TCGETS).
    assert_eq!(
        with_tty(&["ioctl-path", &hidden("/proc/self/fd/0"), "0x5401", "0"]),
        0,
        "tcgetattr"
    );
    // Controls outside safe-exec: setting the same line discipline works,
    // and root can steal the victim's terminal.
    let out = Command::new(probe())
        .args(["ioctl-path", &path.display().to_string(), tiocsetd, "0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "control TIOCSETD N_TTY");
    if is_root() {
        let out = Command::new(probe())
            .args(["steal-tty", "0"])
            .stdin(slave.try_clone().unwrap())
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "control: root steals it outside");
    }
    drop(victim);
}

#[test]
fn k6_machine_settings_are_refused() {
    let Some(w) = landlock_world() else {
        return;
    };
    for op in [
        "settimeofday-null",
        "adjtimex-read",
        "syslog-size",
        "chroot-dot",
        "sethostname-same",
        "acct-null",
    ] {
        assert_eq!(w.probe(&[op]), EPERM, "{op}");
    }
    if is_root() {
        // Harmless forms that succeed outside (no change is made).
        for op in [
            "settimeofday-null",
            "adjtimex-read",
            "syslog-size",
            "chroot-dot",
            "sethostname-same",
        ] {
            assert_eq!(probe_unsandboxed(&[op]), 0, "control {op}");
        }
    }
}

#[test]
fn k7_proc_of_processes_outside_is_unreadable_as_root() {
    let Some(w) = landlock_world() else {
        return;
    };
    let v = Victim::sleep();
    let p = v.pid();
    for name in ["environ", "maps"] {
        assert_eq!(
            supervised_probe(&w, &["ppid-file", name]),
            EACCES,
            "safe-exec's {name}"
        );
        assert_eq!(w.probe(&["pid-file", &p, name]), EACCES, "victim's {name}");
        assert_eq!(
            probe_unsandboxed(&["pid-file", &p, name]),
            0,
            "control {name}"
        );
    }
    assert_eq!(supervised_probe(&w, &["ppid-fd-link"]), EACCES);
    assert_eq!(probe_unsandboxed(&["ppid-fd-link"]), 0, "control");
}

#[test]
fn k7_as_an_unprivileged_user_too() {
    if !require_landlock() || !is_root() {
        return;
    }
    let w = World::new();
    let u = AsUser::new(&w);
    for name in ["environ", "maps"] {
        assert_eq!(
            u.sandboxed_supervised(&w, &["ppid-file", name]),
            EACCES,
            "{name}"
        );
    }
    // safe-exec is non-dumpable: its fd directory is root's, not listable.
    assert_eq!(
        u.sandboxed_supervised(&w, &["ppid-fd-list"]),
        EACCES,
        "fd listing"
    );
    assert_eq!(u.under_user_shell(&w, &["ppid-fd-list"]), 0, "control");
    assert_eq!(
        u.under_user_shell(&w, &["ppid-file", "environ"]),
        0,
        "control"
    );
}

#[test]
fn k7_safe_exec_scrubs_its_own_environment_memory() {
    let Some(w) = landlock_world() else {
        return;
    };
    let canary = "canary-5f1e2d3c";
    let mut child = w
        .supervised(&["sleep", "2"])
        .env("DEPLOY_TOKEN", canary)
        .env("PLAIN_VALUE", "kept-value")
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let environ = std::fs::read(format!("/proc/{}/environ", child.id())).unwrap();
    let text = String::from_utf8_lossy(&environ);
    child.wait().unwrap();
    assert!(text.contains("DEPLOY_TOKEN="), "the name stays: {text}");
    assert!(!text.contains(canary), "the value is gone");
    assert!(
        text.contains("kept-value"),
        "positive control: kept variables stay"
    );
}

#[test]
fn root_keeps_no_capabilities_unless_the_profile_lists_them() {
    let Some(mut w) = landlock_world() else {
        return;
    };
    let caps = |w: &World| {
        let out = w.run(&[probe().display().to_string(), "print-caps".into()]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        stdout(&out)
    };
    let none = caps(&w);
    for set in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
        assert!(
            none.contains(&format!("{set}:\t0000000000000000")),
            "{set}: {none}"
        );
    }
    if is_root() {
        assert!(none.contains("CapBnd:\t0000000000000000"), "{none}");
        let out = Command::new(probe()).arg("print-caps").output().unwrap();
        assert!(
            !stdout(&out).contains("CapEff:\t0000000000000000"),
            "control"
        );
        w.set("capabilities", json!(["CAP_NET_BIND_SERVICE"]));
        let kept = caps(&w);
        for set in ["CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            assert!(
                kept.contains(&format!("{set}:\t0000000000000400")),
                "{set}: {kept}"
            );
        }
    }
    w.set("capabilities", json!(["CAP_MAKE_COFFEE"]));
    let out = w.run(&["true"]);
    assert_eq!(code(&out), 125);
    assert!(stderr(&out).contains("CAP_MAKE_COFFEE"), "{}", stderr(&out));
}

#[test]
fn ordinary_work_still_runs_confined() {
    let Some(w) = landlock_world() else {
        return;
    };
    let out = w.bash(
        r#"set -e
printf '#!/bin/sh\necho hi\n' > tool.sh
chmod +x tool.sh
./tool.sh
git init -q repo && cd repo && git -c user.email=a@b -c user.name=t commit -q --allow-empty -m x && cd ..
script -qc true /dev/null
nice -n 5 true
taskset -c 0 true
ionice -c3 true
(ulimit -n 256)
prlimit --pid $$ --nofile >/dev/null
python3 -c 'import os, pty; pid, fd = pty.fork()
if pid == 0: os._exit(0)
os.waitpid(pid, 0)'
echo done"#,
    );
    assert_eq!(code(&out), 0, "{} {}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("hi") && stdout(&out).ends_with("done\n"));
}

#[test]
fn doctor_reports_each_mechanism_and_that_this_kernel_enforces_it() {
    let Some(w) = landlock_world() else {
        return;
    };
    let out = w.safe_exec().args(["doctor", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("doctor --json");
    let mechanisms = v["mechanisms"].as_array().expect("mechanisms").clone();
    let get = |name: &str| {
        mechanisms
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("doctor does not report {name}: {v}"))
            .clone()
    };
    // Tried in a forked child on this kernel: each must hold here.
    for name in [
        "seccomp.namespaces",
        "seccomp.pid_targets",
        "seccomp.sysv_ipc",
        "seccomp.fanotify",
        "seccomp.terminal",
        "seccomp.machine_settings",
        "capabilities",
        "landlock.filesystem",
        "landlock.devices",
        "landlock.ioctl_dev",
        "landlock.scopes",
        "non_dumpable",
    ] {
        assert_eq!(get(name)["enforced"], true, "{name}: {}", get(name));
    }
    // Reported honestly: the pty broker follows the supervisor, no ABI 9 on this kernel.
    assert!(get("pty_broker")["detail"].as_str().is_some());
    assert_eq!(
        get("landlock.resolve_unix")["enforced"],
        landlock_abi() >= 9
    );
    let text = w.safe_exec().arg("doctor").output().unwrap();
    assert!(
        stdout(&text).contains("seccomp.pid_targets"),
        "{}",
        stdout(&text)
    );
}

#[test]
fn k2_root_cannot_open_another_users_terminal_even_without_the_broker() {
    if !require_landlock() || !is_root() {
        return;
    }
    use std::io::BufRead;
    assert!(
        std::path::Path::new("/usr/bin/python3").exists(),
        "python3 needed"
    );
    // A terminal of another user (nobody), held open by its process.
    let mut holder = Victim(
        setpriv_test_user()
            .args([
                "/usr/bin/python3",
                "-c",
                "import os,time; m,s=os.openpty(); print(os.ttyname(s), flush=True); time.sleep(60)",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    std::io::BufReader::new(holder.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let tty = line.trim().to_string();
    assert!(tty.starts_with("/dev/pts/"), "{tty}");
    // The broker now runs with every supervised CLI run, so Landlock
    // refuses this too; without it (/dev/pts granted as a whole) the
    // command holds no CAP_DAC_OVERRIDE, so the terminal's mode applies.
    let w = World::new();
    assert_eq!(
        w.probe(&["open-tty", &tty]),
        EACCES,
        "root without capabilities"
    );
    assert_eq!(
        probe_unsandboxed(&["open-tty", &tty]),
        0,
        "control: root outside"
    );
}

/// The bounding set is dropped one `PR_CAPBSET_DROP` per capability, without
/// reading it first: a capability that is already absent must not make the
/// drop fail, and every other one must still go.
#[test]
fn root_drop_works_when_the_bounding_set_is_already_partly_empty() {
    if !is_root() {
        return;
    }
    assert!(have("setpriv"), "setpriv (util-linux) is needed");
    let Some(w) = landlock_world() else {
        return;
    };
    let inner = w.command(&[probe().display().to_string(), "print-caps".to_string()]);
    let mut cmd = Command::new("setpriv");
    cmd.args(["--bounding-set", "-sys_admin,-net_raw,-sys_module", "--"])
        .arg(inner.get_program())
        .args(inner.get_args())
        .env_clear();
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    if let Some(d) = inner.get_current_dir() {
        cmd.current_dir(d);
    }
    // Positive control: the same setpriv really leaves a partial bounding set.
    let ctl = Command::new("setpriv")
        .args(["--bounding-set", "-sys_admin,-net_raw,-sys_module", "--"])
        .arg(probe())
        .arg("print-caps")
        .output()
        .unwrap();
    let ctl = stdout(&ctl);
    assert!(!ctl.contains("CapBnd:\t0000000000000000"), "control: {ctl}");
    assert!(!ctl.contains("CapBnd:\t000001ffffffffff"), "control: {ctl}");
    let out = cmd.output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let caps = stdout(&out);
    for set in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert!(
            caps.contains(&format!("{set}:\t0000000000000000")),
            "{set}: {caps}"
        );
    }
}
