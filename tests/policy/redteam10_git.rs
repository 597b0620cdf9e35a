//! Red team 10's git classes, decided in both modes with the exact
//! decision: F1 (git writes whose paths come from content: patches,
//! branches, stashes, the index; quoted pathspec globs), F5 (a root inside
//! a protected directory; a root above other repositories), F9 (dynamic
//! protected paths: `core.hooksPath`, `include.path`), F12 (`checkout -B`,
//! `switch -C`), F13/F14/F21 (git directories not named `.git`). Every
//! refusal has a positive control beside it.
use crate::common::policy as common;
use common::*;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A world whose project is a repository with one commit.
fn repo() -> World {
    let w = World::new();
    git(&w.cwd, &["init", "-q"]);
    git(&w.cwd, &["commit", "-q", "--allow-empty", "-m", "init"]);
    w
}

/// A world whose cwd is `rel` below the project (the agent `cd`ed there).
fn world_in(w: World, rel: &str) -> World {
    let mut w = w;
    let cwd = w.cwd.join(rel).canonicalize().expect("cwd");
    w.cwd = cwd.clone();
    w.dirs.cwd = cwd;
    w
}

const CONTENT: &str = "paths chosen by content";

#[test]
fn f1_content_named_git_writes_ask_unconfined() {
    let w = repo();
    std::fs::write(w.cwd.join("notes.diff"), "diff --git a/x b/x\n").unwrap();
    expect(
        &w,
        &[
            ("cat notes.diff | git apply", "allow", "ask", CONTENT),
            ("git apply missing.diff", "allow", "ask", CONTENT),
            ("git am p.mbox", "allow", "ask", CONTENT),
            ("git checkout evil", "allow", "ask", CONTENT),
            ("git switch evil", "allow", "ask", CONTENT),
            ("git merge evil", "allow", "ask", CONTENT),
            ("git merge --squash evil", "allow", "ask", CONTENT),
            ("git cherry-pick -n abc123", "allow", "ask", CONTENT),
            ("git revert HEAD", "allow", "ask", CONTENT),
            ("git stash pop", "allow", "ask", CONTENT),
            ("git stash apply", "allow", "ask", CONTENT),
            ("git reset --keep evil", "allow", "ask", CONTENT),
            // Positive controls: inspecting a patch, a branch that stays
            // on the same commit, paths named literally.
            ("git apply notes.diff", "allow", "allow", ""),
            ("git apply --check notes.diff", "allow", "allow", ""),
            ("git apply --stat notes.diff", "allow", "allow", ""),
            (
                "git apply --numstat --summary notes.diff",
                "allow",
                "allow",
                "",
            ),
            ("git checkout -b feature", "allow", "allow", ""),
            ("git switch -c feature", "allow", "allow", ""),
            ("git checkout -- src", "allow", "allow", ""),
            ("git checkout HEAD -- src/main.rs", "allow", "allow", ""),
            ("git stash", "allow", "allow", ""),
            ("git reset HEAD~1", "allow", "allow", ""),
            ("git merge --abort", "allow", "allow", ""),
            ("git status", "allow", "allow", ""),
        ],
    );
}

#[test]
fn f1_literal_patch_files_are_read_for_their_paths() {
    let w = repo();
    let patch = |target: &str| {
        format!(
            "diff --git a/{target} b/{target}\nnew file mode 100644\n--- /dev/null\n+++ b/{target}\n@@ -0,0 +1 @@\n+x\n"
        )
    };
    std::fs::write(
        w.cwd.join("claude.diff"),
        patch(".claude/settings.local.json"),
    )
    .unwrap();
    std::fs::write(w.cwd.join("envrc.diff"), patch(".envrc")).unwrap();
    std::fs::write(w.cwd.join("hook.diff"), patch(".git/hooks/pre-commit")).unwrap();
    std::fs::write(
        w.cwd.join("trad.diff"),
        "--- a/x\n+++ b/.vscode/tasks.json\n@@ -1 +1 @@\n-a\n+b\n",
    )
    .unwrap();
    std::fs::write(w.cwd.join("ok.diff"), patch("src/new.rs")).unwrap();
    std::fs::write(
        w.cwd.join("link.diff"),
        "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n",
    )
    .unwrap();
    expect(
        &w,
        &[
            (
                "git apply claude.diff",
                "allow",
                "deny",
                "the patch names it",
            ),
            (
                "git apply < envrc.diff",
                "allow",
                "deny",
                "the patch names it",
            ),
            ("git apply hook.diff", "allow", "deny", "the patch names it"),
            ("git apply trad.diff", "allow", "deny", "the patch names it"),
            (
                "git apply ok.diff claude.diff",
                "allow",
                "deny",
                "the patch names it",
            ),
            (
                "cd src && git apply ../claude.diff",
                "allow",
                "deny",
                "the patch names it",
            ),
            // Not fully seen: a symlink, a pipe, a file this string writes.
            ("git apply link.diff", "allow", "ask", CONTENT),
            ("cat ok.diff | git apply", "allow", "ask", CONTENT),
            (
                "cp claude.diff ok.diff && git apply ok.diff",
                "allow",
                "ask",
                CONTENT,
            ),
            // Positive controls.
            ("git apply ok.diff", "allow", "allow", ""),
            ("git apply < ok.diff", "allow", "allow", ""),
            ("git apply --check claude.diff", "allow", "allow", ""),
        ],
    );
}

