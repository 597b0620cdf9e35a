//! Lifecycle hooks: blocking events fail closed, notification events fail
//! open, matchers, metadata threading, global hooks order.

use crate::layers_support;

use layers_support::*;

/// A hook script that records its input to `NAME.in` and then runs `then`.
fn hook(env: &Env, name: &str, then: &str) -> String {
    let p = env.script(
        &format!("{name}.sh"),
        &record_then(env.dir.path(), &format!("{name}.in"), then),
    );
    p.display().to_string()
}

fn one_hook(env: &Env, event: &str, then: &str, extra: &str) {
    let h = hook(env, "h", then);
    env.profile(&format!(
        "[[hook]]\nevent = \"{event}\"\ncommand = [\"{h}\"]\ntimeout_ms = 500\n{extra}"
    ));
}

const FAILURES: &[(&str, &str)] = &[
    ("kill -SEGV $$", "crashed"),
    ("sleep 30", "did not answer"),
    ("echo 'not json at all'", "not a JSON object"),
    ("head -c 1000000 /dev/zero", "more than"),
    ("exit 1", "exit status 1"),
];

#[test]
fn pre_tool_use_allow_runs_and_sees_the_context() {
    let env = Env::new();
    one_hook(&env, "pre_tool_use", "echo '{\"decision\":\"allow\"}'", "");
    let o = env.run(&["--session", "s", "--", "echo", "hi"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), "hi\n");
    let ctx = &env.json_lines("h.in")[0];
    assert_eq!(ctx["event"], "pre_tool_use");
    assert_eq!(ctx["tool_name"], "Bash");
    assert_eq!(ctx["tool_input"]["command"], "echo hi");
    assert_eq!(ctx["session_id"], "s");
    assert_eq!(ctx["programs"][0], "echo");
}

#[test]
fn pre_tool_use_empty_output_continues() {
    let env = Env::new();
    one_hook(&env, "pre_tool_use", "true", "");
    assert_eq!(code(&env.run(&["--", "true"])), 0);
}

