//! Review of round eleven, the holes left open at its merge (F6, F8, F9,
//! F11): decided in both modes where the finding applies, with the exact
//! decision and positive controls beside each refusal.
use crate::common::policy as common;
use common::*;

/// F6: a nested repository's protected entries that are symbolic links
/// (`app/.git/hooks -> ../hk`, `app/.claude -> cl`, a bare git directory's
/// `hooks -> hk2`): where they lead is protected as the root's own are
/// (review 10 R11), by the link's spelling and by the target's.
#[test]
fn a_nested_repositorys_linked_entries_protect_their_targets() {
    let w = World::new();
    let c = &w.cwd;
    for d in [
        "app/.git",
        "app/hk",
        "app/cl",
        "app/src",
        "app2/.git/hooks",
        "app2/.claude",
        "B/objects",
        "B/refs",
        "B/hk2",
    ] {
        std::fs::create_dir_all(c.join(d)).unwrap();
    }
    std::fs::write(c.join("app/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(c.join("B/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::os::unix::fs::symlink("../hk", c.join("app/.git/hooks")).unwrap();
    std::os::unix::fs::symlink("cl", c.join("app/.claude")).unwrap();
    std::os::unix::fs::symlink("hk2", c.join("B/hooks")).unwrap();
    const P: &str = "protected";
    expect(
        &w,
        &[
            (
                "printf '#!/bin/sh\\n' > app/.git/hooks/pre-commit",
                "deny",
                "deny",
                P,
            ),
            ("echo x > app/hk/pre-commit", "deny", "deny", P),
            ("cp Cargo.toml app/hk/post-merge", "deny", "deny", P),
            ("echo '{}' > app/.claude/settings.json", "deny", "deny", P),
            ("echo '{}' > app/cl/settings.json", "deny", "deny", P),
            ("tee app/cl/settings.json < Cargo.toml", "deny", "deny", P),
            ("cd app && echo x > hk/pre-commit", "deny", "deny", P),
            ("echo x > B/hk2/pre-commit", "deny", "deny", P),
            ("echo x > B/hooks/pre-commit", "deny", "deny", P),
            // The same entries as real directories (the existing rule).
            ("echo x > app2/.git/hooks/pre-commit", "deny", "deny", P),
            ("echo x > app2/.claude/settings.json", "deny", "deny", P),
            // Positive controls: beside the targets, in the same
            // repositories.
            ("echo x > app/notes.txt", "allow", "allow", ""),
            ("echo x > app/hk.md", "allow", "allow", ""),
            ("echo x > app/src/main.rs", "allow", "allow", ""),
            ("cp Cargo.toml app/src/x.toml", "allow", "allow", ""),
            ("echo x > B/notes", "allow", "allow", ""),
        ],
    );
}
