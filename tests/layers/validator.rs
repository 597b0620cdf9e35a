//! Layer 2: the validator command. Allow, deny, ask, crash, non-zero exit,
//! timeout, garbage and huge output, on_execution, and that it can only
//! tighten the policy's decision.

use crate::layers_support;

use std::time::Instant;

use layers_support::*;
use serde_json::Value;

fn with_validator(env: &Env, body: &str, extra: &str) {
    let v = env.script(
        "validator.sh",
        &record_then(env.dir.path(), "validator.in", body),
    );
    env.profile(&format!(
        "[validator]\ncommand = [\"{}\"]\ntimeout_ms = 1000\n{extra}",
        v.display()
    ));
}

#[test]
fn allow_keeps_the_decision_and_gets_the_whole_context() {
    let env = Env::new();
    with_validator(&env, "echo '{\"decision\":\"allow\"}'", "");
    let o = env.run(&["--session", "s1", "--agent", "claude", "--", "echo", "hi"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), "hi\n");
    let ctx = &env.json_lines("validator.in")[0];
    for k in [
        "command_struct",
        "raw_command",
        "command_form",
        "session_state",
        "agent",
        "opts",
        "cwd",
        "env",
        "history",
        "timestamp",
        "policy_result",
        "metadata",
    ] {
        assert!(ctx.get(k).is_some(), "missing {k} in {ctx}");
    }
    assert_eq!(ctx["event"], "validate");
    assert_eq!(ctx["raw_command"], serde_json::json!(["echo", "hi"]));
    assert_eq!(ctx["command_form"], "list");
    assert_eq!(ctx["policy_result"], "allow");
    assert_eq!(ctx["agent"], "claude");
    assert_eq!(ctx["session_id"], "s1");
    assert_eq!(ctx["command_struct"]["segments"][0]["program"], "echo");
    let env_list = ctx["env"].as_array().expect("env list");
    assert!(env_list.iter().any(|e| e["name"] == "HOME"));
    assert!(
        env_list.iter().all(|e| e.get("value").is_none()),
        "values must not leak by default"
    );
}

