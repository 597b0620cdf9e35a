//! HOME inside the `{tmp}` root (a checkout or CI HOME under /tmp): the
//! sandbox then drops `{tmp}` from the writable roots (it would hand the
//! command HOME), and the parser's trust in the harness's snapshot must
//! follow the same roots (issue 15: two definitions made the snapshot step
//! flip from allow to ask).

use crate::agents_support::{World, claude_shell_chain};

#[test]
fn snapshot_stays_trusted_when_home_is_under_tmpdir() {
    let w = World::new();
    // TMPDIR = the world's root, an ancestor of HOME.
    let root = w.home.parent().expect("root").to_path_buf();
    let check_as = |unconfined: bool, tmpdir: &std::path::Path, s: &str| -> serde_json::Value {
        let mut c = w.command(crate::agents_support::bin());
        c.env("TMPDIR", tmpdir).args(["check", "--json"]);
        if unconfined {
            c.arg("--unconfined");
        }
        let out = c.args(["-c", s]).output().expect("run");
        serde_json::from_slice(&out.stdout).expect("JSON")
    };
    let check = |tmpdir: &std::path::Path, s: &str| check_as(false, tmpdir, s);
    // The harness writes its cwd sentinel into its own temp dir.
    let chain = |tmpdir: &std::path::Path, model: &str| {
        claude_shell_chain(&w.snapshot(), model).replace(
            &crate::agents_support::sentinel(&w.snapshot())
                .display()
                .to_string(),
            &tmpdir.join("claude-3f2a-cwd").display().to_string(),
        )
    };
    // TMPDIR apart from HOME, and TMPDIR an ancestor of HOME (then `{tmp}`
    // is not a writable root, for the sandbox and the policy alike, and the
    // snapshot in HOME stays trusted).
    for tmpdir in [&w.tmp, &root] {
        let v = check(tmpdir, &chain(tmpdir, "git status"));
        assert_eq!(v["decision"], "allow", "TMPDIR={}: {v}", tmpdir.display());
        // Negative control: the model's command is still judged.
        let v = check(tmpdir, &chain(tmpdir, "rm -rf ~"));
        assert_eq!(v["decision"], "deny", "TMPDIR={}: {v}", tmpdir.display());
    }
    let v = check(&root, &chain(&root, "git status"));
    assert_eq!(v["sandbox"]["write"], serde_json::json!([w.work]), "{v}");
    // A snapshot in a directory the command may write is not trusted.
    let planted = w.work.join(".claude/shell-snapshots");
    std::fs::create_dir_all(&planted).expect("mkdir");
    let evil = planted.join(crate::agents_support::SNAPSHOT);
    std::fs::write(&evil, "rm -rf ~\n").expect("write");
    // Unconfined (the hook without --rewrite) nothing holds what it runs:
    // not allowed. Positive control: the trusted snapshot is.
    let v = check_as(
        true,
        &w.tmp,
        &claude_shell_chain(&w.snapshot(), "git status"),
    );
    assert_eq!(v["decision"], "allow", "{v}");
    let v = check_as(true, &w.tmp, &claude_shell_chain(&evil, "git status"));
    assert_ne!(v["decision"], "allow", "{v}");
    // Confined (sandbox-first), sourcing it is allowed because it runs in
    // the sandbox, but as a file whose commands cannot be checked, not as
    // the harness's trusted snapshot.
    let source_unknown = |v: &serde_json::Value| {
        v["command"]["segments"][0]["unknown"]
            .as_str()
            .is_some_and(|u| u.contains("cannot be checked"))
    };
    let v = check(&w.tmp, &claude_shell_chain(&evil, "git status"));
    assert!(source_unknown(&v), "{v}");
    assert_eq!(v["confined"], true, "{v}");
    let v = check(&w.tmp, &claude_shell_chain(&w.snapshot(), "git status"));
    assert!(!source_unknown(&v), "{v}");
}
