//! Confirmation on a terminal: `script` gives safe-exec a pseudo-terminal,
//! and the test types the answer. Each level (y, yes, program name) is
//! checked with a positive control and a refusal.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::common::world::{Dirs, hermetic, need_tool};

struct Env {
    _dir: tempfile::TempDir,
    root: PathBuf,
    cwd: PathBuf,
}

fn env(profile: &str) -> Env {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_path_buf();
    let cwd = root.join("project");
    for d in ["home", "project", "tmp", "state"] {
        std::fs::create_dir_all(root.join(d)).expect("mkdir");
    }
    std::fs::write(root.join("profile.toml"), profile).expect("profile");
    Env {
        _dir: dir,
        root,
        cwd,
    }
}

/// `script` (bsdutils) gives safe-exec its terminal; missing, the test fails.
fn have_script() -> bool {
    need_tool("script", "bsdutils");
    true
}

fn dirs(e: &Env) -> Dirs {
    Dirs {
        base: e.root.clone(),
        home: e.root.join("home"),
        cwd: e.cwd.clone(),
        tmp: e.root.join("tmp"),
        state: e.root.join("state"),
        config: e.root.join("home/.config"),
        system_config: e.root.join("none.toml"),
    }
}

/// Runs `safe-exec ARGS` on a pseudo-terminal, typing `answer`.
fn on_tty(e: &Env, args: &str, answer: Option<&str>) -> Output {
    let bin = env!("CARGO_BIN_EXE_safe-exec");
    let cmd = format!(
        "{bin} --profile {} {args}; echo \"exit=$?\"",
        e.root.join("profile.toml").display()
    );
    let mut child = hermetic("script", &dirs(e))
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn script");
    let mut stdin = child.stdin.take().expect("stdin");
    if let Some(a) = answer {
        std::thread::sleep(Duration::from_millis(700));
        let _ = stdin.write_all(format!("{a}\n").as_bytes());
    }
    std::thread::sleep(Duration::from_millis(300));
    let out = child.wait_with_output().expect("wait");
    drop(stdin);
    out
}

/// A project executable: risk `write`, so under mode `safe` running it asks.
fn write_tool(e: &Env) {
    let tool = e.cwd.join("tool.sh");
    std::fs::write(&tool, "#!/bin/sh\necho ran-it\n").expect("write");
    Command::new("chmod")
        .arg("+x")
        .arg(&tool)
        .status()
        .expect("chmod");
}

const BASE: &str = "extends = \"default\"\n[confirmation]\ntimeout_seconds = 5\n";
// Mode `safe`: a confined project executable (risk `write`) asks.
const SAFE_MODE: &str = "[policy]\nmode = \"safe\"\n";

#[test]
fn standard_confirmation_accepts_y_and_refuses_anything_else() {
    have_script();
    let e = env(&format!("{BASE}{SAFE_MODE}"));
    // A project executable runs confined with risk `write`: above mode `safe`, it asks.
    write_tool(&e);
    let out = on_tty(&e, "-- ./tool.sh", Some("y"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Type `y`"), "{text}");
    assert!(text.contains("ran-it") && text.contains("exit=0"), "{text}");
    let out = on_tty(&e, "-- ./tool.sh", Some("n"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("ran-it") && text.contains("exit=126") && text.contains("confirmation"),
        "{text}"
    );
}

#[test]
fn strong_confirmation_needs_yes() {
    have_script();
    let e = env(&format!(
        "{BASE}[policy]\nallow_dangerous = true\nmode = \"write\"\n"
    ));
    // `git branch -D` is dangerous: with allow_dangerous it asks at the
    // strong level.
    let out = on_tty(&e, "-c 'git branch -D nothing-here'", Some("y"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Type `yes`"), "{text}");
    assert!(
        text.contains("exit=126"),
        "`y` is not enough for strong confirmation: {text}"
    );
}

#[test]
fn very_strong_confirmation_needs_the_program_name() {
    have_script();
    let e = env(&format!(
        "{BASE}[commands.mytool]\nsummary = \"test tool\"\nrisk = \"safe\"\nmaturity = \"experimental\"\noperands = [\"literal*\"]\nexamples = {{ deny = [\"mytool x\"] }}\n"
    ));
    let bin_dir = e.root.join("bin");
    std::fs::create_dir_all(&bin_dir).expect("mkdir");
    let tool = bin_dir.join("mytool");
    std::fs::write(&tool, "#!/bin/sh\necho very-strong-ran\n").expect("write");
    Command::new("chmod")
        .arg("+x")
        .arg(&tool)
        .status()
        .expect("chmod");
    let args = format!("-- {} x", tool.display());
    let out = on_tty(&e, &args, Some("yes"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Type `mytool`"), "{text}");
    assert!(
        text.contains("exit=126") && !text.contains("very-strong-ran"),
        "{text}"
    );
    let out = on_tty(&e, &args, Some("mytool"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("very-strong-ran") && text.contains("exit=0"),
        "{text}"
    );
}

#[test]
fn no_answer_in_time_is_a_refusal() {
    have_script();
    let e = env(&format!(
        "extends = \"default\"\n[confirmation]\ntimeout_seconds = 1\n{SAFE_MODE}"
    ));
    write_tool(&e);
    let out = on_tty(&e, "-- ./tool.sh", None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("exit=126") && text.contains("nobody answered") && !text.contains("ran-it"),
        "{text}"
    );
}

#[test]
fn without_a_terminal_an_ask_is_a_denial_naming_confirmation() {
    let e = env(&format!("{BASE}{SAFE_MODE}"));
    write_tool(&e);
    let out = Command::new(env!("CARGO_BIN_EXE_safe-exec"))
        .args([
            "--profile",
            e.root.join("profile.toml").to_str().expect("utf8"),
            "--",
            "./tool.sh",
        ])
        .current_dir(&e.cwd)
        .env("HOME", e.root.join("home"))
        // A `{tmp}` apart from HOME: `/tmp` holding HOME is no writable
        // root, and the warning saying so would come first.
        .env("TMPDIR", e.root.join("tmp"))
        .env("SAFE_EXEC_STATE_DIR", e.root.join("state"))
        .env("SAFE_EXEC_SYSTEM_CONFIG", e.root.join("none.toml"))
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(126));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("safe-exec: denied:") && err.contains("confirmation"),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ran-it"));
}
