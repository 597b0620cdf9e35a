//! The hook decides in process under bounds (src/bound.rs,
//! src/cli/hook/isolate.rs): every abnormal end of a decision (a fatal
//! signal, an allocation that fails under the address-space limit, the time
//! bound) answers with the refusal rendered before deciding, in both
//! protocols: exit 2 with the reason on stderr, or exit 0 with a `deny`
//! object. Never a crash, silence or an exit code an agent reads as "no
//! objection". Each case has a positive control beside it.

use crate::agents_support;

use std::io::Write as _;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use agents_support::{World, bin, code, stderr, stdout};
use serde_json::{Value, json};

fn input(w: &World, command: &str) -> String {
    json!({"session_id": "bounds", "cwd": w.work, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}})
    .to_string()
}

fn spawn(w: &World, args: &[&str], env: &[(&str, &str)], stdin: &str) -> std::process::Child {
    let mut c = w.command(bin());
    c.arg("hook")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("spawn safe-exec hook");
    let mut i = child.stdin.take().expect("stdin");
    i.write_all(stdin.as_bytes()).expect("write input");
    drop(i);
    child
}

fn run(w: &World, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
    spawn(w, args, env, stdin).wait_with_output().expect("wait")
}

fn json_decision(o: &Output) -> (String, String) {
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)));
    let h = &v["hookSpecificOutput"];
    (
        h["permissionDecision"].as_str().unwrap_or("?").to_string(),
        h["permissionDecisionReason"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    )
}

