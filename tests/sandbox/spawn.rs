//! How a supervised command is started (`run::spawn::spawn`): a child made
//! with `clone(CLONE_VM | CLONE_VFORK)` on its own stack, which shares
//! safe-exec's memory until its `execve`. What that must not change, each
//! with its positive control beside it, as root and as the unprivileged
//! user (uid 65534 through `setpriv`):
//! - safe-exec stays non-dumpable while the command runs (the child sets
//!   `PR_SET_DUMPABLE` on the memory it shares so that the supervisor can
//!   take its listener; it is put back before the command runs);
//! - the command starts with the caller's signal mask and ignored signals,
//!   SIGPIPE at its default, as under `std::process::Command`;
//! - a command that cannot be executed is reported with the contract's
//!   exit code, and the child is reaped; a script without `#!` runs under
//!   `/bin/sh` (as `execvp` runs it);
//! - many runs in a row all start, get their sandbox and end (no hang in
//!   the hand-over of the listener);
//! - a library caller's runs leave no supervisor thread behind (the CLI's
//!   one run leaves its thread parked, the process exiting next).
use crate::common::sandbox as common;
use crate::common::world::hermetic;
use common::*;
use std::process::{Command, Output, Stdio};

/// Runs `safe-exec --profile P --timeout 60 -- argv` as the caller, or as
/// uid 65534 (`as_user`).
fn run(w: &World, user: Option<&AsUser>, argv: &[&str]) -> Output {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    match user {
        Some(u) => u.run_in(u.base(w), &argv, true),
        None => {
            let mut c = w.supervised(&argv);
            c.stdin(Stdio::null());
            c.output().expect("run safe-exec")
        }
    }
}

/// The worlds to test in: as the caller, and as root also as uid 65534.
fn each_identity(mut f: impl FnMut(&World, Option<&AsUser>)) {
    let Some(w) = landlock_world() else { return };
    f(&w, None);
    if is_root() {
        assert!(
            have("setpriv") || std::env::var("CI").as_deref() != Ok("true"),
            "setpriv is needed to test as an unprivileged user"
        );
        if !have("setpriv") {
            skip("setpriv missing: unprivileged half not run");
            return;
        }
        let w = World::new();
        let u = AsUser::new(&w);
        f(&w, Some(&u));
    }
}