#[test]
fn pre_tool_use_deny_by_json_and_by_exit_2() {
    let env = Env::new();
    one_hook(
        &env,
        "pre_tool_use",
        "echo '{\"decision\":\"deny\",\"reason\":\"frozen branch\"}'",
        "",
    );
    let o = env.run(&["--", "echo", "hi"]);
    assert_eq!(code(&o), 126);
    assert!(stderr(&o).contains("frozen branch"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");

    let env = Env::new();
    one_hook(
        &env,
        "pre_tool_use",
        "echo 'policy says no' >&2; exit 2",
        "",
    );
    let o = env.run(&["--", "echo", "hi"]);
    assert_eq!(code(&o), 126);
    assert!(stderr(&o).contains("policy says no"), "{}", stderr(&o));
}

#[test]
fn pre_tool_use_ask_needs_confirmation() {
    let env = Env::new();
    one_hook(
        &env,
        "pre_tool_use",
        "echo '{\"decision\":\"ask\",\"reason\":\"double-check\"}'",
        "",
    );
    let o = env.run(&["--", "echo", "hi"]);
    assert_eq!(code(&o), 126);
    assert!(stderr(&o).contains("confirmation"), "{}", stderr(&o));
    assert!(stderr(&o).contains("double-check"), "{}", stderr(&o));
}

#[test]
fn blocking_hook_failures_deny() {
    for event in ["pre_tool_use", "permission_request"] {
        for (body, needle) in FAILURES {
            let env = Env::new();
            one_hook(&env, event, body, "");
            // `permission_request` fires for commands that need asking.
            let cmd: &[&str] = if event == "pre_tool_use" {
                &["--", "echo", "hi"]
            } else {
                &["--", "pkill", "frobnicate-x"]
            };
            let o = env.run(cmd);
            assert_eq!(code(&o), 126, "{event} {body}: {}", stderr(&o));
            let e = stderr(&o);
            assert!(
                e.contains("fail-closed") && e.contains(needle),
                "{event} {body}: {e}"
            );
            assert!(e.contains("h.sh"), "names the hook: {e}");
        }
    }
}

#[test]
fn permission_request_fires_only_for_asks_and_can_deny() {
    let env = Env::new();
    one_hook(
        &env,
        "permission_request",
        "echo '{\"decision\":\"deny\",\"reason\":\"nobody home\"}'",
        "",
    );
    assert_eq!(code(&env.run(&["--", "true"])), 0);
    assert!(env.read("h.in").is_empty(), "no ask, no permission_request");
    let o = env.run(&["--", "pkill", "frobnicate-x"]);
    assert_eq!(code(&o), 126);
    assert!(stderr(&o).contains("nobody home"), "{}", stderr(&o));
    assert_eq!(env.json_lines("h.in")[0]["event"], "permission_request");
}

#[test]
fn notification_hooks_never_block() {
    let outcomes = [
        (
            "echo '{\"decision\":\"deny\",\"reason\":\"x\"}'",
            "never block",
        ),
        (
            "echo '{\"decision\":\"ask\",\"reason\":\"x\"}'",
            "never block",
        ),
        ("exit 2", "never block"),
    ];
    for event in ["post_tool_use", "post_tool_use_failure"] {
        for (body, needle) in FAILURES.iter().chain(outcomes.iter()) {
            let env = Env::new();
            let h = hook(&env, "h", body);
            let g = hook(&env, "g", "true");
            env.profile(&format!(
                "[[hook]]\nevent = \"{event}\"\ncommand = [\"{h}\"]\ntimeout_ms = 500\n[[hook]]\nevent = \"{event}\"\ncommand = [\"{g}\"]\n"
            ));
            let want = if event == "post_tool_use" { 0 } else { 4 };
            let o = env.run(&["-c", &format!("exit {want}")]);
            assert_eq!(code(&o), want, "{event} {body}: {}", stderr(&o));
            assert!(
                stderr(&o).contains(needle),
                "{event} {body}: {}",
                stderr(&o)
            );
            // The next hook still fires, with the context unchanged.
            let g_in = env.json_lines("g.in");
            assert_eq!(g_in.len(), 1, "{event} {body}");
            assert_eq!(g_in[0]["event"], event);
            assert_eq!(g_in[0]["exit_code"], want);
            assert_eq!(g_in[0]["metadata"], serde_json::json!({}));
        }
    }
}

#[test]
fn post_tool_use_failure_for_denials_and_failures() {
    let env = Env::new();
    one_hook(&env, "post_tool_use_failure", "true", "");
    assert_eq!(code(&env.run(&["-c", "true"])), 0);
    assert_eq!(code(&env.run(&["-c", "rm -rf /"])), 126);
    assert_eq!(code(&env.run(&["-c", "exit 5"])), 5);
    let lines = env.json_lines("h.in");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["status"], "denied");
    assert!(lines[0]["reason"].as_str().unwrap().contains("rm"));
    assert_eq!(lines[1]["status"], "failed");
    assert_eq!(lines[1]["exit_code"], 5);
}

#[test]
fn matchers_exact_and_regex() {
    let env = Env::new();
    let a = hook(&env, "exact", "true");
    let b = hook(&env, "regex", "true");
    env.profile(&format!(
        "[[hook]]\nevent = \"pre_tool_use\"\ncommand = [\"{a}\"]\nmatcher = \"git\"\n[[hook]]\nevent = \"pre_tool_use\"\ncommand = [\"{b}\"]\nmatcher = \"^(ech|tru)\"\n"
    ));
    assert_eq!(code(&env.run(&["--", "echo", "x"])), 0);
    assert_eq!(code(&env.run(&["--", "git", "--version"])), 0);
    assert_eq!(code(&env.run(&["-c", "true && echo y"])), 0);
    assert_eq!(
        env.json_lines("exact.in").len(),
        1,
        "exact fires for git only"
    );
    assert_eq!(
        env.json_lines("regex.in").len(),
        2,
        "regex fires for echo and true"
    );
}

#[test]
fn bad_matcher_regex_is_a_profile_error() {
    let env = Env::new();
    env.profile(
        "[[hook]]\nevent = \"pre_tool_use\"\ncommand = [\"/bin/true\"]\nmatcher = \"^(git\"\n",
    );
    let o = env.run(&["--", "true"]);
    assert_eq!(code(&o), 125);
    assert!(stderr(&o).contains("not a valid regex"), "{}", stderr(&o));
    assert!(stderr(&o).contains("profile.toml:"), "{}", stderr(&o));
}

#[test]
fn metadata_threads_to_later_hooks_and_the_audit() {
    let env = Env::new();
    let a = hook(&env, "a", "echo '{\"metadata\":{\"ticket\":\"T-1\"}}'");
    let b = hook(
        &env,
        "b",
        "echo '{\"decision\":\"allow\",\"metadata\":{\"owner\":\"ops\"}}'",
    );
    let c = hook(&env, "c", "true");
    env.profile(&format!(
        "[audit]\nenabled = true\n[[hook]]\nevent = \"pre_tool_use\"\ncommand = [\"{a}\"]\n[[hook]]\nevent = \"pre_tool_use\"\ncommand = [\"{b}\"]\n[[hook]]\nevent = \"post_tool_use\"\ncommand = [\"{c}\"]\n"
    ));
    assert_eq!(code(&env.run(&["--", "true"])), 0);
    assert_eq!(env.json_lines("b.in")[0]["metadata"]["ticket"], "T-1");
    let post = &env.json_lines("c.in")[0];
    assert_eq!(post["metadata"]["ticket"], "T-1");
    assert_eq!(post["metadata"]["owner"], "ops");
    let audit = env.audit();
    assert_eq!(audit[0]["metadata"]["owner"], "ops");
    assert_eq!(audit[1]["metadata"]["ticket"], "T-1");
}

#[test]
fn global_hooks_fire_first_in_file_name_order() {
    let env = Env::new();
    let order = env.path("order");
    let mk = |name: &str| {
        env.script(
            &format!("{name}.sh"),
            &format!("cat >/dev/null; echo {name} >> '{}'", order.display()),
        )
        .display()
        .to_string()
    };
    let (a1, a2, b1, p1) = (mk("a1"), mk("a2"), mk("b1"), mk("p1"));
    let hk = |c: &str| format!("[[hook]]\nevent = \"pre_tool_use\"\ncommand = [\"{c}\"]\n");
    std::fs::write(env.path("hooks.d/20-b.toml"), hk(&b1)).unwrap();
    std::fs::write(
        env.path("hooks.d/10-a.toml"),
        format!("{}{}", hk(&a1), hk(&a2)),
    )
    .unwrap();
    std::fs::write(env.path("hooks.d/README"), "not a hook file").unwrap();
    env.profile(&hk(&p1));
    let o = env.run(&["--", "true"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(env.read("order"), "a1\na2\nb1\np1\n");
    // A system config's hooks_dir wins over the default location.
    let other = env.path("other.d");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("x.toml"), hk(&b1)).unwrap();
    std::fs::write(
        env.path("system-config.toml"),
        format!("hooks_dir = \"{}\"\n", other.display()),
    )
    .unwrap();
    std::fs::write(&order, "").unwrap();
    assert_eq!(code(&env.run(&["--", "true"])), 0);
    assert_eq!(env.read("order"), "b1\np1\n");
}

#[test]
fn broken_global_hook_file_is_an_error() {
    let env = Env::new();
    std::fs::write(
        env.path("hooks.d/10-bad.toml"),
        "[[hook]]\nevent = \"pre_tool_use\"\ncommand = [\"/bin/true\"]\nbogus = 1\n",
    )
    .unwrap();
    let o = env.run(&["--", "true"]);
    assert_eq!(code(&o), 125);
    assert!(stderr(&o).contains("10-bad.toml"), "{}", stderr(&o));
}

#[test]
fn session_start_fires_once_per_session() {
    let env = Env::new();
    one_hook(&env, "session_start", "true", "[guard]\nenabled = true");
    assert_eq!(code(&env.run(&["--session", "a", "--", "true"])), 0);
    assert_eq!(code(&env.run(&["--session", "a", "--", "true"])), 0);
    assert_eq!(code(&env.run(&["--session", "b", "--", "true"])), 0);
    let lines = env.json_lines("h.in");
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["event"], "session_start");
    assert_eq!(lines[0]["session_id"], "a");
    assert_eq!(lines[1]["session_id"], "b");
}

#[test]
fn notification_for_confirmation_needed() {
    let env = Env::new();
    one_hook(&env, "notification", "exit 1", "");
    let o = env.run(&["--", "pkill", "frobnicate-x"]);
    assert_eq!(code(&o), 126);
    let n = &env.json_lines("h.in")[0];
    assert_eq!(n["event"], "notification");
    assert_eq!(n["category"], "permission_prompt");
}