/// Pids of processes whose command line contains `marker`.
fn pids_with(marker: &str) -> Vec<i32> {
    let o = Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .expect("pgrep");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// A profile whose validator hangs (`sleep` with a marker value), so that
/// the hook is still deciding when the test signals it.
fn hanging_profile(w: &World, marker: &str) -> String {
    let prof = w.home.join(format!("hang-{marker}.toml"));
    std::fs::write(
        &prof,
        format!(
            "extends = \"default\"\n[validator]\ncommand = [\"/bin/sleep\", \"{marker}\"]\ntimeout_ms = 60000\n"
        ),
    )
    .expect("write profile");
    prof.display().to_string()
}

#[test]
fn a_fatal_signal_while_deciding_is_a_refusal_in_both_protocols() {
    let w = World::new();
    // Positive control: the command is allowed (no output, exit 0) when
    // nothing goes wrong.
    let o = run(&w, &[], &[], &input(&w, "git status"));
    assert_eq!((code(&o), stdout(&o)), (0, String::new()), "{}", stderr(&o));
    let signals = [
        ("SEGV", libc::SIGSEGV),
        ("ABRT", libc::SIGABRT),
        ("BUS", libc::SIGBUS),
        ("ILL", libc::SIGILL),
        ("FPE", libc::SIGFPE),
        ("SYS", libc::SIGSYS),
    ];
    for (i, (name, sig)) in signals.iter().enumerate() {
        for json_mode in [false, true] {
            let marker = format!("4{i}{}.25", u8::from(json_mode));
            let prof = hanging_profile(&w, &marker);
            let mut args = vec!["--profile", prof.as_str()];
            if json_mode {
                args.push("--json");
            }
            let child = spawn(
                &w,
                &args,
                &[("SAFE_EXEC_HOOK_TIMEOUT_MS", "30000")],
                &input(&w, "git status"),
            );
            // Wait until the hook is deciding (its validator runs).
            let t = Instant::now();
            while pids_with(&format!("sleep {marker}")).is_empty() {
                assert!(
                    t.elapsed() < Duration::from_secs(20),
                    "validator never started"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            // SAFETY: signals the hook process this test started.
            assert_eq!(unsafe { libc::kill(child.id() as i32, *sig) }, 0);
            let o = child.wait_with_output().expect("wait");
            if json_mode {
                assert_eq!(code(&o), 0, "SIG{name}: {}", stderr(&o));
                let (kind, why) = json_decision(&o);
                assert_eq!(kind, "deny", "SIG{name}");
                assert!(why.contains("could not decide"), "SIG{name}: {why}");
                assert!(why.contains("deciding failed"), "SIG{name}: {why}");
            } else {
                assert_eq!(code(&o), 2, "SIG{name}: {}", stderr(&o));
                assert!(o.stdout.is_empty(), "SIG{name}: {}", stdout(&o));
                assert!(
                    stderr(&o).contains("deciding failed"),
                    "SIG{name}: {}",
                    stderr(&o)
                );
            }
            // The validator does not outlive the hook.
            let t = Instant::now();
            while !pids_with(&format!("sleep {marker}")).is_empty() {
                assert!(
                    t.elapsed() < Duration::from_secs(5),
                    "SIG{name}: validator left running"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

#[test]
fn the_time_bound_is_a_refusal_in_both_protocols() {
    let w = World::new();
    let prof = hanging_profile(&w, "43.75");
    for (ms, json_mode) in [("300", false), ("300", true), ("1500", false)] {
        let mut args = vec!["--profile", prof.as_str()];
        if json_mode {
            args.push("--json");
        }
        let t = Instant::now();
        let o = run(
            &w,
            &args,
            &[("SAFE_EXEC_HOOK_TIMEOUT_MS", ms)],
            &input(&w, "git status"),
        );
        let took = t.elapsed();
        let limit: u64 = ms.parse().expect("ms");
        assert!(
            took >= Duration::from_millis(limit) && took < Duration::from_millis(limit + 3000),
            "{ms} ms: answered after {took:?}"
        );
        let why = if json_mode {
            assert_eq!(code(&o), 0, "{}", stderr(&o));
            let (kind, why) = json_decision(&o);
            assert_eq!(kind, "deny");
            why
        } else {
            assert_eq!(code(&o), 2, "{}", stderr(&o));
            assert!(o.stdout.is_empty());
            stderr(&o)
        };
        assert!(
            why.contains(&format!("longer than {ms} ms")),
            "{ms} ms: {why}"
        );
    }
    // Positive control: a time bound the decision fits in.
    let o = run(
        &w,
        &[],
        &[("SAFE_EXEC_HOOK_TIMEOUT_MS", "5000")],
        &input(&w, "git status"),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn an_allocation_failing_under_the_address_space_limit_is_a_refusal() {
    let w = World::new();
    let mb = 1 << 20;
    let commands = [
        format!("git status # {}", "x".repeat(2 * mb)),
        format!("echo '{}'", "y".repeat(2 * mb)),
        format!("echo {}", "z ".repeat(mb)),
        format!("ls {}", "a/".repeat(mb)),
        // The parser bombs of issue 13, padded so that they need memory.
        format!("<<E$[\t\t # {}", "x".repeat(2 * mb)),
        format!("${{x/ << $( ) ' {}", "x".repeat(2 * mb)),
    ];
    for c in &commands {
        let head: String = c.chars().take(16).collect();
        // Positive control: without the lowered limit the hook answers
        // from the policy (an allow or a reasoned refusal), not the bound.
        let o = run(&w, &["--json"], &[], &input(&w, c));
        assert_eq!(code(&o), 0, "{head:?}: {}", stderr(&o));
        if !o.stdout.is_empty() {
            let (_, why) = json_decision(&o);
            assert!(!why.contains("deciding failed"), "{head:?}: {why}");
        }
        let low = [("SAFE_EXEC_HOOK_MEMORY_MB", "1")];
        let o = run(&w, &[], &low, &input(&w, c));
        assert_eq!(code(&o), 2, "{head:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{head:?}");
        assert!(
            stderr(&o).contains("deciding failed"),
            "{head:?}: {}",
            stderr(&o)
        );
        // The allocation failed (std's message), then abort(3): the
        // SIGABRT handler gave the refusal.
        assert!(
            stderr(&o).contains("memory allocation of"),
            "{head:?}: {}",
            stderr(&o)
        );
        let o = run(&w, &["--json"], &low, &input(&w, c));
        assert_eq!(code(&o), 0, "{head:?}: {}", stderr(&o));
        let (kind, why) = json_decision(&o);
        assert_eq!(kind, "deny", "{head:?}");
        assert!(why.contains("deciding failed"), "{head:?}: {why}");
    }
}