#[test]
fn env_values_only_when_the_profile_allows() {
    let env = Env::new();
    with_validator(&env, "echo '{\"decision\":\"allow\"}'", "env_values = true");
    let o = env.run(&["-c", "true"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let ctx = &env.json_lines("validator.in")[0];
    assert_eq!(ctx["command_form"], "string");
    assert_eq!(ctx["raw_command"], "true");
    assert!(
        ctx["env"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "HOME" && e["value"].is_string())
    );
}

#[test]
fn deny_refuses_with_reason_and_details_in_check() {
    let env = Env::new();
    with_validator(
        &env,
        "echo '{\"decision\":\"deny\",\"reason\":\"no echo today\",\"details\":{\"ticket\":7}}'",
        "",
    );
    let o = env.run(&["--", "echo", "hi"]);
    assert_eq!(code(&o), 126);
    assert!(
        stderr(&o).starts_with("safe-exec: denied:"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("no echo today"), "{}", stderr(&o));
    assert!(stderr(&o).contains("validator"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let mut c = env.cmd();
    let o = c
        .args(["check", "--json", "--profile"])
        .arg(env.path("profile.toml"))
        .args(["--", "echo", "hi"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["decided_by"], "validator");
    assert!(
        v["matched_rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "validator.deny")
    );
    let o = env
        .cmd()
        .args(["check", "--explain", "--profile"])
        .arg(env.path("profile.toml"))
        .args(["--", "echo", "hi"])
        .output()
        .unwrap();
    let text = stdout(&o);
    assert!(text.contains("layer 2 (validator): `"), "{text}");
    assert!(text.contains("no echo today"), "{text}");
    assert!(text.contains("ticket"), "details shown: {text}");
}

#[test]
fn ask_needs_a_confirmation_nobody_can_give() {
    let env = Env::new();
    with_validator(
        &env,
        "echo '{\"decision\":\"ask\",\"reason\":\"are you sure\"}'",
        "",
    );
    let o = env.run(&["--", "echo", "hi"]);
    assert_eq!(code(&o), 126);
    assert!(stderr(&o).contains("confirmation"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
}

#[test]
fn cannot_loosen_a_policy_denial() {
    let env = Env::new();
    with_validator(&env, "echo '{\"decision\":\"allow\"}'", "");
    let o = env.run(&["-c", "rm -rf /"]);
    assert_eq!(code(&o), 126);
    let ctx = &env.json_lines("validator.in")[0];
    assert!(ctx["policy_result"]["deny"].is_string(), "{ctx}");
}

fn fails_closed(body: &str, needle: &str) {
    let env = Env::new();
    with_validator(&env, body, "max_output_bytes = 4096");
    let t = Instant::now();
    let o = env.run(&["--", "echo", "hi"]);
    assert!(t.elapsed().as_secs() < 4, "took {:?}", t.elapsed());
    assert_eq!(code(&o), 126, "{}", stderr(&o));
    assert_eq!(stdout(&o), "", "the command must not run");
    let e = stderr(&o);
    assert!(e.contains("validator.sh"), "names the validator: {e}");
    assert!(e.contains(needle), "expected {needle:?} in {e}");
}

#[test]
fn crash_denies() {
    fails_closed("kill -SEGV $$", "crashed");
}

#[test]
fn nonzero_exit_denies() {
    fails_closed("echo '{\"decision\":\"allow\"}'; exit 3", "status 3");
}

#[test]
fn timeout_denies() {
    fails_closed(
        "sleep 30; echo '{\"decision\":\"allow\"}'",
        "did not answer",
    );
}

#[test]
fn garbage_denies() {
    fails_closed("echo 'sure, go ahead'", "malformed");
}

#[test]
fn missing_decision_denies() {
    fails_closed("echo '{\"verdict\":\"allow\"}'", "no valid `decision`");
}

#[test]
fn huge_output_denies() {
    fails_closed(
        "head -c 1000000 /dev/zero | tr '\\0' x",
        "more than 4096 bytes",
    );
}

#[test]
fn missing_program_denies() {
    let env = Env::new();
    env.profile("[validator]\ncommand = [\"/nonexistent/validator\"]");
    let o = env.run(&["--", "echo", "hi"]);
    assert_eq!(code(&o), 126);
    assert!(stderr(&o).contains("could not start"), "{}", stderr(&o));
}

fn on_execution(body: &str) -> (Env, std::process::Output) {
    let env = Env::new();
    let v = env.script(
        "validator.sh",
        &record_then(
            env.dir.path(),
            "validator.in",
            &format!("case \"$input\" in *'\"event\":\"on_execution\"'*) {body} ;; esac\necho '{{\"decision\":\"allow\"}}'"),
        ),
    );
    env.profile(&format!(
        "[validator]\ncommand = [\"{}\"]\ntimeout_ms = 500\nmax_output_bytes = 4096\non_execution = true",
        v.display()
    ));
    let o = env.run(&["-c", "exit 3"]);
    (env, o)
}

#[test]
fn on_execution_gets_the_result() {
    let (env, o) = on_execution("true");
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let lines = env.json_lines("validator.in");
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["event"], "validate");
    let ex = &lines[1];
    assert_eq!(ex["event"], "on_execution");
    assert_eq!(ex["result"]["exit_code"], 3);
    assert!(
        ex.get("policy_result").is_none() && ex.get("command_struct").is_none(),
        "{ex}"
    );
    assert!(ex.get("raw_command").is_some());
}

#[test]
fn on_execution_failures_are_only_logged() {
    for (body, needle) in [
        ("kill -SEGV $$", "crashed"),
        ("sleep 30", "did not answer"),
        ("exit 9", "status 9"),
        ("head -c 1000000 /dev/zero; exit 0", "more than"),
        ("echo garbage; exit 0", ""),
        (
            "echo '{\"decision\":\"deny\",\"reason\":\"x\"}'; exit 0",
            "",
        ),
    ] {
        let (_env, o) = on_execution(body);
        assert_eq!(
            code(&o),
            3,
            "{body}: exit code must be the command's: {}",
            stderr(&o)
        );
        if !needle.is_empty() {
            assert!(stderr(&o).contains(needle), "{body}: {}", stderr(&o));
            assert!(
                stderr(&o).contains("on_execution"),
                "{body}: {}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn history_from_the_guard_feeds_the_validator() {
    let env = Env::new();
    let v = env.script(
        "validator.sh",
        &record_then(
            env.dir.path(),
            "validator.in",
            "echo '{\"decision\":\"allow\"}'",
        ),
    );
    env.profile(&format!(
        "[validator]\ncommand = [\"{}\"]\n[guard]\nenabled = true",
        v.display()
    ));
    assert_eq!(code(&env.run(&["--session", "h", "--", "echo", "one"])), 0);
    assert_eq!(code(&env.run(&["--session", "h", "--", "echo", "two"])), 0);
    let lines = env.json_lines("validator.in");
    assert_eq!(lines[0]["history"].as_array().unwrap().len(), 0);
    let h = lines[1]["history"].as_array().unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0]["raw_command"], "echo one");
    assert_eq!(h[0]["decision"], "allow");
    assert_eq!(lines[1]["session_state"]["commands"], 1);
}