#[test]
fn f1_quoted_pathspec_globs_are_broad() {
    let w = repo();
    expect(
        &w,
        &[
            ("git checkout evil -- '*.json'", "deny", "deny", "too broad"),
            ("git checkout evil -- '.envr?'", "deny", "deny", "too broad"),
            ("git checkout HEAD -- '*'", "deny", "deny", "too broad"),
            ("git checkout evil -- \".c*\"", "deny", "deny", "too broad"),
            (
                "git restore -s evil -- '*.json'",
                "deny",
                "deny",
                "too broad",
            ),
            (
                "git restore --source evil -W -- '.[e]nvrc'",
                "deny",
                "deny",
                "too broad",
            ),
            ("git restore -- '*'", "deny", "deny", "too broad"),
            ("git rm -r '*'", "deny", "deny", "too broad"),
            ("git add -f '.e*'", "allow", "ask", "glob git expands"),
            // Positive controls: a glob under a subdirectory, a literal
            // file, the shell's own glob.
            ("git checkout HEAD -- 'src/*.rs'", "allow", "allow", ""),
            ("git restore --staged '*.json'", "allow", "allow", ""),
            ("git stash push -- '*.rs'", "allow", "allow", ""),
            ("git restore src/main.rs", "allow", "allow", ""),
            ("git add src/*.rs", "allow", "allow", ""),
        ],
    );
}

#[test]
fn f1_update_index_paths_are_compared_with_protected() {
    let w = repo();
    let sha = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
    let bad = [
        format!("git update-index --add --cacheinfo 100644,{sha},.vscode/tasks.json"),
        format!("git update-index --add --cacheinfo 100644 {sha} .envrc"),
        format!("git update-index --add --cacheinfo=100644,{sha},.claude/settings.json"),
    ];
    let good = format!("git update-index --add --cacheinfo 100644,{sha},src/new.rs");
    let mut cases: Vec<(&str, &str, &str, &str)> = bad
        .iter()
        .map(|c| (c.as_str(), "allow", "deny", "protected"))
        .collect();
    cases.push((good.as_str(), "allow", "allow", ""));
    expect(&w, &cases);
}

#[test]
fn f12_force_creating_a_branch_is_refused_like_branch_f() {
    let w = repo();
    expect(
        &w,
        &[
            (
                "git checkout -B main HEAD~5",
                "deny",
                "deny",
                "overwrites an existing branch",
            ),
            (
                "git switch -C main HEAD~5",
                "deny",
                "deny",
                "overwrites an existing branch",
            ),
            (
                "git switch --force-create main",
                "deny",
                "deny",
                "overwrites an existing branch",
            ),
            (
                "git branch -f main HEAD~1",
                "deny",
                "deny",
                "overwrites an existing branch",
            ),
            ("git checkout -b topic", "allow", "allow", ""),
            ("git switch -c topic", "allow", "allow", ""),
        ],
    );
}

const NOT_DOT_GIT: &str = "not named `.git`";
const LOCAL: &str = "local repository";

