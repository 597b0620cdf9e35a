//! The real binary end to end: which layer refuses (policy first, the kernel
//! for what the policy cannot see), exit codes, `doctor --json` and
//! `check --json` reporting, the time limit, `-c` under bash, and the
//! environment the command sees.
use crate::common::sandbox as common;
use common::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", stdout(out), stderr(out)))
}

/// `safe-exec ARGS...` with the world's environment but no `--profile`.
fn plain(w: &World, args: &[&str]) -> std::process::Output {
    w.safe_exec().args(args).output().unwrap()
}

/// The probe that hides Landlock from what it execs (seccomp ENOSYS on the
/// three Landlock syscalls): a kernel without Landlock, as safe-exec sees it.
fn without_landlock(w: &World, args: &[&str]) -> std::process::Output {
    let cmd = w.safe_exec();
    let mut c = std::process::Command::new(probe());
    c.arg("no-landlock-exec").arg(bin()).args(args);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c.current_dir(&w.work).stdin(std::process::Stdio::null());
    c.output().unwrap()
}

#[test]
fn default_profile_policy_refuses_a_secret_read_before_the_kernel() {
    let Some(w) = landlock_world() else {
        return;
    };
    for args in [
        &["-c", "cat ~/.ssh/id_rsa"][..],
        &["--", "cat", &w.h(".ssh/id_rsa")],
        &["-c", "cat ${HOME}/.ssh/id_rsa"],
    ] {
        let out = plain(&w, args);
        assert_denied(&out);
        assert!(stderr(&out).contains(".ssh"), "{}", stderr(&out));
        assert_eq!(stdout(&out), "", "nothing ran");
    }
    let out = plain(&w, &["check", "--json", "-c", "cat ~/.ssh/id_rsa"]);
    assert_eq!(code(&out), 2);
    assert_eq!(json_of(&out)["decision"], "deny");
    // control: the default profile runs an ordinary read
    let out = plain(&w, &["-c", "cat ~/.bashrc"]);
    assert_eq!(
        (code(&out), stdout(&out).as_str()),
        (0, "# bashrc\n"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn kernel_refuses_the_same_read_when_the_policy_lets_it_through() {
    let Some(w) = landlock_world() else {
        return;
    };
    // The probe is unknown to the registry (allowed by this profile) and its
    // path argument is hex-encoded: the policy sees nothing to refuse.
    let out = w.run(&[
        probe().to_str().unwrap(),
        "read-print",
        &hidden(&w.h(".ssh/id_rsa")),
    ]);
    assert_eq!(code(&out), EACCES, "{}", stderr(&out));
    assert!(!stdout(&out).contains("PRIVATE"));
    // same read from a script, whose contents the policy cannot see
    let s = w.script("read.sh", "cat ~/.ssh/id_rsa");
    let out = w.sh(&s);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("Permission denied"),
        "{}",
        stderr(&out)
    );
    assert!(!stdout(&out).contains("PRIVATE"));
    // control: the probe reads an ordinary file the same way
    let out = w.run(&[
        probe().to_str().unwrap(),
        "read-print",
        &hidden(&w.h(".bashrc")),
    ]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("# bashrc"));
}

#[test]
fn compound_string_runs_under_bash_inside_the_sandbox() {
    let Some(w) = landlock_world() else {
        return;
    };
    // A link made before the run (the policy would refuse to make one that
    // points outside), written through by code the policy cannot read.
    std::os::unix::fs::symlink(&w.outside, w.work.join("o")).unwrap();
    let script =
        "test -n \"$BASH_VERSION\" && echo bash && python3 -c 'open(\"o/f\", \"w\").write(\"x\")'";
    // check: allowed, and it would run as `/bin/bash -c STRING`
    let out = w
        .safe_exec()
        .args(["check", "--json", "--profile"])
        .arg(w.profile_file())
        .args(["-c", script])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let v = json_of(&out);
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["run"]["argv"][0], "/bin/bash");
    assert_eq!(v["run"]["argv"][1], "-c");
    assert_eq!(v["run"]["argv"][2], script);
    // run: bash runs it, the kernel refuses the write through the link
    let out = w.sh(script);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(stdout(&out), "bash\n");
    assert!(
        stderr(&out).contains("Permission denied: 'o/f'"),
        "{}",
        stderr(&out)
    );
    assert!(w.work.join("o").is_symlink(), "the link is still there");
    assert_eq!(
        std::fs::read_to_string(w.outside.join("f")).unwrap(),
        "original\n"
    );
    // NAME ARG... become $0 $1 as in bash
    let out = w
        .command_c("echo \"$0 $1\"")
        .args(["myname", "arg1"])
        .output()
        .unwrap();
    assert_eq!((code(&out), stdout(&out).as_str()), (0, "myname arg1\n"));
}

#[test]
fn doctor_json_reports_the_kernel_and_what_each_profile_gets() {
    let Some(w) = landlock_world() else {
        return;
    };
    let abi = landlock_abi();
    let out = plain(&w, &["doctor", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = json_of(&out);
    assert_eq!(v["kernel"]["landlock_abi"], abi);
    assert_eq!(v["kernel"]["seccomp"], true);
    let profiles = v["profiles"].as_array().unwrap();
    assert!(profiles.iter().any(|p| p["profile"] == "default"));
    for p in profiles {
        assert_eq!(p["enforcement"], "required", "{p}");
        assert_eq!(p["would_run"], true, "{p}");
        assert_eq!(p["enforced"]["missing"], json!([]), "{p}");
        assert_eq!(p["enforced"]["landlock_abi"], abi);
        assert_eq!(
            p["enforced"]["landlock"],
            if abi >= 9 { "full" } else { "partial" }
        );
        assert_eq!(p["enforced"]["seccomp"], true);
        assert_eq!(p["enforced"]["no_new_privs"], true);
    }
    // the same binary on a kernel without Landlock
    let out = without_landlock(&w, &["doctor", "--json"]);
    assert_eq!(
        code(&out),
        1,
        "doctor exits 1 without Landlock: {}",
        stderr(&out)
    );
    let v = json_of(&out);
    assert_eq!(v["kernel"]["landlock_abi"], 0);
    for p in v["profiles"].as_array().unwrap() {
        assert_eq!(p["would_run"], false, "{p}");
        assert_eq!(p["enforced"]["landlock"], "none");
        let missing = p["enforced"]["missing"].as_array().unwrap();
        assert!(
            missing
                .iter()
                .any(|m| m.as_str().unwrap().contains("Landlock")),
            "{p}"
        );
    }
}

#[test]
fn required_enforcement_refuses_and_best_effort_warns_without_landlock() {
    let Some(mut w) = landlock_world() else {
        return;
    };
    let marker = w.w("ran");
    let touch = ["--profile", "", "--", "touch", &marker];
    let with = |w: &World, args: &[&str]| {
        let p = w.profile_file();
        let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        a[1] = p.display().to_string();
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        without_landlock(w, &refs)
    };
    // required (the default): 125, says what is missing and what to do
    let out = with(&w, &touch);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("safe-exec: error:"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("Landlock"), "{}", stderr(&out));
    assert!(stderr(&out).contains("best-effort"), "{}", stderr(&out));
    assert!(!w.work.join("ran").exists(), "nothing ran");
    // best-effort: runs, with a warning naming what was not enforced
    w.set("enforcement", json!("best-effort"));
    let out = with(&w, &touch);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(w.work.join("ran").exists());
    assert!(
        stderr(&out).contains("safe-exec: warning:") && stderr(&out).contains("Landlock"),
        "best-effort must say what it could not enforce: {:?}",
        stderr(&out)
    );
    // and `check --json` records it
    let p = w.profile_file();
    let out = without_landlock(
        &w,
        &[
            "check",
            "--json",
            "--profile",
            p.to_str().unwrap(),
            "--",
            "touch",
            &marker,
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = json_of(&out);
    assert_eq!(v["sandbox"]["enforcement"], "best-effort");
    assert_eq!(v["sandbox"]["enforced"]["landlock"], "none");
    assert!(
        !v["sandbox"]["enforced"]["missing"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // with Landlock: best-effort enforces everything, nothing missing
    let out = w
        .safe_exec()
        .args([
            "check",
            "--json",
            "--profile",
            p.to_str().unwrap(),
            "--",
            "touch",
            &marker,
        ])
        .output()
        .unwrap();
    assert_eq!(json_of(&out)["sandbox"]["enforced"]["missing"], json!([]));
}

#[test]
fn check_json_describes_the_sandbox() {
    let Some(mut w) = landlock_world() else {
        return;
    };
    let check = |w: &World| {
        let out = w
            .safe_exec()
            .args(["check", "--json", "--profile"])
            .arg(w.profile_file())
            .args(["--", "ls"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        json_of(&out)["sandbox"].clone()
    };
    let s = check(&w);
    assert_eq!(s["read"], json!(["/"]));
    assert_eq!(s["write"], json!([w.work, w.tmp]));
    let deny: Vec<&str> = s["deny_read"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for d in [w.h(".ssh"), w.h(".aws"), w.state.display().to_string()] {
        assert!(deny.contains(&d.as_str()), "{d} not in {deny:?}");
    }
    assert_eq!(s["network"], "off");
    assert_eq!(s["unix_sockets"], false);
    assert_eq!(s["enforcement"], "required");
    assert_eq!(s["enforced"]["landlock_abi"], landlock_abi());
    assert!(
        s["landlock"]["rules"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    );
    assert!(s["seccomp"].as_array().is_some_and(|r| !r.is_empty()));
    w.set("network", json!("full"));
    w.set("write", json!(["{cwd}"]));
    let s = check(&w);
    assert_eq!(s["network"], "full");
    assert_eq!(s["write"], json!([w.work]));
}

#[test]
fn time_limit_exits_124() {
    let Some(mut w) = landlock_world() else {
        return;
    };
    let t = Instant::now();
    let out = w
        .safe_exec()
        .arg("--profile")
        .arg(w.profile_file())
        .args(["--timeout", "1", "--", "sleep", "30"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 124, "{}", stderr(&out));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // --timeout can only shorten the profile's limit
    w.timeout(1);
    let t = Instant::now();
    let out = w
        .safe_exec()
        .arg("--profile")
        .arg(w.profile_file())
        .args(["--timeout", "60", "--", "sleep", "30"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 124, "{}", stderr(&out));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // control: under the limit
    let out = w.run(&["true"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn missing_program_exits_127() {
    let Some(w) = landlock_world() else {
        return;
    };
    let out = w.run(&["no-such-program-xyz"]);
    assert_eq!(code(&out), 127, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("command not found"),
        "{}",
        stderr(&out)
    );
    let out = w.sh("no-such-program-xyz --flag");
    assert_eq!(code(&out), 127, "{}", stderr(&out));
    let out = w.sh("true && no-such-program-xyz");
    assert_eq!(code(&out), 127, "bash's own 127: {}", stderr(&out));
}

#[test]
fn killed_by_a_signal_is_128_plus_n() {
    let Some(w) = landlock_world() else {
        return;
    };
    // (`kill $$` as a string is refused by the policy: `$$` is an expansion
    // it cannot resolve; a script is opaque to it)
    let term = w.script("term.sh", "kill -TERM $$");
    let kill = w.script("kill.sh", "kill -KILL $$");
    // in place: the caller sees the signal itself
    assert_eq!(code(&w.run(&[&term])), 128 + libc::SIGTERM);
    // supervised: safe-exec exits 128+N
    for (script, n) in [(&term, libc::SIGTERM), (&kill, libc::SIGKILL)] {
        let out = w.supervised(&[script]).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(128 + n),
            "{script}: {}",
            stderr(&out)
        );
    }
    if cfg!(target_arch = "x86_64") {
        // a seccomp kill (foreign-architecture syscall) shows as 159
        let out = w.run(&[probe().to_str().unwrap(), "int80-getpid"]);
        assert_eq!(code(&out), 159);
        let out = w
            .supervised(&[probe().to_str().unwrap(), "int80-getpid"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(159), "{}", stderr(&out));
    }
}

#[test]
fn the_command_does_not_see_secrets_from_the_callers_environment() {
    let Some(w) = landlock_world() else {
        return;
    };
    for args in [&["--", "env"][..], &["-c", "env"]] {
        let out = w
            .safe_exec()
            .args(args)
            .env("GITHUB_TOKEN", "ghp_secret")
            .env("AWS_SECRET_ACCESS_KEY", "aws_secret")
            .env("KEEP_THIS", "1")
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        let env = stdout(&out);
        assert!(!env.contains("GITHUB_TOKEN"), "{env}");
        assert!(!env.contains("ghp_secret") && !env.contains("aws_secret"));
        assert!(env.lines().any(|l| l == "KEEP_THIS=1"), "control: {env}");
        assert!(env.lines().any(|l| l == "SAFE_EXEC_SANDBOX=1"));
    }
    // control: plain env shows it
    let out = std::process::Command::new("env")
        .env("GITHUB_TOKEN", "ghp_secret")
        .output()
        .unwrap();
    assert!(stdout(&out).contains("GITHUB_TOKEN=ghp_secret"));
}
