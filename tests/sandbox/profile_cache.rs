//! The loaded-profile cache (`{state}/profiles/`, src/profile/cache.rs):
//! whoever writes an entry sets the policy, so it must be as hard for a
//! command to write as the profile itself. A sandboxed command gets EACCES
//! and leaves every entry untouched (the state directory is in the default
//! profile's `deny_read`: Landlock grants it nothing); an unconfined command
//! (the hook without `--rewrite`) that writes there is refused by the policy,
//! in every spelling. Each denial has its positive control.
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use crate::common::sandbox as common;
use common::*;
use serde_json::json;

/// The cache entries in the world's state directory, with their contents.
fn entries(w: &World) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(w.state.join("profiles"))
        .map(|d| {
            d.flatten()
                .map(|e| (e.path(), std::fs::read(e.path()).expect("read entry")))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn a_sandboxed_command_cannot_write_the_profile_cache() {
    let Some(w) = landlock_world() else {
        return;
    };
    // A run with a profile file caches it before the sandbox starts.
    let out = w.run(&["/bin/true"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let before = entries(&w);
    assert_eq!(before.len(), 1, "one entry: {before:?}");
    let entry = before[0].0.display().to_string();
    let new = w.state.join("profiles/forged.json").display().to_string();
    assert_eq!(
        w.probe(&["open-write", &entry]),
        EACCES,
        "overwrite an entry"
    );
    assert_eq!(w.probe(&["create", &new]), EACCES, "create an entry");
    assert_eq!(w.probe(&["unlink", &entry]), EACCES, "remove an entry");
    assert_eq!(
        w.probe(&["mkdir", &w.state.join("profiles/d").display().to_string()]),
        EACCES
    );
    // Untouched (each run above added the entry of its own fresh profile
    // file; the first one is as it was) and nothing forged.
    let after = entries(&w);
    assert_eq!(after.iter().find(|e| e.0 == before[0].0), Some(&before[0]));
    assert!(!Path::new(&new).exists());
    assert!(
        after
            .iter()
            .all(|e| e.0.extension().is_some_and(|x| x == "json"))
    );
    // Positive controls: the same operations in the project.
    std::fs::write(w.work.join("f"), "original\n").expect("write");
    assert_eq!(w.probe(&["open-write", &w.w("f")]), 0);
    assert_eq!(w.probe(&["create", &w.w("new.json")]), 0);
    assert_eq!(w.probe(&["unlink", &w.w("f")]), 0);
}

fn hook(w: &World, profile: &Path, tool: &str, input: serde_json::Value) -> Output {
    let stdin = json!({"session_id":"s","cwd":w.work,"hook_event_name":"PreToolUse",
        "tool_name":tool,"tool_input":input})
    .to_string();
    let mut child = w
        .safe_exec()
        .arg("hook")
        .arg("--profile")
        .arg(profile)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("hook output")
}

#[test]
fn an_unconfined_command_that_writes_the_profile_cache_is_refused() {
    // No sandbox here: the hook without --rewrite, where the static policy
    // is the only guard.
    let w = World::new();
    let profile = w.base.join("agent.toml");
    std::fs::write(&profile, "extends = \"default\"\n").expect("write profile");
    let out = hook(&w, &profile, "Bash", json!({"command": "ls"}));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let before = entries(&w);
    assert_eq!(before.len(), 1, "the hook cached its profile: {before:?}");
    let entry = before[0].0.display().to_string();
    let dir = w.state.join("profiles").display().to_string();
    let work = w.work.display().to_string();
    for command in [
        format!("echo '{{}}' > {entry}"),
        format!("printf x >> {entry}"),
        format!("cp /etc/hostname {entry}"),
        format!("cp /etc/hostname {dir}/forged.json"),
        format!("tee {entry} < /dev/null"),
        format!("mv {work}/x {entry}"),
        format!("sed -i s/a/b/ {entry}"),
        format!("truncate -s 0 {entry}"),
        format!("rm -rf {dir}"),
        format!("rm {entry}"),
        format!("ln -sf {work}/x {entry}"),
        format!("cd {dir} && echo x > forged.json"),
        format!("dd if=/dev/zero of={entry} count=1"),
    ] {
        let out = hook(&w, &profile, "Bash", json!({ "command": command }));
        assert_eq!(code(&out), 2, "{command}: not refused: {}", stderr(&out));
    }
    for (tool, input) in [
        ("Write", json!({"file_path": entry, "content": "{}"})),
        (
            "Write",
            json!({"file_path": format!("{dir}/forged.json"), "content": "{}"}),
        ),
        (
            "Edit",
            json!({"file_path": entry, "old_string": "1", "new_string": "2"}),
        ),
    ] {
        let out = hook(&w, &profile, tool, input.clone());
        assert_eq!(
            code(&out),
            2,
            "{tool} {input}: not refused: {}",
            stderr(&out)
        );
    }
    assert_eq!(entries(&w), before, "the cache is untouched");
    // Positive controls: the same writes in the project are allowed.
    for command in [
        format!("echo '{{}}' > {work}/f.json"),
        format!("cp /etc/hostname {work}/g.json"),
    ] {
        let out = hook(&w, &profile, "Bash", json!({ "command": command }));
        assert_eq!(code(&out), 0, "{command}: {}", stderr(&out));
    }
    let out = hook(
        &w,
        &profile,
        "Write",
        json!({"file_path": format!("{work}/h.json"), "content": "{}"}),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}
