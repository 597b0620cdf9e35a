//! The audit log is on in every built-in profile: a fresh install records
//! every decision and result under `$XDG_STATE_HOME/safe-exec/`, and
//! `safe-exec log` shows them from the first command.

use crate::common::world::World;

fn out(c: &mut std::process::Command) -> (i32, String, String) {
    let o = c.output().expect("run safe-exec");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn every_builtin_profile_audits() {
    for name in safe_exec::profile::builtin_names() {
        let p = safe_exec::profile::load(name).expect("built-in profile");
        let a = &p.doc.audit;
        assert!(a.enabled, "profile {name}: audit off");
        assert_eq!(a.file, "{state}/audit.jsonl", "profile {name}");
    }
}

#[test]
fn first_command_is_in_the_log_under_xdg_state_home() {
    let w = World::new();
    let xdg_state = w.dirs.home.join(".local/state");
    let log = xdg_state.join("safe-exec/audit.jsonl");
    // No SAFE_EXEC_STATE_DIR: the XDG location is the one a user gets.
    let se = || {
        let mut c = w.safe_exec();
        c.env_remove("SAFE_EXEC_STATE_DIR")
            .env("XDG_STATE_HOME", &xdg_state);
        c
    };
    let (code, stdout, _) = out(se().arg("log"));
    assert_eq!(code, 0);
    assert!(stdout.contains("no audit records yet"), "{stdout}");
    assert!(!log.exists());

    let (code, stdout, stderr) = out(se().args(["--", "echo", "first-command"]));
    assert_eq!((code, stdout.as_str()), (0, "first-command\n"), "{stderr}");
    assert_eq!(stderr, "", "nothing on stderr for an audited run");
    let (code, _, _) = out(se().args(["-c", "rm -rf ~"]));
    assert_eq!(code, 126, "positive control: a refusal");

    let text = std::fs::read_to_string(&log).expect("the audit log exists");
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let kinds: Vec<(&str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap_or(""),
                r["decision"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [("decision", "allow"), ("result", ""), ("decision", "deny")],
        "{text}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&log).expect("log").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let (code, stdout, _) = out(se().arg("log"));
    assert_eq!(code, 0);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("first-command") && l.contains("ALLOW")),
        "{stdout}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("rm -rf ~") && l.contains("DENY")),
        "{stdout}"
    );
}

#[test]
fn audit_off_in_a_profile_says_so_in_log() {
    let w = World::new();
    let p = w.dirs.base.join("quiet.toml");
    std::fs::write(&p, "extends = \"default\"\n[audit]\nenabled = false\n").expect("profile");
    let (code, _, _) = out(w.safe_exec().arg("--profile").arg(&p).args(["--", "true"]));
    assert_eq!(code, 0);
    assert!(!w.dirs.state.join("audit.jsonl").exists());
    let (code, stdout, _) = out(w.safe_exec().args(["log", "--profile"]).arg(&p));
    assert_eq!(code, 0);
    assert!(stdout.contains("turns the audit log off"), "{stdout}");
}

#[test]
fn unwritable_state_dir_warns_and_runs() {
    // A read-only home (container, CI): the built-in default still runs
    // commands, and says the log could not record them.
    let w = World::new();
    let not_a_dir = w.dirs.base.join("state-is-a-file");
    std::fs::write(&not_a_dir, "").expect("file");
    let marker = w.dirs.cwd.join("ran");
    let (code, _, stderr) = out(w
        .safe_exec()
        .env("SAFE_EXEC_STATE_DIR", &not_a_dir)
        .args(["--", "touch"])
        .arg(&marker));
    assert_eq!(code, 0, "{stderr}");
    assert!(marker.exists());
    assert!(stderr.contains("safe-exec: warning: audit log"), "{stderr}");
}