#[test]
fn f14_new_git_dirs_and_local_remotes_ask_unconfined() {
    let w = repo();
    std::fs::create_dir_all(w.cwd.join("b")).unwrap();
    expect(
        &w,
        &[
            ("git init -q --bare b", "allow", "ask", NOT_DOT_GIT),
            (
                "git init --separate-git-dir gd sub",
                "allow",
                "ask",
                NOT_DOT_GIT,
            ),
            // Controls: a plain init.
            ("git init -q newrepo", "allow", "allow", ""),
            ("git init -q", "allow", "allow", ""),
        ],
    );
    // Confined these ask for the network; unconfined for what they run.
    for (cmd, why) in [
        ("git clone --bare . b2", NOT_DOT_GIT),
        ("git clone --mirror . b2", NOT_DOT_GIT),
        ("git push -q ./b HEAD:refs/heads/x", LOCAL),
        ("git push b HEAD:x", LOCAL),
        ("git push file:///tmp/r HEAD", LOCAL),
        ("git fetch ../other", LOCAL),
        ("git pull ./b main", LOCAL),
        ("git ls-remote ./b", LOCAL),
        (
            "git init -q --bare b && printf '#!/bin/sh\\n' > b/hooks/pre-receive && git push ./b HEAD:x",
            NOT_DOT_GIT,
        ),
    ] {
        let (d, r) = decide(&w, true, cmd);
        assert_eq!(d, "ask", "{cmd}: {r}");
        assert!(r.contains(why), "{cmd}: {r}");
    }
    // A named remote is not a local path (asks only for the network).
    let (d, why) = decide(&w, true, "git push origin HEAD");
    assert!(!why.contains(LOCAL), "{d}: {why}");
}

#[test]
fn f21_separate_git_dir_of_an_existing_repository_is_refused() {
    let w = repo();
    git(&w.cwd, &["init", "-q", "sub"]);
    expect(
        &w,
        &[
            (
                "git init -q --separate-git-dir gd .",
                "deny",
                "deny",
                "moves its git directory",
            ),
            (
                "git init --separate-git-dir=gd",
                "deny",
                "deny",
                "moves its git directory",
            ),
            (
                "git init -q --separate-git-dir gd2 sub",
                "deny",
                "deny",
                "moves its git directory",
            ),
            // Control: a new repository with a separate git dir, confined.
            (
                "git init -q --separate-git-dir gd3 fresh",
                "allow",
                "ask",
                NOT_DOT_GIT,
            ),
        ],
    );
}

