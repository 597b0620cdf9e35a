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

/// A profile file with many custom rules decides the same at its first
/// start (loaded from the TOML, which writes the cache entry) and at every
/// later one (from the entry, each rule's definition read only when the
/// command contains one of its keywords); `rules list` and `profile check`
/// see every rule either way, and a damaged entry is rebuilt.
#[test]
fn a_cached_profile_with_many_rules_decides_as_its_file() {
    let w = crate::common::world::World::new();
    let profile = w.dirs.base.join("many.toml");
    let mut text = String::from("extends = \"default\"\n");
    for i in 0..120 {
        let severity = if i % 4 == 0 { "critical" } else { "warning" };
        text.push_str(&format!(
            "\n[[rule]]\nid = \"many-{i}\"\nlabel = \"many {i}\"\ndescription = \"d\"\npattern = '^manytool{i}( |$)'\ncategory = \"c\"\nseverity = \"{severity}\"\nplatform = \"all\"\nexamples = {{ match = [\"manytool{i} --x\"], not_match = [\"manytool{i}x\", \"ls\"] }}\n"
        ));
    }
    std::fs::write(&profile, text).expect("write profile");
    let mut commands: Vec<String> = [
        "ls -la",
        "git status && cargo test",
        "rm -rf ~",
        "echo manytool4",
        "manytool7x",
        "sudo manytool8 now",
        "bash -c 'manytool12 a; manytool13 b'",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    commands.extend((0..120).step_by(7).map(|i| format!("manytool{i} --x")));
    let check = |cmd: &str| {
        let o = w
            .safe_exec()
            .args(["check", "--json", "--profile"])
            .arg(&profile)
            .args(["-c", cmd])
            .output()
            .expect("safe-exec check");
        // What decides (the sandbox part lists `/tmp`, which other tests
        // change meanwhile).
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        let keep = [
            "decision",
            "matched_rules",
            "reasons",
            "reason_details",
            "severity",
            "risk",
        ];
        let decided: Vec<&serde_json::Value> = keep.iter().map(|k| &v[*k]).collect();
        (
            o.status.code(),
            serde_json::to_string(&decided).expect("json"),
        )
    };
    let list = || {
        let o = w
            .safe_exec()
            .args(["rules", "list", "--json", "--profile"])
            .arg(&profile)
            .output()
            .expect("rules list");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // The first start loads the TOML and writes the entry.
    let first: Vec<_> = commands.iter().map(|c| check(c)).collect();
    let entry = std::fs::read_dir(w.dirs.state.join("profiles"))
        .expect("cache dir")
        .flatten()
        .map(|e| e.path())
        .next()
        .expect("an entry");
    let written = std::fs::read(&entry).expect("entry");
    assert!(
        first.iter().any(|(c, _)| *c == Some(2)) && first.iter().any(|(c, _)| *c == Some(0)),
        "{first:?}"
    );
    // Every later start: the same decisions, from the entry (not
    // rewritten: a rewrite is a rename, a new inode).
    use std::os::unix::fs::MetadataExt as _;
    let inode = || std::fs::metadata(&entry).expect("entry").ino();
    let written_ino = inode();
    for (cmd, want) in commands.iter().zip(&first) {
        assert_eq!(&check(cmd), want, "{cmd}");
    }
    assert_eq!(std::fs::read(&entry).expect("entry"), written);
    assert_eq!(inode(), written_ino, "the entry was not used");
    let listed = list();
    assert_eq!(listed.matches("\"many-").count(), 120, "{listed}");
    // A damaged entry (a rule's severity changed under the header's hash)
    // is not used: the same decisions, the entry rewritten.
    let damaged = String::from_utf8_lossy(&written).replace(
        "\"id\":\"many-8\",\"label\":\"many 8\",\"description\":\"d\",\"pattern\":\"^manytool8( |$)\",\"category\":\"c\",\"severity\":\"critical\"",
        "\"id\":\"many-8\",\"label\":\"many 8\",\"description\":\"d\",\"pattern\":\"^manytool8( |$)\",\"category\":\"c\",\"severity\":\"warning\"",
    );
    assert_ne!(damaged.as_bytes(), &written[..]);
    std::fs::write(&entry, damaged).expect("damage the entry");
    assert_eq!(check("sudo manytool8 now"), first[5]);
    assert_eq!(std::fs::read(&entry).expect("entry"), written);
    assert_ne!(inode(), written_ino, "the damaged entry was used");
    assert_eq!(list(), listed);
    // `profile check` checks every rule's examples, cached or not.
    let o = w
        .safe_exec()
        .args(["profile", "check"])
        .arg(&profile)
        .output()
        .expect("profile check");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("all examples hold"));
}

/// Under a system `pin`, a cache entry in a state directory that the
/// environment chose (`SAFE_EXEC_STATE_DIR`: the agent's to set for a later
/// command) is never read, so a forged one cannot stand in for the pinned
/// profile; a `state_dir` the system configuration names is used as before.
#[test]
fn a_pinned_profile_is_never_taken_from_a_cache_the_environment_chose() {
    let w = World::new();
    let pinned = w.base.join("pinned.toml");
    std::fs::write(
        &pinned,
        "extends = \"default\"\n[[rule]]\nid = \"frob\"\nlabel = \"l\"\ndescription = \"d\"\npattern = '(?i)\\bfrobnicate\\b'\ncategory = \"c\"\nseverity = \"critical\"\nplatform = \"all\"\nexamples = { match = [\"frobnicate x\"], not_match = [\"ls\"] }\n",
    )
    .expect("write profile");
    let evil = w.tmp.join("evil");
    let system = w.base.join("system.toml");
    let configure = |extra: &str| {
        std::fs::write(
            &system,
            format!("profile = \"{}\"\n{extra}", pinned.display()),
        )
        .expect("write system config");
    };
    let check = |state: &Path| {
        let out = w
            .safe_exec()
            .env("SAFE_EXEC_SYSTEM_CONFIG", &system)
            .env("SAFE_EXEC_STATE_DIR", state)
            .args(["check", "-c", "ls frobnicate"])
            .output()
            .expect("run safe-exec");
        code(&out)
    };
    let entries_in = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir.join("profiles"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    };

    // Unpinned, the environment's state directory holds the cache (the
    // environment could name any profile anyway): an entry is written, and
    // a forged one is read (the control that shows the forgery works).
    configure("");
    assert_eq!(check(&evil), 2, "the rule denies");
    let entry = entries_in(&evil).pop().expect("an entry in the chosen dir");
    let text = std::fs::read_to_string(&entry).expect("entry");
    let forged = text.replace("frobnicate", "frobnicatez");
    assert_ne!(forged, text);
    // Whole again (the rules' offsets and the hash), as a forger writes it.
    let forged = safe_exec::profile::cache::reseal(&forged).expect("reseal");
    std::fs::write(&entry, &forged).expect("forge");
    assert_eq!(
        check(&evil),
        0,
        "control: the forged entry is read unpinned"
    );

    // Pinned: the same forged entry is not read, and nothing is cached there.
    configure("pin = true\n");
    std::fs::write(&entry, &forged).expect("forge");
    assert_eq!(check(&evil), 2, "pinned profile taken from a forged entry");
    assert_eq!(std::fs::read_to_string(&entry).expect("entry"), forged);
    let fresh = w.tmp.join("fresh");
    assert_eq!(check(&fresh), 2);
    assert!(
        entries_in(&fresh).is_empty(),
        "cached under a pin: {fresh:?}"
    );

    // Pinned with the system configuration's own state_dir: cached there
    // (and the environment's directory is still not read).
    let system_state = w.base.join("system-state");
    configure(&format!(
        "pin = true\nstate_dir = \"{}\"\n",
        system_state.display()
    ));
    assert_eq!(check(&evil), 2);
    assert_eq!(
        entries_in(&system_state).len(),
        1,
        "cached in the system's state_dir"
    );
    assert_eq!(check(&evil), 2, "from the system's cache");
}
