//! Issue 13: parsing and deciding are bounded; every failure is a refusal.
//! The inputs that made brush-parser 0.4.0 loop and allocate without bound
//! are answered quickly and never allowed; a decision that exceeds the
//! memory bound (lowered here with `SAFE_EXEC_DECIDE_MEMORY_LIMIT`) is a
//! refusal in `check` and in both hook protocols, with a positive control.
use crate::common::policy as common;
use common::*;

use serde_json::Value;
use std::time::Duration;

fn hook(w: &World, json_mode: bool, cmd: &str, env: &[(&str, &str)]) -> (i32, String) {
    let args: &[&str] = if json_mode { &["--json"] } else { &[] };
    let out = w.hook_bash(args, env, cmd);
    (code(&out), stdout(&out))
}

#[test]
fn parser_bombs_are_refused_quickly() {
    let w = World::new();
    for s in [
        "<<E$[\t\t",
        "<<E$[\t\t'",
        "${x/ << $( ) '",
        "<<-E$((\t\t",
        "a <<E <<F$[\t\t",
    ] {
        let (out, took) = w.run(["check", "--json", "--unconfined", "-c", s]);
        assert!(took < Duration::from_secs(5), "{s:?} took {took:?}");
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_ne!(v["decision"], "allow", "{s:?}");
        assert!(matches!(code(&out), 2 | 3), "{s:?}: exit {}", code(&out));
        let (c, _) = hook(&w, false, s, &[]);
        assert_eq!(c, 2, "{s:?}: hook must block");
        let (c, o) = hook(&w, true, s, &[]);
        let v: Value = serde_json::from_str(o.trim()).expect("hook json");
        assert_eq!(c, 0);
        assert!(matches!(
            v["hookSpecificOutput"]["permissionDecision"].as_str(),
            Some("deny" | "ask")
        ));
    }
}

#[test]
fn exceeding_the_memory_bound_is_a_refusal() {
    let w = World::new();
    let low = [("SAFE_EXEC_DECIDE_MEMORY_LIMIT", "4096")];
    // Positive control: without the lowered bound, `ls` is allowed.
    let (out, _) = w.run(["check", "--json", "-c", "ls"]);
    assert_eq!(code(&out), 0);
    let mut c = w.cmd();
    c.env(low[0].0, low[0].1)
        .args(["check", "--json", "-c", "ls"]);
    let out = c.output().expect("check");
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["decision"], "deny");
    assert!(v["reasons"][0].as_str().unwrap_or("").contains("bound"));
    let (c, _) = hook(&w, false, "ls", &low);
    assert_eq!(c, 2, "hook must block");
    let (c, o) = hook(&w, true, "ls", &low);
    assert_eq!(c, 0);
    let v: Value = serde_json::from_str(o.trim()).expect("hook json");
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    // A raised value is ignored (the bound can only be lowered).
    let mut c = w.cmd();
    c.env("SAFE_EXEC_DECIDE_MEMORY_LIMIT", "999999999999999")
        .args(["check", "--json", "-c", "ls"]);
    assert_eq!(code(&c.output().expect("check")), 0);
}