#[test]
fn f13_bare_layout_git_dirs_are_git_dirs() {
    let w = repo();
    let sub = w.cwd.join("sub");
    std::fs::create_dir_all(sub.join("objects")).unwrap();
    std::fs::create_dir_all(sub.join("refs/heads")).unwrap();
    std::fs::write(sub.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    // A directory that is no git dir (no `objects/`).
    std::fs::create_dir_all(w.cwd.join("plain/refs")).unwrap();
    std::fs::write(w.cwd.join("plain/HEAD"), "x\n").unwrap();
    expect(
        &w,
        &[
            (
                "cd sub && git status",
                "allow",
                "ask",
                "not a writable root's own `.git`",
            ),
            (
                "git -C sub status",
                "allow",
                "ask",
                "not a writable root's own `.git`",
            ),
            (
                "git -C sub log",
                "allow",
                "ask",
                "not a writable root's own `.git`",
            ),
            (
                "printf '[core]\\n\\tfsmonitor = x\\n' >> sub/config",
                "deny",
                "deny",
                "protected",
            ),
            ("echo x > sub/hooks/pre-commit", "deny", "deny", "protected"),
            ("cp /dev/null sub/config", "deny", "deny", "protected"),
            // Controls: other files of it, a directory that is no git dir,
            // the root's own repository.
            ("echo x > sub/description", "allow", "allow", ""),
            // Planted in one string: HEAD, then config or a hook.
            (
                "mkdir -p s2/objects s2/refs/heads && echo 'ref: refs/heads/main' > s2/HEAD && printf '[core]\\n\\tfsmonitor = x\\n' > s2/config",
                "allow",
                "deny",
                "nested repository",
            ),
            (
                "echo 'ref: refs/heads/main' > s3/HEAD && echo x > s3/hooks/pre-commit",
                "allow",
                "deny",
                "nested repository",
            ),
            // Control: a config next to a HEAD written elsewhere.
            (
                "echo x > s4/HEAD && echo y > s5/config",
                "allow",
                "allow",
                "",
            ),
            ("echo x > plain/config", "allow", "allow", ""),
            ("cd plain && git status", "allow", "allow", ""),
            ("git status", "allow", "allow", ""),
            ("cd src && git status", "allow", "allow", ""),
        ],
    );
}

#[test]
fn f13_nested_repository_git_commands_ask_unconfined() {
    let w = repo();
    git(&w.cwd, &["init", "-q", "vendor/lib"]);
    expect(
        &w,
        &[
            (
                "git -C vendor/lib status",
                "allow",
                "ask",
                "not a writable root's own `.git`",
            ),
            (
                "cd vendor/lib && git log",
                "allow",
                "ask",
                "not a writable root's own `.git`",
            ),
            ("git -C vendor status", "allow", "allow", ""),
        ],
    );
}

#[test]
fn f5_a_cwd_inside_a_protected_directory_is_no_root() {
    let base = repo();
    std::fs::create_dir_all(base.cwd.join(".claude")).unwrap();
    std::fs::create_dir_all(base.cwd.join(".venv/lib/python3.12/site-packages")).unwrap();
    let proj = base.cwd.clone();
    // cwd `.git`: its config is outside every writable root.
    let w = world_in(base, ".git");
    expect(
        &w,
        &[
            (
                "printf '[core]\\n\\tfsmonitor = x\\n' >> config",
                "deny",
                "deny",
                "outside the writable roots",
            ),
            (
                "echo x > hooks/pre-commit",
                "deny",
                "deny",
                "outside the writable roots",
            ),
            // Control: the temp dir stays writable.
            ("echo x > $TMPDIR/ok.txt", "allow", "allow", ""),
        ],
    );
    for (rel, file) in [
        (".git/hooks", "pre-commit"),
        (".claude", "settings.local.json"),
        (".venv/lib/python3.12/site-packages", "x.pth"),
    ] {
        let mut w = World::new();
        let cwd = proj.join(rel);
        w.cwd = cwd.clone();
        w.dirs.cwd = cwd;
        let (d, why) = decide(&w, false, &format!("echo x > {file}"));
        assert_eq!(d, "deny", "{rel}: {why}");
        assert!(why.contains("outside the writable roots"), "{rel}: {why}");
        let (d, why) = decide(&w, true, &format!("echo x > {file}"));
        assert_eq!(d, "deny", "{rel} unconfined: {why}");
    }
    // Control: a cwd in an ordinary subdirectory is a root.
    let mut w = World::new();
    let cwd = proj.join("src");
    w.cwd = cwd.clone();
    w.dirs.cwd = cwd;
    assert_eq!(decide(&w, false, "echo x > a.txt").0, "allow");
}

#[test]
fn f5_a_root_above_repositories_protects_theirs() {
    let w = World::new();
    git(&w.cwd, &["init", "-q", "app"]);
    std::fs::create_dir_all(w.cwd.join("app/src")).unwrap();
    git(&w.tmp, &["init", "-q", "other"]);
    expect(
        &w,
        &[
            ("echo x >> app/.git/config", "deny", "deny", "protected"),
            (
                "echo x > app/.git/hooks/pre-commit",
                "deny",
                "deny",
                "protected",
            ),
            (
                "echo x > app/.claude/settings.json",
                "deny",
                "deny",
                "protected",
            ),
            ("echo x > app/.envrc", "deny", "deny", "protected"),
            (
                "echo x >> $TMPDIR/other/.git/config",
                "deny",
                "deny",
                "protected",
            ),
            (
                "cp /dev/null \"$TMPDIR/other/.vscode/tasks.json\"",
                "deny",
                "deny",
                "protected",
            ),
            // Controls: their ordinary files, removing a scratch clone.
            ("echo x > app/src/a.txt", "allow", "allow", ""),
            ("echo x > $TMPDIR/other/README", "allow", "allow", ""),
            ("rm -rf $TMPDIR/other", "allow", "allow", ""),
        ],
    );
}

#[test]
fn f9_hooks_path_and_includes_are_protected() {
    let w = repo();
    git(&w.cwd, &["config", "core.hooksPath", ".githooks"]);
    git(&w.cwd, &["config", "include.path", "../.gitconfig.proj"]);
    std::fs::create_dir_all(w.cwd.join(".githooks")).unwrap();
    std::fs::write(w.cwd.join(".gitconfig.proj"), "[user]\n\tname = x\n").unwrap();
    expect(
        &w,
        &[
            (
                "printf '#!/bin/sh\\n' > .githooks/pre-commit",
                "deny",
                "deny",
                "protected",
            ),
            (
                "cp /dev/null .githooks/post-commit",
                "deny",
                "deny",
                "protected",
            ),
            (
                "printf '[core]\\n\\tfsmonitor = x\\n' >> .gitconfig.proj",
                "deny",
                "deny",
                "protected",
            ),
            // Controls: other files.
            ("echo x > githooks.md", "allow", "allow", ""),
            ("echo x > .gitconfig.other", "allow", "allow", ""),
        ],
    );
}

/// `safe-exec hook` on a `Write` of `file` with the hook's `cwd`: the exit
/// code (2: refused) and stderr.
fn hook_write(w: &World, cwd: &Path, file: &Path) -> (i32, String) {
    use std::io::Write as _;
    let input = serde_json::json!({
        "session_id": "policy-test",
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "x"},
    });
    let mut c = w.cmd();
    c.arg("hook")
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped());
    let mut child = c.spawn().expect("spawn hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.to_string().as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("hook");
    (code(&out), stderr(&out))
}

