//! `safe-exec hook` goes through the same layers as run mode: the audit log
//! records its decisions and the agent's post events, and a blocking
//! `pre_tool_use` hook of the profile can refuse.

use crate::agents_support;

use agents_support::{World, code, stderr};

fn profile(w: &World, extra: &str) -> String {
    let state = w.work.join("../state");
    std::fs::create_dir_all(&state).expect("state dir");
    let path = w.work.join("../profile.toml");
    let text = format!(
        "extends = \"default\"\n[audit]\nenabled = true\nfile = \"{}\"\non_error = \"fail\"\n{extra}",
        state.join("audit.jsonl").display()
    );
    std::fs::write(&path, text).expect("profile");
    path.to_string_lossy().into_owned()
}

fn records(w: &World) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(w.work.join("../state/audit.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).expect("audit line is JSON"))
        .collect()
}

fn input(event: &str, command: &str) -> String {
    serde_json::json!({
        "session_id": "sess-1",
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": command},
    })
    .to_string()
}

#[test]
fn decisions_and_post_events_are_audited() {
    let w = World::new();
    let p = profile(&w, "");
    let out = w.run(
        &["hook", "--profile", &p],
        &input("PreToolUse", "git status"),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = w.run(&["hook", "--profile", &p], &input("PreToolUse", "rm -rf ~"));
    assert_eq!(code(&out), 2);
    let out = w.run(
        &["hook", "--profile", &p],
        &input("PostToolUse", "git status"),
    );
    assert_eq!(code(&out), 0);
    assert!(out.stdout.is_empty(), "post events print nothing");
    let out = w.run(
        &["hook", "--profile", &p],
        &input("PostToolUseFailure", "cargo test"),
    );
    assert_eq!(code(&out), 0);
    let recs = records(&w);
    let decisions: Vec<_> = recs.iter().filter(|r| r["kind"] == "decision").collect();
    assert_eq!(decisions.len(), 2, "{recs:#?}");
    assert_eq!(decisions[0]["decision"], "allow");
    assert_eq!(decisions[1]["decision"], "deny");
    assert!(
        decisions.iter().all(|r| r["session"] == "sess-1"),
        "{decisions:#?}"
    );
    let results: Vec<_> = recs.iter().filter(|r| r["kind"] == "result").collect();
    assert_eq!(results.len(), 2, "{recs:#?}");
    assert_eq!(results[0]["status"], "ok");
    assert_eq!(results[1]["status"], "failed");
    assert!(results.iter().all(|r| r["reported_by"] == "agent"));
}

#[test]
fn a_blocking_profile_hook_refuses_through_the_agent_hook() {
    let w = World::new();
    let script = w.work.join("../deny-hook.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho '{\"decision\":\"deny\",\"reason\":\"change freeze\"}'\n",
    )
    .expect("hook");
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .expect("chmod");
    let p = profile(
        &w,
        &format!(
            "[[hook]]\nevent = \"pre_tool_use\"\ncommand = [\"{}\"]\nmatcher = \"git\"\n",
            script.display()
        ),
    );
    let out = w.run(
        &["hook", "--profile", &p],
        &input("PreToolUse", "git status"),
    );
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("change freeze"), "{}", stderr(&out));
    // Positive control: the matcher does not select `ls`.
    let out = w.run(&["hook", "--profile", &p], &input("PreToolUse", "ls"));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}