/// The owner `/proc/<pid>/environ` shows: a non-dumpable process's files
/// belong to root, a dumpable one's to its user.
#[test]
fn safe_exec_stays_non_dumpable_while_the_command_runs() {
    each_identity(|w, user| {
        let s = w.script(
            "dumpable.sh",
            "stat -c %u /proc/$PPID/environ; stat -c %u /proc/self/environ; echo ppid-comm=$(cat /proc/$PPID/comm)",
        );
        let out = run(w, user, &[&s]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let text = stdout(&out);
        let lines: Vec<&str> = text.lines().collect();
        let me = user.map_or_else(|| nix::unistd::geteuid().as_raw(), |_| TEST_USER);
        // The parent is safe-exec itself (the command is its child).
        assert!(
            lines
                .get(2)
                .is_some_and(|l| l.starts_with("ppid-comm=") && l.contains("safe-exec")),
            "{text}"
        );
        // Positive control: the command itself is dumpable (execve resets
        // the flag), so its files are its user's.
        assert_eq!(
            lines.get(1).copied(),
            Some(me.to_string().as_str()),
            "{text}"
        );
        // safe-exec: root's, i.e. not dumpable. As root both are 0: only
        // the unprivileged run can tell, and it must say 0.
        assert_eq!(lines.first().copied(), Some("0"), "{text}");
    });
}

/// `SigBlk` and `SigIgn` of `/proc/self/status`, as hex masks.
fn masks(text: &str) -> (String, String) {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    (field("SigBlk:"), field("SigIgn:"))
}

#[test]
fn the_command_gets_the_callers_signal_mask_and_ignored_signals() {
    let Some(w) = landlock_world() else { return };
    // A caller (python) that blocks SIGUSR1 and ignores SIGUSR2 and
    // SIGPIPE, then runs `argv`; its own status first, as the control.
    let py = r#"
import os, signal, subprocess, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
signal.signal(signal.SIGUSR2, signal.SIG_IGN)
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, restore_signals=False)
sys.stdout.write(r.stdout.decode()); sys.stderr.write(r.stderr.decode())
sys.exit(r.returncode)
"#;
    assert!(have("python3"), "python3 is needed for this test");
    let grep = ["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"];
    let control = Command::new("python3")
        .arg("-c")
        .arg(py)
        .args(grep)
        .output()
        .expect("control");
    assert_eq!(code(&control), 0, "{}", stderr(&control));
    let (blk, ign) = masks(&stdout(&control));
    // SIGUSR1 is signal 10 (bit 9), SIGUSR2 12 (bit 11), SIGPIPE 13 (bit
    // 12); python ignores a few more of its own (SIGXFSZ...).
    let hex = |s: &str| u64::from_str_radix(s, 16).expect("hex mask");
    let (usr1, usr2, pipe) = (1u64 << 9, 1u64 << 11, 1u64 << 12);
    assert_eq!(hex(&blk), usr1, "control: {}", stdout(&control));
    assert_eq!(
        hex(&ign) & (usr2 | pipe),
        usr2 | pipe,
        "control: {}",
        stdout(&control)
    );
    let mut cmd = Command::new("python3");
    cmd.arg("-c").arg(py).arg(bin());
    let inner = w.supervised(&grep);
    // The world's environment and arguments, through the python caller.
    cmd.args(inner.get_args())
        .env_clear()
        .envs(inner.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .current_dir(&w.work)
        .stdin(Stdio::null());
    let out = cmd.output().expect("run safe-exec");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (blk2, ign2) = masks(&stdout(&out));
    // The caller's mask and its ignored signals, but SIGPIPE back at its
    // default (the Rust runtime ignores it in safe-exec itself; the command
    // gets it as `std::process::Command` gives it).
    // The standard signals (1-31): glibc's own real-time ones (32, 33) may
    // come ignored from whatever started this test, and safe-exec's glibc
    // installs a handler for 33 (so the command gets it at its default).
    let std_sigs = (1u64 << 31) - 1;
    assert_eq!(hex(&blk2), usr1, "{}", stdout(&out));
    assert_eq!(
        hex(&ign2) & std_sigs,
        hex(&ign) & std_sigs & !pipe,
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_program_that_cannot_be_executed_gets_the_contracts_exit_code() {
    each_identity(|w, user| {
        use std::os::unix::fs::PermissionsExt;
        let script = |name: &str, body: &str, mode: u32| {
            let p = w.work.join(name);
            std::fs::write(&p, body).expect("write");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).expect("chmod");
            format!("./{name}")
        };
        // Positive control: an executable script runs and its code comes back.
        let ok = script("ok.sh", "#!/bin/sh\nexit 7\n", 0o755);
        let out = run(w, user, &[&ok]);
        assert_eq!(code(&out), 7, "{}", stderr(&out));
        // Not executable: 126.
        let noexec = script("noexec.sh", "#!/bin/sh\nexit 0\n", 0o644);
        let out = run(w, user, &[&noexec]);
        assert_eq!(code(&out), 126, "{}", stderr(&out));
        // Its interpreter is missing (execve says ENOENT): 127.
        let badint = script("badint.sh", "#!/nonexistent/interpreter\nexit 0\n", 0o755);
        let out = run(w, user, &[&badint]);
        assert_eq!(code(&out), 127, "{}", stderr(&out));
        // A directory: 126.
        std::fs::create_dir_all(w.work.join("adir")).expect("mkdir");
        let out = run(w, user, &["./adir"]);
        assert_eq!(code(&out), 126, "{}", stderr(&out));
        // No `#!` (execve says ENOEXEC): run by /bin/sh with its
        // arguments, as `execvp` (and so `std::process::Command`) does.
        let bare = script("bare.sh", "echo bare-$1; exit 5\n", 0o755);
        let out = run(w, user, &[&bare, "arg"]);
        assert_eq!(
            (code(&out), stdout(&out)),
            (5, "bare-arg\n".to_string()),
            "{}",
            stderr(&out)
        );
    });
}

#[test]
fn many_supervised_runs_in_a_row_all_start_and_end() {
    each_identity(|w, user| {
        let s = w.script("n.sh", "echo run-$1; exit $(( $1 % 5 ))");
        for i in 0..25 {
            let out = run(w, user, &[&s, &i.to_string()]);
            assert_eq!(code(&out), i % 5, "run {i}: {}", stderr(&out));
            assert_eq!(stdout(&out), format!("run-{i}\n"), "run {i}");
        }
    });
}

/// Runs `sh -c 'echo run >> runs.txt'` through the `sandbox_exec` driver
/// (supervisor on), `repeat` times in one process when given, and returns
/// the driver's report.
fn driver_runs(w: &World, repeat: Option<u32>) -> serde_json::Value {
    let spec = driver_spec(w, "off");
    let n = repeat.unwrap_or(0);
    let spec_path = w.base.join(format!("spec-repeat-{n}.json"));
    std::fs::write(&spec_path, spec.to_string()).expect("write spec");
    let report = w.base.join(format!("report-repeat-{n}.json"));
    let mut c = hermetic(spec_driver(), &w.dirs);
    c.arg("--spec").arg(&spec_path).arg("--report").arg(&report);
    if let Some(n) = repeat {
        c.args(["--repeat", &n.to_string()]);
    }
    let out = c
        .arg("--cwd")
        .arg(&w.work)
        .args(["--", "/bin/sh", "-c", "echo run >> runs.txt"])
        .output()
        .expect("run sandbox_exec");
    assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&std::fs::read(&report).expect("report")).expect("report JSON")
}

/// A library caller that runs many supervised commands in one process
/// (`ExecPlan::ends_process` false) gets each run's supervisor thread
/// joined: none is left behind, however many runs. The CLI's plan (true)
/// leaves its one thread parked, since the process exits next: the
/// control that the count sees a parked thread at all.
#[test]
fn a_library_caller_running_many_commands_keeps_no_supervisor_thread() {
    let Some(w) = landlock_world() else { return };
    let runs = w.work.join("runs.txt");
    let r = driver_runs(&w, Some(6));
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["threads"], 1, "only the main thread is left: {r}");
    assert_eq!(
        std::fs::read_to_string(&runs).expect("runs.txt"),
        "run\n".repeat(6),
        "each of the six runs ran"
    );
    // Control: one run as the CLI makes it, its thread parked, not joined.
    std::fs::remove_file(&runs).expect("rm runs.txt");
    let r = driver_runs(&w, None);
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(
        r["threads"], 2,
        "the main thread and the parked supervisor: {r}"
    );
    assert_eq!(std::fs::read_to_string(&runs).expect("runs.txt"), "run\n");
}