#[test]
fn f5_f9_file_tools_see_the_same_protection() {
    let w = repo();
    git(&w.cwd, &["config", "core.hooksPath", ".githooks"]);
    std::fs::create_dir_all(w.cwd.join(".githooks")).unwrap();
    git(&w.cwd, &["init", "-q", "app"]);
    let git_dir = w.cwd.join(".git");
    let hooks = git_dir.join("hooks");
    let refused = [
        // cwd inside `.git`, `.git/hooks`: no writable root there.
        (git_dir.clone(), git_dir.join("config")),
        (hooks.clone(), hooks.join("pre-commit")),
        // The hooks path (F9).
        (w.cwd.clone(), w.cwd.join(".githooks/pre-commit")),
        // A nested repository's protected entries from above (F5).
        (w.cwd.clone(), w.cwd.join("app/.claude/settings.json")),
        (w.cwd.clone(), w.cwd.join("app/.envrc")),
    ];
    for (cwd, file) in &refused {
        let (c, err) = hook_write(&w, cwd, file);
        assert_eq!(c, 2, "{cwd:?} {file:?}: {err}");
    }
    // Positive controls.
    for file in [w.cwd.join("src/new.rs"), w.cwd.join("app/src.rs")] {
        let (c, err) = hook_write(&w, &w.cwd, &file);
        assert_eq!(c, 0, "{file:?}: {err}");
    }
}

/// The review of round ten: sibling spellings of F1 and F14 that still
/// passed, and two false refusals. `git checkout BRANCH --` (a `--` with
/// nothing after it) and `git checkout X` where `X` is both an untracked
/// file and a branch switch branches; `git bisect` checks out commits;
/// `git --bare init` makes a bare repository like `git init --bare`;
/// `git rm --cached GLOB` only touches the index; `git apply FIFO` must
/// not wait for a writer.
#[test]
fn review10_checkout_bisect_bare_and_rm_cached() {
    let w = repo();
    git(&w.cwd, &["branch", "evil"]);
    std::fs::write(w.cwd.join("evil"), "").unwrap();
    std::fs::write(w.cwd.join("a.txt"), "a\n").unwrap();
    git(&w.cwd, &["add", "a.txt"]);
    git(&w.cwd, &["commit", "-q", "-m", "a"]);
    git(&w.cwd, &["branch", "packed-one"]);
    git(&w.cwd, &["pack-refs", "--all"]);
    std::fs::write(w.cwd.join("packed-one"), "").unwrap();
    expect(
        &w,
        &[
            ("git checkout evil --", "allow", "ask", CONTENT),
            ("git checkout evil", "allow", "ask", CONTENT),
            ("git checkout packed-one", "allow", "ask", CONTENT),
            ("git checkout HEAD~1", "allow", "ask", CONTENT),
            ("git bisect start evil HEAD", "allow", "ask", CONTENT),
            ("git bisect reset evil", "allow", "ask", CONTENT),
            ("git bisect good", "allow", "ask", CONTENT),
            ("git --bare init b2", "allow", "ask", "not named `.git`"),
            ("git init --bare b3", "allow", "ask", "not named `.git`"),
            // Positive controls.
            ("git checkout a.txt", "allow", "allow", ""),
            ("git checkout -- a.txt", "allow", "allow", ""),
            ("git checkout -- evil", "allow", "allow", ""),
            ("git bisect log", "allow", "allow", ""),
            ("git init b4", "allow", "allow", ""),
            ("git rm --cached '*.pyc'", "allow", "allow", ""),
            ("git rm -r --cached '*.log'", "allow", "allow", ""),
            ("git rm '*.pyc'", "deny", "deny", "broad"),
        ],
    );
    // A FIFO named as the patch: refused quickly (asks), not blocked.
    let fifo = w.cwd.join("p.fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success()
    );
    let t = std::time::Instant::now();
    let (d, _) = decide(&w, true, "git apply p.fifo");
    assert_eq!(d, "ask");
    assert!(
        t.elapsed() < std::time::Duration::from_secs(5),
        "git apply of a FIFO took {:?}",
        t.elapsed()
    );
}
