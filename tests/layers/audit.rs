//! The audit log: record layout, redaction, unwritable sinks (`fail` and
//! `warn`), the syslog datagram sink and `safe-exec log`.

use crate::layers_support;

use std::os::unix::net::UnixDatagram;
use std::time::Duration;

use layers_support::*;
use serde_json::Value;

#[test]
fn decision_and_result_records() {
    let env = Env::new();
    env.profile("[audit]\nenabled = true");
    let o = env.run(&[
        "--session",
        "s1",
        "--agent",
        "codex",
        "-c",
        "echo hi; exit 3",
    ]);
    assert_eq!(code(&o), 3);
    assert_eq!(code(&env.run(&["--session", "s1", "-c", "rm -rf /"])), 126);
    let a = env.audit();
    assert_eq!(a.len(), 3, "{a:?}");
    let (d, r, denied) = (&a[0], &a[1], &a[2]);
    assert_eq!(d["kind"], "decision");
    assert_eq!(r["kind"], "result");
    assert_eq!(d["id"], r["id"]);
    for k in [
        "v",
        "id",
        "time",
        "ts_ms",
        "session",
        "agent",
        "profile",
        "cwd",
        "form",
        "raw",
        "segments",
        "decision",
        "decided_by",
        "reasons",
        "matched_rules",
        "risk",
        "severity",
    ] {
        assert!(d.get(k).is_some(), "decision record lacks {k}: {d}");
    }
    for k in [
        "exit_code",
        "signal",
        "timed_out",
        "duration_ms",
        "enforcement",
        "status",
    ] {
        assert!(r.get(k).is_some(), "result record lacks {k}: {r}");
    }
    assert_eq!(d["session"], "s1");
    assert_eq!(d["agent"], "codex");
    assert_eq!(d["form"], "string");
    assert_eq!(d["decision"], "allow");
    assert!(d["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(d["segments"][0]["program"], "echo");
    assert_eq!(r["exit_code"], 3);
    assert_eq!(r["status"], "failed");
    assert!(r["enforcement"]["seccomp"].is_boolean(), "{r}");
    assert_eq!(denied["decision"], "deny");
    assert_eq!(denied["decided_by"], "policy");
    assert!(!denied["reasons"].as_array().unwrap().is_empty());
    assert!(!denied["matched_rules"].as_array().unwrap().is_empty());
}

#[test]
fn secrets_are_redacted() {
    let env = Env::new();
    env.profile("[audit]\nenabled = true");
    let _ = env.run(&[
        "--",
        "echo",
        "--password=hunter2",
        "https://bob:s3cr3t@example.com/",
        "--token",
        "tok123",
    ]);
    let _ = env.run(&[
        "-c",
        "curl -H 'Authorization: Bearer abcdef123' https://example.com/?access_token=qwerty",
    ]);
    let _ = env.run(&[
        "-c",
        "GITHUB_TOKEN=ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaa echo hi",
    ]);
    let text = std::fs::read_to_string(env.state().join("audit.jsonl")).unwrap();
    for secret in [
        "hunter2",
        "s3cr3t",
        "tok123",
        "abcdef123",
        "qwerty",
        "ghp_aaaa",
    ] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    assert!(text.contains("[REDACTED]"));
    assert!(text.contains("example.com"), "the rest stays readable");
}

#[test]
fn unwritable_log_fails_closed_by_default() {
    for file in ["{state}/not-a-dir/audit.jsonl", "/dev/full"] {
        let env = Env::new();
        std::fs::write(env.state().join("not-a-dir"), "").unwrap();
        let marker = env.path("cwd/ran");
        env.profile(&format!(
            "[audit]\nenabled = true\nfile = \"{file}\"\non_error = \"fail\""
        ));
        let o = env.run(&["-c", &format!("touch {}", marker.display())]);
        assert_eq!(code(&o), 126, "{file}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("safe-exec: denied:") && stderr(&o).contains("audit"),
            "{}",
            stderr(&o)
        );
        assert!(!marker.exists(), "{file}: the command must not run");
    }
}

#[test]
fn unwritable_log_with_warn_runs_and_complains() {
    let env = Env::new();
    let marker = env.path("cwd/ran");
    env.profile("[audit]\nenabled = true\nfile = \"/dev/full\"\non_error = \"warn\"");
    let o = env.run(&["-c", &format!("touch {}", marker.display())]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(marker.exists());
    assert!(
        stderr(&o).contains("safe-exec: warning: audit log /dev/full"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn syslog_datagrams() {
    let env = Env::new();
    let sock_path = env.path("log.sock");
    let sock = UnixDatagram::bind(&sock_path).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    env.profile(&format!(
        "[audit]\nenabled = true\nfile = \"\"\nsyslog = \"{}\"\non_error = \"fail\"",
        sock_path.display()
    ));
    let o = env.run(&["--session", "sys", "--", "echo", "hi"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut buf = vec![0u8; 65536];
    let mut got = Vec::new();
    for _ in 0..2 {
        let n = sock.recv(&mut buf).unwrap();
        got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    for (m, kind) in got.iter().zip(["decision", "result"]) {
        assert!(m.starts_with("<86>safe-exec["), "{m}");
        let json = &m[m.find("]: ").unwrap() + 3..];
        let v: Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["kind"], kind);
        assert_eq!(v["session"], "sys");
    }
    assert!(!env.state().join("audit.jsonl").exists(), "no file sink");
    // A socket nobody listens on follows on_error (fail here).
    drop(sock);
    let o = env.run(&["--", "echo", "hi"]);
    assert_eq!(code(&o), 126);
    assert!(stderr(&o).contains("syslog"), "{}", stderr(&o));
}

#[test]
fn log_subcommand_shows_recent_decisions() {
    let env = Env::new();
    env.profile("[audit]\nenabled = true");
    assert_eq!(code(&env.run(&["--session", "a", "--", "echo", "one"])), 0);
    assert_eq!(code(&env.run(&["--session", "b", "-c", "rm -rf /"])), 126);
    let log = |args: &[&str]| {
        let o = env
            .cmd()
            .arg("log")
            .arg("--profile")
            .arg(env.path("profile.toml"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        stdout(&o)
    };
    let all = log(&[]);
    assert!(
        all.contains("ALLOW") && all.contains("echo one") && all.contains("exit 0"),
        "{all}"
    );
    assert!(
        all.contains("DENY") && all.contains("rm -rf /") && all.contains("why:"),
        "{all}"
    );
    let b = log(&["--session", "b"]);
    assert!(!b.contains("echo one") && b.contains("rm -rf /"), "{b}");
    let j = log(&["--json", "--session", "a"]);
    let lines: Vec<Value> = j
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["kind"], "decision");
    assert_eq!(lines[1]["kind"], "result");
}
