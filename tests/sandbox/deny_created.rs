//! A `deny_read` path that does not exist when the command starts stays
//! unreadable when it is created during the run (`cargo login`, `gh auth
//! login`, an agent refreshing its token), whatever its spelling: a file
//! missing in an existing directory, a missing directory, two missing
//! levels, a directory missing in HOME (carved anyway), the state directory (behind a dangling symlink as root, in a
//! directory the user cannot create it in as the user). Before, such a
//! path was dropped from the plan and its existing parent granted whole.
//!
//! The command waits on a fifo in its working directory; the test opens
//! the fifo's other end (which returns once the sandboxed command holds its
//! end: the sandbox is in place), creates the files outside the sandbox,
//! then lets the command read them. No timing is guessed.
//!
//! Positive controls beside each: the existing entries of the carved
//! directories stay readable; a new non-secret entry of a carved directory
//! is not (what the product promises: entries created in a carved
//! directory during the run are covered by no rule); the same secret is
//! read when the profile does not deny it; the user reads every file
//! outside the sandbox. Inside a writable root a missing deny path is not
//! carved (the command could not create files there): it is reported
//! `unguarded`, and what that means is asserted too.
use crate::common::sandbox as common;
use common::*;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// The content of every file the test creates during the run: it must
/// never appear in the sandboxed command's output when denied.
const SECRET: &str = "SECRET-CREATED-MID-RUN";

/// What the command's reads found: each path's errno (0: read).
type Reads = Vec<(PathBuf, i32)>;

/// A HOME that looks lived in: `~/.cargo` without credentials, `~/.config`
/// without `gh`, `~/.local` without `share`.
fn furnish(home: &Path) {
    for d in [".cargo/registry", ".config/nvim", ".local"] {
        std::fs::create_dir_all(home.join(d)).expect("mkdir");
    }
    std::fs::write(home.join(".cargo/env"), "export PATH\n").expect("write");
    std::fs::write(home.join(".config/nvim/init.lua"), "-- nvim\n").expect("write");
}

/// The files created mid-run (their missing directories with them).
fn created(w: &World) -> Vec<PathBuf> {
    [
        ".cargo/credentials.toml",
        ".config/gh/hosts.yml",
        ".local/share/keyrings/login.keyring",
        ".cargo/notes.txt",
        ".gnupg/pubring.kbx",
    ]
    .iter()
    .map(|r| w.home.join(r))
    .collect()
}

/// Writes `paths` (and their missing directories) as root, readable by
/// anyone, so that only Landlock can refuse them.
fn create_all(paths: &[PathBuf]) {
    for p in paths {
        let dir = p.parent().expect("parent");
        std::fs::create_dir_all(dir).expect("mkdir");
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::write(p, format!("{SECRET}\n")).expect("write");
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    }
}

/// A script in `w.work` that waits on the fifo `go` there, then reads each
/// argument with the probe and prints `rc=ERRNO` after each.
fn waiting_script(w: &World, probe: &Path) -> String {
    let name = format!("wait-{}.sh", std::process::id());
    w.script(
        &name,
        &format!(
            "read -r _ < go\nfor p in \"$@\"; do {} read-print \"$p\"; echo \"rc=$?\"; done",
            probe.display()
        ),
    )
}

