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
    // A target outside the nested repository: its spelling is protected.
    std::fs::create_dir_all(c.join("app3/.git")).unwrap();
    std::fs::create_dir_all(c.join("shared3")).unwrap();
    std::os::unix::fs::symlink("../shared3", c.join("app3/.claude")).unwrap();
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
            ("echo '{}' > app3/.claude/settings.json", "deny", "deny", P),
            (
                "cp Cargo.toml app3/.claude/settings.json",
                "deny",
                "deny",
                P,
            ),
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

/// (decision, reasons) of `check --json [--unconfined] -c CMD` with the
/// caller's `PATH` set to `path`.
fn decide_with_path(w: &World, unconfined: bool, path: &str, cmd: &str) -> (String, String) {
    let mut c = w.cmd();
    c.arg("check").arg("--json");
    if unconfined {
        c.arg("--unconfined");
    }
    c.args(["-c", cmd]).env("PATH", path);
    let out = c.output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v["decision"].as_str().unwrap_or("?").to_string(),
        reasons(&v),
    )
}

fn exe(p: &std::path::Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// F8: a program reached through `PATH` (or run from a system directory)
/// that is a script whose `#!/usr/bin/env NAME` line looks `NAME` up
/// through the same `PATH`: when that finds `NAME` first in a directory
/// inside a writable root, the project's program would run unconfined
/// (`npm list` ran a project `node`). And `git help`/`npm help` run `man`
/// through `PATH`. Confined, the sandbox contains them (allowed).
#[test]
fn an_env_shebangs_interpreter_found_in_the_project_asks_unconfined() {
    let w = World::new();
    // Tools installed outside the roots (like /usr/bin/npm).
    let sys = w.etc.join("bin");
    exe(&sys.join("npm"), "#!/usr/bin/env node\nrequire('npm')\n");
    let sys2 = w.etc.join("bin2");
    exe(&sys2.join("npm"), "#!/usr/bin/env -S node --no-warnings\n");
    exe(&sys.join("pnpm"), "#!/usr/bin/env -i PATH=x nodeish\n");
    exe(&sys.join("nodeish"), "#!/usr/bin/env node\n");
    exe(&sys.join("tsc"), "#!/bin/sh\nexec echo tsc\n");
    exe(&sys.join("node"), "#!/bin/sh\n");
    // The project's own.
    exe(
        &w.cwd.join("node_modules/.bin/node"),
        "#!/bin/sh\ntouch PWN\n",
    );
    exe(&w.cwd.join(".venv/bin/man"), "#!/bin/sh\ntouch PWN\n");
    exe(&w.cwd.join("sub/node"), "#!/bin/sh\ntouch PWN\n");
    std::fs::create_dir_all(w.cwd.join("src")).unwrap();
    let s = sys.display().to_string();
    let nm = w.cwd.join("node_modules/.bin").display().to_string();
    let venv = w.cwd.join(".venv/bin").display().to_string();
    let first = format!("{nm}:{s}:/usr/bin:/bin");
    let first2 = format!("{nm}:{}:/usr/bin:/bin", sys2.display());
    let last = format!("{s}:/usr/bin:/bin:{nm}");
    let man_first = format!("{venv}:/usr/bin:/bin");
    let rel = format!(".:{s}:/usr/bin:/bin");
    const ENV: &str = "which looks `node` up through PATH";
    let cases: &[(&str, &str, &str, &str)] = &[
        (&first, "npm list", "ask", ENV),
        (&first, "npm list --depth=0", "ask", ENV),
        (&first, "npm --version", "ask", ENV),
        (&first2, "npm --version", "ask", ENV),
        // A chain: `pnpm` runs `nodeish`, which runs `node`.
        (&first, "pnpm --version", "ask", ENV),
        // A relative entry, after a `cd` (review 11 F5's class).
        (&rel, "cd sub && npm list", "ask", ENV),
        // `man` of `git help`/`npm help`.
        (&man_first, "git help log", "ask", "runs `man` through PATH"),
        (
            &man_first,
            "npm help install",
            "ask",
            "runs `man` through PATH",
        ),
        // Controls: the project's directory last, no such interpreter
        // there, a script without `env`, no project entry.
        (&last, "npm list", "allow", ""),
        (&first, "tsc --version", "allow", ""),
        (&rel, "npm list", "allow", ""),
        (&format!("{s}:/usr/bin:/bin"), "npm list", "allow", ""),
        ("/usr/bin:/bin", "git help log", "allow", ""),
        (
            &format!("/usr/bin:/bin:{venv}"),
            "git help log",
            "allow",
            "",
        ),
    ];
    let mut fails = Vec::new();
    for (path, cmd, want, reason) in cases {
        let (d, why) = decide_with_path(&w, true, path, cmd);
        if d != *want || (d != "allow" && !why.contains(reason)) {
            fails.push(format!(
                "unconfined PATH={path} {cmd:?}: {d} ({why}), want {want} {reason:?}"
            ));
        }
        let (d, why) = decide_with_path(&w, false, path, cmd);
        if d != "allow" {
            fails.push(format!(
                "confined PATH={path} {cmd:?}: {d} ({why}), want allow"
            ));
        }
    }
    assert!(fails.is_empty(), "\n  {}", fails.join("\n  "));
}

/// F9: a repository the same string makes (`git init X`, `git clone URL
/// X`, `git -C D init X`) is a nested repository for the string's later
/// writes, as it is one call later.
#[test]
fn a_repository_made_by_the_string_is_nested_for_its_later_writes() {
    let w = World::new();
    std::fs::create_dir_all(w.cwd.join("t")).unwrap();
    std::fs::create_dir_all(w.cwd.join("sub")).unwrap();
    std::fs::write(w.cwd.join("t/.envrc"), "export A=1\n").unwrap();
    std::fs::write(w.cwd.join("t/a.txt"), "a\n").unwrap();
    std::fs::create_dir_all(w.cwd.join("u")).unwrap();
    std::fs::write(w.cwd.join("u/a.txt"), "a\n").unwrap();
    const P: &str = "protected";
    expect(
        &w,
        &[
            (
                "git init newapp && mkdir -p newapp/.claude && echo x > newapp/.claude/settings.json",
                "deny",
                "deny",
                P,
            ),
            (
                "git init newapp && echo x > newapp/.envrc",
                "deny",
                "deny",
                P,
            ),
            (
                "git init -q --initial-branch=main newapp && echo x > newapp/.envrc",
                "deny",
                "deny",
                P,
            ),
            ("git init newapp && cp -r t/. newapp", "deny", "deny", P),
            (
                "git -C sub init app && echo x > sub/app/.envrc",
                "deny",
                "deny",
                P,
            ),
            (
                "git clone https://example.org/x/repo.git && echo x > repo/.envrc",
                "deny",
                "deny",
                P,
            ),
            // Positive controls: ordinary files of the new repository.
            (
                "git init newapp && echo x > newapp/README.md",
                "allow",
                "allow",
                "",
            ),
            (
                "git init newapp && mkdir -p newapp/src && echo x > newapp/src/a.rs",
                "allow",
                "allow",
                "",
            ),
            ("git init newapp && cp -r u/. newapp", "allow", "allow", ""),
            (
                "git init newapp && echo x > .gitignore",
                "allow",
                "allow",
                "",
            ),
        ],
    );
}

/// F11: the link scan of protected trees stops at its bound; past it,
/// an unconfined write asks (naming the tree and what to do) instead of
/// passing without the links the scan did not reach. Confined, the
/// supervisor's snapshot covers the tree.
#[test]
fn a_protected_tree_too_large_for_the_link_scan_fails_closed() {
    let w = World::new();
    let c = &w.cwd;
    std::fs::create_dir_all(c.join(".vscode/bulk")).unwrap();
    std::fs::create_dir_all(c.join("cfg")).unwrap();
    std::fs::write(c.join("cfg/tasks.json"), "{}\n").unwrap();
    std::os::unix::fs::symlink("../cfg/tasks.json", c.join(".vscode/tasks.json")).unwrap();
    // Positive control first: the same layout with a small tree.
    expect(
        &w,
        &[
            ("echo x > cfg/tasks.json", "deny", "deny", "protected"),
            ("echo x > notes.txt", "allow", "allow", ""),
        ],
    );
    for i in 0..10_100 {
        std::fs::write(c.join(format!(".vscode/bulk/f{i}")), "").unwrap();
    }
    const TOO_LARGE: &str = "holds more entries than are looked through for links";
    for cmd in [
        "echo x > cfg/tasks.json",
        "echo x > notes.txt",
        "touch src/x.rs",
    ] {
        let (d, why) = decide(&w, true, cmd);
        assert_eq!(d, "ask", "unconfined {cmd:?}: {why}");
        assert!(why.contains(TOO_LARGE), "unconfined {cmd:?}: {why}");
        assert!(why.contains(".vscode"), "unconfined {cmd:?}: {why}");
    }
    // Confined: ordinary writes are allowed; reads never ask.
    let (d, why) = decide(&w, false, "echo x > notes.txt");
    assert_eq!(d, "allow", "confined: {why}");
    let (d, why) = decide(&w, true, "cat cfg/tasks.json");
    assert_eq!(d, "allow", "unconfined read: {why}");
}
