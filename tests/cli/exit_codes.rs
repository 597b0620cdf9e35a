//! The command line's exit codes, decisions and JSON, as the contract
//! (`CONTRACT.md`, "Exit codes", "Decisions and JSON", "Clarifications")
//! fixes them, driven through the real binary in a temporary world.
use crate::common::policy as common;
use common::*;

use std::os::unix::ffi::OsStrExt;
use std::time::Duration;

use serde_json::Value;

const DENIED: &str = "safe-exec: denied:";

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

// ---------------------------------------------------------------- run mode

#[test]
fn run_allowed_command_returns_its_own_exit_code() {
    let w = World::new();
    let (out, _) = w.run(["--", "true"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (out, _) = w.run(["--", "false"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let (out, _) = w.run(["-c", "exit 3"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let (out, _) = w.run(["-c", "false"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let (out, _) = w.run(["-c", "true && exit 7"]);
    assert_eq!(code(&out), 7, "{}", stderr(&out));
}

#[test]
fn run_prints_the_commands_output() {
    let w = World::new();
    let (out, _) = w.run(["--", "echo", "hello"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "hello\n");
    let (out, _) = w.run(["-c", "echo hi | tr a-z A-Z"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "HI\n");
}

#[test]
fn run_policy_deny_is_126_with_one_denied_line() {
    let w = World::new();
    for args in [
        vec!["-c", "rm -rf /"],
        vec!["--", "rm", "-rf", "/"],
        vec!["-c", "cat ~/.ssh/id_rsa"],
        vec!["-c", "echo x > ~/.bashrc"],
    ] {
        let (out, _) = w.run(&args);
        assert_eq!(code(&out), 126, "{args:?}: stderr {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            first_line(&err).starts_with(DENIED),
            "{args:?}: stderr {err:?}"
        );
        assert!(
            stdout(&out).is_empty(),
            "{args:?}: a denied command printed {:?}",
            stdout(&out)
        );
    }
    // The refused command really did not run.
    assert!(w.home.join(".bashrc").exists());
    assert_eq!(
        std::fs::read_to_string(w.home.join(".bashrc")).unwrap(),
        "# bashrc\n"
    );
}

#[test]
fn run_ask_without_terminal_is_a_denial_mentioning_confirmation() {
    let w = World::new();
    for args in [
        // Confined, unknown programs run; signalling processes by name asks.
        vec!["-c", "pkill -f frobnicate-xyz"],
        vec!["--", "pkill", "frobnicate-xyz"],
    ] {
        let (out, _) = w.run(&args);
        assert_eq!(code(&out), 126, "{args:?}: stderr {}", stderr(&out));
        let err = stderr(&out);
        assert!(first_line(&err).starts_with(DENIED), "{args:?}: {err:?}");
        assert!(
            err.contains("confirmation"),
            "{args:?}: reason must say confirmation: {err:?}"
        );
    }
}

#[test]
fn run_missing_program_is_127() {
    // A program run by path is never trusted on its name (it asks), so the
    // profile here allows unknown programs to reach the run.
    let w = World::new();
    let profile = w.etc.join("allow-unknown.toml");
    std::fs::write(
        &profile,
        "extends = \"default\"\n[policy]\nunknown_commands = \"allow\"\n",
    )
    .expect("profile");
    let p = profile.to_str().expect("utf8");
    let (out, _) = w.run(["--profile", p, "--", "no-such-program-safe-exec-test"]);
    assert_eq!(code(&out), 127, "stderr {}", stderr(&out));
    let (out, _) = w.run(["--profile", p, "-c", "no-such-program-safe-exec-test -l"]);
    assert_eq!(code(&out), 127, "stderr {}", stderr(&out));
    // The default profile runs unknown programs and programs by path
    // confined, so they reach the run too.
    let (out, _) = w.run(["--", "/nonexistent/dir/ls"]);
    assert_eq!(code(&out), 127, "stderr {}", stderr(&out));
    let (out, _) = w.run(["--", "no-such-program-safe-exec-test"]);
    assert_eq!(code(&out), 127, "stderr {}", stderr(&out));
}

#[test]
fn usage_errors_are_125() {
    let w = World::new();
    for args in [
        vec!["--bogus-option"],
        vec!["-c"],
        vec!["check"],
        vec!["check", "--json"],
        vec!["--profile"],
        vec!["--timeout", "soon", "--", "true"],
    ] {
        let (out, _) = w.run(&args);
        assert_eq!(code(&out), 125, "{args:?}: stderr {}", stderr(&out));
        assert!(
            stderr(&out).contains("safe-exec: error:"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn unknown_profile_is_125() {
    let w = World::new();
    let (out, _) = w.run(["--profile", "no-such-profile-xyz", "--", "true"]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    let (out, _) = w.run(["check", "--profile", "no-such-profile-xyz", "-c", "true"]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
}

#[test]
fn bad_profile_unknown_key_is_125_with_file_line_column() {
    let w = World::new();
    let p = w.write_etc(
        "bad.toml",
        "extends = \"default\"\n\n[policy]\nmode = \"safe\"\nbogus_key = 1\n",
    );
    let ps = p.to_str().unwrap();
    for args in [
        vec!["--profile", ps, "--", "true"],
        vec!["check", "--profile", ps, "-c", "true"],
    ] {
        let (out, _) = w.run(&args);
        assert_eq!(code(&out), 125, "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("safe-exec: error:"), "{err}");
        assert!(
            err.contains(&format!("{ps}:5:")),
            "error must name file:line:column: {err}"
        );
        assert!(err.contains("bogus_key"), "error must name the key: {err}");
        // file:line:column
        let after = &err[err.find(&format!("{ps}:5:")).unwrap() + ps.len() + 3..];
        assert!(
            after.chars().next().is_some_and(|c| c.is_ascii_digit()),
            "column missing: {err}"
        );
    }
    // A top-level unknown key too.
    let p = w.write_etc("bad2.toml", "extends = \"default\"\nmodee = \"safe\"\n");
    let (out, _) = w.run(["--profile", p.to_str().unwrap(), "--", "true"]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(stderr(&out).contains(":2:"), "{}", stderr(&out));
    // TOML that does not parse.
    let p = w.write_etc("bad3.toml", "extends = \"default\"\n[policy\n");
    let (out, _) = w.run(["--profile", p.to_str().unwrap(), "--", "true"]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
}

#[test]
fn profile_extending_default_in_safe_mode() {
    let w = World::new();
    let p = w.write_etc(
        "safe.toml",
        "extends = \"default\"\n\n[policy]\nmode = \"safe\"\n",
    );
    let ps = p.to_str().unwrap();
    // Reads stay allowed.
    let (c, v) = w.check_json_args(&["--profile", ps, "-c", "ls -la"]);
    assert_eq!((c, v["decision"].as_str()), (0, Some("allow")));
    let (c, v) = w.check_json_args(&["--profile", ps, "-c", "git status"]);
    assert_eq!((c, v["decision"].as_str()), (0, Some("allow")));
    // Writes are above the mode: not allowed.
    for s in [
        "touch x",
        "mkdir build",
        "rm -rf target",
        "echo x > out.txt",
    ] {
        let (c, v) = w.check_json_args(&["--profile", ps, "-c", s]);
        assert_ne!(v["decision"], "allow", "{s} allowed under mode = safe");
        assert!(c == 2 || c == 3, "{s}: exit {c}");
    }
    // And the run mode refuses them (no terminal).
    let (out, _) = w.run(["--profile", ps, "-c", "touch x"]);
    assert_eq!(code(&out), 126, "{}", stderr(&out));
    assert!(!w.cwd.join("x").exists());

    // A profile in `dangerous` mode without allow_dangerous still refuses.
    let p = w.write_etc(
        "dm.toml",
        "extends = \"default\"\n\n[policy]\nmode = \"dangerous\"\n",
    );
    let (_, v) = w.check_json_args(&["--profile", p.to_str().unwrap(), "-c", "git push --force"]);
    assert_ne!(v["decision"], "allow");
}

#[test]
fn system_pin_forbids_loosening() {
    let w = World::new();
    let sys = w.write_etc("sys/config.toml", "profile = \"strict\"\npin = true\n");
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = w.cmd();
        c.env("SAFE_EXEC_SYSTEM_CONFIG", &sys).args(args);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let out = run(&["--profile", "default", "--", "true"], &[]);
    assert_eq!(
        code(&out),
        125,
        "loosening must be refused: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("safe-exec: error:"),
        "{}",
        stderr(&out)
    );
    let out = run(&["check", "--profile", "default", "-c", "ls"], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    let out = run(&["--", "true"], &[("SAFE_EXEC_PROFILE", "default")]);
    assert_eq!(code(&out), 125, "env var loosening: {}", stderr(&out));
    let out = run(&["--profile", "strict", "--", "true"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = run(&["--", "true"], &[]);
    assert_eq!(
        code(&out),
        0,
        "pinned profile applies by default: {}",
        stderr(&out)
    );
    let out = run(&["check", "-c", "ls"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // Strict refuses operators (and the pinned default is strict).
    let out = run(&["check", "-c", "ls && ls"], &[]);
    assert_ne!(
        code(&out),
        0,
        "strict allowed an operator: {}",
        stdout(&out)
    );
}

// ---------------------------------------------------------------- check

#[test]
fn check_exit_codes() {
    let w = World::new();
    let cases: &[(&[&str], i32)] = &[
        (&["check", "-c", "git status"], 0),
        (&["check", "--", "ls", "-la"], 0),
        (&["check", "-c", "rm -rf /"], 2),
        (&["check", "--", "rm", "-rf", "/"], 2),
        (&["check", "-c", "pkill -f frobnicate-xyz"], 3),
        (&["check", "--", "pkill", "frobnicate-xyz"], 3),
        (&["check", "--unconfined", "-c", "frobnicate-xyz"], 3),
        (&["check", "--unconfined", "--", "frobnicate-xyz"], 3),
        (&["check"], 125),
        (
            &["check", "--profile", "no-such-profile-xyz", "-c", "ls"],
            125,
        ),
        (&["check", "--json", "-c", "git status"], 0),
        (&["check", "--json", "-c", "rm -rf /"], 2),
        (&["check", "--json", "-c", "pkill -f frobnicate-xyz"], 3),
        (
            &["check", "--json", "--unconfined", "-c", "frobnicate-xyz"],
            3,
        ),
        (&["check", "--json", "-c", "frobnicate-xyz"], 0),
        (&["check", "--explain", "-c", "git status"], 0),
        (&["check", "--explain", "-c", "rm -rf /"], 2),
        (&["check", "--explain", "-c", "pkill -f frobnicate-xyz"], 3),
    ];
    for (args, want) in cases {
        let (out, _) = w.run(*args);
        assert_eq!(
            code(&out),
            *want,
            "{args:?}: stdout {} stderr {}",
            stdout(&out),
            stderr(&out)
        );
    }
}

#[test]
fn check_never_executes() {
    let w = World::new();
    let (out, _) = w.run(["check", "-c", "touch created-by-check"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (out, _) = w.run(["check", "--", "mkdir", "dir-by-check"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!w.cwd.join("created-by-check").exists());
    assert!(!w.cwd.join("dir-by-check").exists());
}

#[test]
fn check_explain_mentions_the_reason_also_when_blocked() {
    let w = World::new();
    let (out, _) = w.run(["check", "--explain", "-c", "cat ~/.ssh/id_rsa"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let text = stdout(&out) + &stderr(&out);
    assert!(
        text.contains(".ssh"),
        "explain must name the protected path: {text}"
    );
}

fn assert_str_array(v: &Value, key: &str) {
    let a = v[key]
        .as_array()
        .unwrap_or_else(|| panic!("`{key}` must be an array: {v}"));
    assert!(
        a.iter().all(Value::is_string),
        "`{key}` must hold strings: {v}"
    );
}

fn assert_json_shape(v: &Value, form: &str) {
    let d = v["decision"].as_str().expect("decision is a string");
    assert!(["allow", "ask", "deny"].contains(&d), "decision {d}");
    let r = v["risk"].as_str().expect("risk is a string");
    assert!(["safe", "write", "dangerous"].contains(&r), "risk {r}");
    let s = v["severity"].as_str().expect("severity is a string");
    assert!(["safe", "warning", "critical"].contains(&s), "severity {s}");
    assert!(
        v.get("confirmation").is_some(),
        "confirmation key present: {v}"
    );
    match d {
        "ask" => {
            let c = v["confirmation"]
                .as_str()
                .expect("ask has a confirmation level");
            assert!(
                ["standard", "strong", "very_strong"].contains(&c),
                "confirmation {c}"
            );
        }
        _ => assert!(
            v["confirmation"].is_null(),
            "confirmation must be null for {d}: {v}"
        ),
    }
    assert_str_array(v, "reasons");
    assert_str_array(v, "warnings");
    assert_str_array(v, "matched_rules");
    if d == "allow" {
        assert!(
            v["reasons"].as_array().unwrap().is_empty(),
            "allowed with reasons: {v}"
        );
    } else {
        assert!(
            !v["reasons"].as_array().unwrap().is_empty(),
            "{d} without reasons: {v}"
        );
    }
    let cmd = &v["command"];
    assert_eq!(cmd["form"], form, "command.form: {v}");
    let segs = cmd["segments"]
        .as_array()
        .expect("command.segments is an array");
    assert!(!segs.is_empty(), "no segments: {v}");
    for seg in segs {
        let p = seg["program"]
            .as_str()
            .expect("segment.program is a string");
        let argv = seg["argv"].as_array().expect("segment.argv is an array");
        assert!(argv.iter().all(Value::is_string), "argv strings: {seg}");
        assert_eq!(
            argv.first().and_then(Value::as_str),
            Some(p),
            "argv[0] must be the program: {seg}"
        );
    }
    assert!(
        v.get("sandbox").is_some_and(|s| s.is_object()),
        "sandbox object: {v}"
    );
}

#[test]
fn check_json_fields() {
    let w = World::new();
    for (args, form, want) in [
        (vec!["-c", "git status"], "string", "allow"),
        (vec!["-c", "ls | head -n 3"], "string", "allow"),
        (vec!["--", "git", "status"], "list", "allow"),
        (vec!["-c", "rm -rf /"], "string", "deny"),
        (vec!["--", "rm", "-rf", "/"], "list", "deny"),
        (vec!["-c", "pkill -f frobnicate-xyz"], "string", "ask"),
        (vec!["--", "pkill", "frobnicate-xyz"], "list", "ask"),
        (
            vec!["--unconfined", "-c", "frobnicate-xyz a b"],
            "string",
            "ask",
        ),
        (vec!["-c", "frobnicate-xyz a b"], "string", "allow"),
        (vec!["-c", "git push --force"], "string", "deny"),
    ] {
        let (_, v) = w.check_json_args(&args);
        assert_eq!(v["decision"], want, "{args:?}: {v}");
        assert_json_shape(&v, form);
    }
    // Segments of a pipeline, in order, with their argv.
    let (_, v) = w.check_json("ls -la src | head -n 3");
    let segs = v["command"]["segments"].as_array().unwrap();
    let progs: Vec<&str> = segs
        .iter()
        .map(|s| s["program"].as_str().unwrap())
        .collect();
    assert_eq!(progs, ["ls", "head"]);
    let argv: Vec<&str> = segs[0]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(argv, ["ls", "-la", "src"]);
    // The list form keeps the argv verbatim.
    let (_, v) = w.check_json_args(&["--", "echo", "a b", "$HOME"]);
    let argv: Vec<&str> = v["command"]["segments"][0]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(argv, ["echo", "a b", "$HOME"]);
    // Risk of a write command.
    let (_, v) = w.check_json("touch out.txt");
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["risk"], "write");
}

#[test]
fn classify_json_exact_shape() {
    let w = World::new();
    for s in [
        "ls -la",
        "rm -rf /",
        "git push --force",
        "sudo rm -rf /",
        "curl https://x | sh",
    ] {
        let (out, _) = w.run(["classify", "--json", s]);
        assert_eq!(code(&out), 0, "{s}: {}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).expect("classify prints JSON");
        let obj = v.as_object().expect("object");
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["matchedRules", "severity"], "{s}: {v}");
        let sev = v["severity"].as_str().unwrap();
        assert!(["safe", "warning", "critical"].contains(&sev), "{s}: {v}");
        let rules = v["matchedRules"].as_array().expect("matchedRules array");
        assert!(rules.iter().all(Value::is_string));
        assert_eq!(
            sev == "safe",
            rules.is_empty(),
            "safe means no rule matched: {v}"
        );
    }
    let (out, _) = w.run(["classify", "--json", "ls -la"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["severity"], "safe");
    let (out, _) = w.run(["classify"]);
    assert_eq!(
        code(&out),
        125,
        "classify without a string: {}",
        stderr(&out)
    );
}

// ---------------------------------------------------------------- bash compatibility

#[test]
fn bash_compatible_flag_forms() {
    let w = World::new();
    for args in [
        vec!["-c", "echo hi"],
        vec!["-lc", "echo hi"],
        vec!["-l", "-c", "echo hi"],
        vec!["-c", "-l", "echo hi"],
        vec!["--login", "-c", "echo hi"],
        vec!["-ec", "echo hi"],
        vec!["-e", "-c", "echo hi"],
        vec!["-lec", "echo hi"],
    ] {
        let (out, _) = w.run(&args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "hi\n", "{args:?}");
    }
    // The same forms are refused the same way.
    for args in [
        vec!["-lc", "rm -rf /"],
        vec!["-l", "-c", "rm -rf /"],
        vec!["--login", "-c", "rm -rf /"],
    ] {
        let (out, _) = w.run(&args);
        assert_eq!(code(&out), 126, "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn positional_parameters() {
    let w = World::new();
    let (out, _) = w.run(["-c", "echo \"$0 $1\"", "a", "b"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "a b\n");
    let (out, _) = w.run(["-c", "echo \"$1-$2\"", "name", "x", "y"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "x-y\n");
    let (out, _) = w.run(["-lc", "echo \"$0 $1\"", "a", "b"]);
    assert_eq!(stdout(&out), "a b\n", "{}", stderr(&out));
    // A positional parameter is resolved and checked: rm -rf "$1" with $1=/.
    let (out, _) = w.run(["-c", "rm -rf \"$1\"", "sh", "/"]);
    assert_eq!(code(&out), 126, "{}", stderr(&out));
}

// ---------------------------------------------------------------- robustness

#[test]
fn invalid_utf8_argv_is_refused_not_a_crash() {
    let w = World::new();
    let bad = std::ffi::OsStr::from_bytes(b"echo \xff\xfe");
    for args in [
        vec![std::ffi::OsStr::new("-c"), bad],
        vec![
            std::ffi::OsStr::new("--"),
            std::ffi::OsStr::new("echo"),
            std::ffi::OsStr::from_bytes(b"\xff"),
        ],
        vec![
            std::ffi::OsStr::new("check"),
            std::ffi::OsStr::new("-c"),
            bad,
        ],
    ] {
        let out = w.cmd().args(&args).output().unwrap();
        let c = code(&out);
        assert_ne!(c, 101, "panic on invalid UTF-8: {}", stderr(&out));
        assert_ne!(c, 0, "invalid UTF-8 accepted: {args:?}");
        assert!(
            c == 126 || c == 125 || c == 2 || c == 3,
            "{args:?}: exit {c}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).starts_with("safe-exec: "), "{}", stderr(&out));
    }
}

fn bounded(w: &World, args: &[&str], what: &str) -> i32 {
    let (out, t) = w.run(args);
    let c = code(&out);
    assert_ne!(
        c,
        101,
        "{what}: panic: {}",
        &stderr(&out)[..stderr(&out).len().min(2000)]
    );
    assert_ne!(c, -1, "{what}: killed by a signal");
    assert!(t < Duration::from_secs(20), "{what}: took {t:?}");
    c
}

#[test]
fn large_inputs_are_handled_in_bounded_time() {
    let w = World::new();
    // Linux caps one argv string at 128 KiB: a 120 KiB string.
    let long = format!("echo {}", "a".repeat(120 * 1024));
    let c = bounded(&w, &["check", "-c", &long], "120 KiB string");
    assert!(matches!(c, 0 | 2 | 3), "exit {c}");
    // 1 MiB over many arguments (list form).
    let chunk = "b".repeat(64 * 1024);
    let mut args = vec!["check", "--", "echo"];
    args.extend(std::iter::repeat_n(chunk.as_str(), 16));
    let c = bounded(&w, &args, "1 MiB argv");
    assert!(matches!(c, 0 | 2 | 3), "exit {c}");
    // 10,000 segments: never allowed silently past the limits, never a panic.
    let many = vec!["true"; 10_000].join("; ");
    let c = bounded(&w, &["check", "-c", &many], "10k segments");
    assert!(
        c == 2 || c == 3,
        "10,000 segments must not be allowed (exit {c})"
    );
    let many_rm = format!("{}; rm -rf /", vec!["true"; 9_999].join("; "));
    let c = bounded(&w, &["check", "-c", &many_rm], "10k segments + rm");
    assert!(
        c == 2 || c == 3,
        "payload after 9,999 no-ops allowed (exit {c})"
    );
    let c = bounded(&w, &["-c", &many_rm], "run 10k segments + rm");
    assert_eq!(c, 126);
    // A 10,000-stage pipeline.
    let pipe = vec!["cat"; 10_000].join(" | ");
    let c = bounded(&w, &["check", "-c", &pipe], "10k pipeline");
    assert!(c == 2 || c == 3, "exit {c}");
    // Deep nesting of groups and subshells.
    let deep = format!("{}rm -rf /{}", "( ".repeat(500), " )".repeat(500));
    let c = bounded(&w, &["check", "-c", &deep], "500 nested subshells");
    assert!(c == 2 || c == 3, "exit {c}");
}

#[test]
fn one_mebibyte_string_through_the_library() {
    // A 1 MiB shell string cannot be one argv word on Linux; the hook and
    // library paths take it, so check the library directly.
    use safe_exec::decide::{CommandInput, decide, example_situation};
    let profile = safe_exec::profile::load("default").expect("default profile");
    let sit = example_situation();
    for text in [
        format!("echo {}", "a".repeat(1 << 20)),
        format!("echo '{}'; rm -rf /", "x".repeat(1 << 20)),
        "true; ".repeat((1 << 20) / 6),
    ] {
        let start = std::time::Instant::now();
        let d = decide(
            &CommandInput::String {
                text,
                positional: vec!["sh".into()],
            },
            &profile,
            &sit,
        );
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "took {:?}",
            start.elapsed()
        );
        // More than max_length: never allowed.
        assert_ne!(d.verdict.decision, safe_exec::policy::Decision::Allow);
    }
}

/// `bash -c` nested `depth` times around `inner`, quoting each level with
/// double quotes and backslashes (the string doubles per level).
fn nested_bash_c(inner: &str, depth: usize) -> String {
    let mut s = inner.to_string();
    for _ in 0..depth {
        let escaped = s
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('$', "\\$")
            .replace('`', "\\`");
        s = format!("bash -c \"{escaped}\"");
    }
    s
}

#[test]
fn deeply_nested_shells_are_never_allowed() {
    let w = World::new();
    // 16 levels of `bash -c` (about 130 KiB would be 17; 16 fits in argv).
    for depth in [9, 12, 15] {
        for inner in ["rm -rf /", "true"] {
            let s = nested_bash_c(inner, depth);
            let c = bounded(&w, &["check", "-c", &s], &format!("{depth}-deep bash -c"));
            if inner == "rm -rf /" {
                assert!(c == 2 || c == 3, "{depth}-deep rm allowed (exit {c})");
            } else {
                assert!(
                    c == 2 || c == 3,
                    "{depth}-deep nesting past max_depth allowed (exit {c})"
                );
            }
        }
    }
    // 20 levels, alternating `bash -c` and heredocs so the string grows
    // linearly.
    let mut s = "rm -rf /".to_string();
    for i in 0..20 {
        s = if i % 2 == 0 {
            format!("bash <<'E{i}'\n{s}\nE{i}")
        } else {
            format!(
                "bash -c \"{}\"",
                s.replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('$', "\\$")
            )
        };
    }
    let c = bounded(&w, &["check", "-c", &s], "20-deep mixed nesting");
    assert!(c == 2 || c == 3, "20-deep mixed nesting allowed (exit {c})");
    let c = bounded(&w, &["-c", &s], "run 20-deep mixed nesting");
    assert_eq!(c, 126);
    // 20 levels through the library (no argv limit).
    use safe_exec::decide::{CommandInput, decide, example_situation};
    let profile = safe_exec::profile::load("default").unwrap();
    for inner in ["rm -rf /", "true"] {
        let text = nested_bash_c(inner, 20);
        let start = std::time::Instant::now();
        let d = decide(
            &CommandInput::String {
                text,
                positional: vec!["sh".into()],
            },
            &profile,
            &example_situation(),
        );
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "20-deep took {:?}",
            start.elapsed()
        );
        assert_ne!(
            d.verdict.decision,
            safe_exec::policy::Decision::Allow,
            "20-deep `{inner}` allowed"
        );
    }
    // List form: bash -c nested as argv words (no quoting growth).
    let mut argv: Vec<String> = vec!["rm".into(), "-rf".into(), "/".into()];
    for _ in 0..20 {
        let joined = argv
            .iter()
            .map(|a| format!("'{a}'"))
            .collect::<Vec<_>>()
            .join(" ");
        argv = vec!["bash".into(), "-c".into(), joined];
        if argv[2].len() > 100_000 {
            break;
        }
    }
    let mut args: Vec<&str> = vec!["check", "--"];
    args.extend(argv.iter().map(String::as_str));
    let c = bounded(&w, &args, "nested list form");
    assert!(c == 2 || c == 3, "exit {c}");
}

#[test]
fn nul_and_control_bytes_do_not_crash() {
    let w = World::new();
    for s in [
        "rm -rf /\r",
        "echo a\u{0}b",
        "ls\u{7}",
        "rm\u{a0}-rf /",
        "echo \u{202e}fdsa",
    ] {
        // NUL cannot be passed in argv; the library takes it.
        if s.contains('\0') {
            use safe_exec::decide::{CommandInput, decide, example_situation};
            let profile = safe_exec::profile::load("default").unwrap();
            let d = decide(
                &CommandInput::String {
                    text: s.into(),
                    positional: vec![],
                },
                &profile,
                &example_situation(),
            );
            assert_ne!(
                d.verdict.decision,
                safe_exec::policy::Decision::Allow,
                "NUL byte allowed"
            );
            continue;
        }
        let c = bounded(&w, &["check", "-c", s], s);
        assert!(matches!(c, 0 | 2 | 3), "{s:?}: exit {c}");
    }
}