/// Starts `cmd` (safe-exec running [`waiting_script`] with `reads` as
/// arguments), waits until the sandboxed script holds the fifo `go`
/// (`open(O_WRONLY | O_NONBLOCK)` fails with `ENXIO` until then), runs
/// `during`, lets the script go and returns its reads and whole output.
fn mid_run(
    w: &World,
    mut cmd: Command,
    reads: &[PathBuf],
    during: impl FnOnce(),
) -> (Reads, String) {
    let fifo = w.work.join("go");
    let _ = std::fs::remove_file(&fifo);
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).expect("mkfifo");
    cmd.args(reads.iter().map(|p| hidden(&p.display().to_string())))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn safe-exec");
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut go = loop {
        use std::os::unix::fs::OpenOptionsExt;
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
        {
            Ok(f) => break f,
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
            Err(e) => panic!("open the fifo: {e}"),
        }
        if let Some(status) = child.try_wait().expect("try_wait") {
            let out = child.wait_with_output().expect("output");
            panic!(
                "safe-exec ended ({status}) before the command waited: {}{}",
                stdout(&out),
                stderr(&out)
            );
        }
        assert!(
            Instant::now() < deadline,
            "the command never opened the fifo"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    during();
    go.write_all(b"go\n").expect("write the fifo");
    drop(go);
    let out = child.wait_with_output().expect("wait for safe-exec");
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(code(&out), 0, "{text}");
    let rcs: Vec<i32> = stdout(&out)
        .lines()
        .filter_map(|l| l.strip_prefix("rc="))
        .map(|n| n.parse().expect("rc"))
        .collect();
    assert_eq!(rcs.len(), reads.len(), "{text}");
    (reads.iter().cloned().zip(rcs).collect(), text)
}

/// `safe-exec --profile P -- script` as the caller (root).
fn as_caller(w: &World, script: &str) -> Command {
    let mut cmd = w.safe_exec();
    cmd.arg("--profile")
        .arg(w.profile_file())
        .arg("--")
        .arg(script);
    cmd
}

/// `safe-exec --profile P -- script` as the unprivileged user, with the
/// profile as it is now.
fn as_user(w: &World, u: &AsUser, script: &str) -> Command {
    let profile = w.profile_file();
    std::fs::set_permissions(&profile, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let mut cmd = u.base(w);
    cmd.env("SAFE_EXEC_STATE_DIR", &w.dirs.state)
        .arg(&u.bin)
        .arg("--profile")
        .arg(profile)
        .arg("--")
        .arg(script);
    cmd
}

/// The state directory for the run is missing and cannot be created by
/// safe-exec: as root a dangling symlink to `later/state` (`later`
/// exists), as the user a path in a root-owned directory. Returns where
/// the directory really appears and the secret created in it.
fn missing_state(w: &mut World, user: bool) -> (PathBuf, PathBuf) {
    let later = w.base.join("later");
    std::fs::create_dir_all(&later).expect("mkdir");
    let real = later.join("state");
    if user {
        w.dirs.state = real.clone();
    } else {
        let links = w.base.join("links");
        std::fs::create_dir_all(&links).expect("mkdir");
        std::os::unix::fs::symlink(&real, links.join("state")).expect("symlink");
        w.dirs.state = links.join("state");
    }
    (real.clone(), real.join("approval.key"))
}

fn denied_when_created_mid_run(user: bool) {
    let Some(mut w) = landlock_world() else {
        return;
    };
    if user {
        assert!(
            is_root(),
            "the unprivileged case runs the command as nobody"
        );
        assert!(have("setpriv"), "setpriv is needed");
    }
    furnish(&w.home);
    let (state_real, state_secret) = missing_state(&mut w, user);
    let u = user.then(|| AsUser::new(&w));
    let probe_path = u
        .as_ref()
        .map_or_else(|| probe().to_path_buf(), |u| u.probe.clone());
    let script = waiting_script(&w, &probe_path);
    let command = |w: &World| match &u {
        Some(u) => as_user(w, u, &script),
        None => as_caller(w, &script),
    };
    let mut files = created(&w);
    files.push(state_secret.clone());
    let existing = [
        w.home.join(".cargo/env"),
        w.home.join(".config/nvim/init.lua"),
    ];
    let mut reads = files.clone();
    reads.extend(existing.iter().cloned());

    // check --json before the run: what is enforced for each missing path.
    let mut check = w.safe_exec();
    if let Some(u) = &u {
        check = u.base(&w);
        check.env("SAFE_EXEC_STATE_DIR", &w.dirs.state).arg(&u.bin);
    }
    let out = check
        .args(["check", "--json", "--profile"])
        .arg(w.profile_file())
        .args(["--", "/bin/true"])
        .output()
        .expect("check");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("check --json");
    // The run: every file created mid-run in a carved directory is denied,
    // the existing entries there are read.
    let (got, text) = mid_run(&w, command(&w), &reads, || create_all(&files));
    let mut want: Reads = files.iter().map(|p| (p.clone(), EACCES)).collect();
    want.extend(existing.iter().map(|p| (p.clone(), 0)));
    assert_eq!(got, want, "{text}");
    assert!(!text.contains(SECRET), "a secret was printed: {text}");
    // What check --json said before the run, now that the run showed it.
    let states = v["sandbox"]["landlock"]["deny_read"]
        .as_array()
        .expect("deny_read states")
        .clone();
    let state_of = |p: &Path| {
        states
            .iter()
            .find(|s| s["path"] == p.display().to_string())
            .unwrap_or_else(|| panic!("{} not in {states:?}", p.display()))
            .clone()
    };
    for (path, carved) in [
        (
            w.home.join(".cargo/credentials.toml"),
            w.home.join(".cargo"),
        ),
        (w.home.join(".config/gh"), w.home.join(".config")),
        (w.home.join(".local/share/keyrings"), w.home.join(".local")),
        // Its directory is HOME, carved for `~/.ssh` anyway.
        (w.home.join(".gnupg"), w.home.clone()),
        (w.dirs.state.clone(), w.base.join("later")),
    ] {
        let s = state_of(&path);
        assert_eq!(s["state"], "absent", "{s}");
        assert_eq!(s["carved"], json!(carved), "{s}");
    }
    assert_eq!(state_of(&w.home.join(".ssh"))["state"], "denied");
    let rules = v["sandbox"]["landlock"]["rules"]
        .as_array()
        .expect("rules")
        .clone();
    let rights_of = |p: &Path| {
        rules
            .iter()
            .find(|r| r["path"] == p.display().to_string())
            .map(|r| r["access"].clone())
    };
    for carved in [".cargo", ".config", ".local"] {
        assert_eq!(
            rights_of(&w.home.join(carved)),
            Some(json!(["read_dir"])),
            "{carved}"
        );
    }
    assert_eq!(rights_of(&w.base.join("later")), Some(json!(["read_dir"])));

    // The user can read all of them outside the sandbox.
    if let Some(u) = &u {
        for p in &reads {
            assert_eq!(
                u.unsandboxed(&w, &["open-read", &p.display().to_string()]),
                0,
                "{}",
                p.display()
            );
        }
    }

    // Positive control: the same flow, with the secrets not denied, reads
    // them (so the reads above were refused by the deny rules, and the
    // test does see a secret created mid-run).
    for p in &files {
        std::fs::remove_file(p).expect("rm");
    }
    for d in [".config/gh", ".local/share", ".gnupg"] {
        std::fs::remove_dir_all(w.home.join(d)).expect("rm -r");
    }
    std::fs::remove_dir_all(&state_real).expect("rm -r");
    w.set("deny_read", json!(["{home}/.ssh"]));
    let secrets = files[..3].to_vec();
    let (got, text) = mid_run(&w, command(&w), &secrets, || create_all(&secrets));
    let want: Reads = secrets.iter().map(|p| (p.clone(), 0)).collect();
    assert_eq!(got, want, "{text}");
    assert!(text.contains(SECRET), "{text}");
}

#[test]
fn secrets_created_mid_run_stay_denied() {
    denied_when_created_mid_run(false);
}

#[test]
fn secrets_created_mid_run_stay_denied_as_user() {
    denied_when_created_mid_run(true);
}

/// Inside a writable root a missing deny path is not carved (the root's
/// directories would lose the right to create files): it is reported
/// `unguarded`, the command still creates files there, and a file created
/// at that path during the run is readable.
#[test]
fn missing_deny_path_in_a_writable_root_is_reported_unguarded() {
    let Some(mut w) = landlock_world() else {
        return;
    };
    std::fs::create_dir_all(w.work.join("sub")).expect("mkdir");
    w.set(
        "deny_read",
        json!(["{home}/.ssh", "{cwd}/sub/token", "{cwd}/.env.local"]),
    );
    let out = w
        .safe_exec()
        .args(["check", "--json", "--profile"])
        .arg(w.profile_file())
        .args(["--", "/bin/true"])
        .output()
        .expect("check");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("check --json");
    let states = v["sandbox"]["landlock"]["deny_read"].clone();
    for (p, dir) in [
        ("sub/token", w.work.join("sub")),
        (".env.local", w.work.clone()),
    ] {
        let s = states
            .as_array()
            .expect("states")
            .iter()
            .find(|s| s["path"] == w.w(p))
            .expect("state")
            .clone();
        assert_eq!(s["state"], "unguarded", "{s}");
        assert_eq!(s["writable_root"], json!(w.work), "{s}");
        assert_eq!(s["carved"], json!(dir), "{s}");
    }
    let token = w.work.join("sub/token");
    assert_eq!(
        w.probe(&["create", &w.w("sub/new")]),
        0,
        "sub stays writable"
    );
    assert_eq!(
        w.probe(&["create", &w.w("new")]),
        0,
        "the cwd stays writable"
    );
    let script = waiting_script(&w, probe());
    let (got, text) = mid_run(
        &w,
        as_caller(&w, &script),
        std::slice::from_ref(&token),
        || {
            create_all(std::slice::from_ref(&token));
        },
    );
    assert_eq!(got, vec![(token.clone(), 0)], "{text}");
    // Once it exists it is carved out as before, at the cost documented
    // for a deny path in a writable root: its directories only get
    // `read_dir`, so new files cannot be created directly in them.
    let t = token.display().to_string();
    assert_eq!(w.probe(&["open-read", &t]), EACCES, "denied once it exists");
    assert_eq!(w.probe(&["create", &w.w("sub/newer")]), EACCES);
    assert_eq!(
        w.probe(&["open-write", &w.w("sub/new")]),
        0,
        "existing entries stay writable"
    );
}
