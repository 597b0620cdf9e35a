//! The review of round ten's holes fixed in round eleven, decided in both
//! modes with the exact decision (confined `check`, unconfined `check
//! --unconfined`; the hook where it says so): R7 (`core.hooksPath` of the
//! repository above a root that is a subdirectory), R11 (protected entries
//! that are symlinks: `.git/hooks -> ../githooks`, `.git -> gd`, `.claude
//! -> shared/claude`, a hook linked to a script), R6 (helpers an allowed
//! git runs through `PATH`), R10 (`--cacheinfo` paths from the top), R5
//! (worktrees of a bare clone). Every refusal has a positive control.
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

/// The world with its cwd `rel` below the project (the agent `cd`ed).
fn world_in(w: World, rel: &str) -> World {
    let mut w = w;
    let cwd = w.cwd.join(rel).canonicalize().expect("cwd");
    w.cwd = cwd.clone();
    w.dirs.cwd = cwd;
    w
}

const PROTECTED: &str = "protected";

/// `safe-exec hook --json` on a Bash call of `cmd` (unconfined: no
/// `--rewrite`): the decision.
fn hook_decision(w: &World, cmd: &str) -> String {
    let out = w.hook_bash(&["--json"], &[], cmd);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // An allowed call prints nothing.
    if out.stdout.is_empty() {
        return "allow".into();
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("hook --json: {e}: {}", stdout(&out));
    });
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("?")
        .to_string()
}

/// R7: the cwd is `tools/` of a repository whose `core.hooksPath` names
/// `tools/hooks` (relative to the top), in three spellings of the value;
/// the hooks directory is protected from below as from the top.
#[test]
fn r7_hooks_path_of_the_repository_above_the_cwd_is_protected() {
    for value in ["tools/hooks", "./tools/hooks/", "ABS"] {
        let w = repo();
        let v = if value == "ABS" {
            w.cwd.join("tools/hooks").display().to_string()
        } else {
            value.to_string()
        };
        git(&w.cwd, &["config", "core.hooksPath", &v]);
        std::fs::create_dir_all(w.cwd.join("tools/hooks")).unwrap();
        let w = world_in(w, "tools");
        expect(
            &w,
            &[
                (
                    "printf '#!/bin/sh\\n' > hooks/pre-commit",
                    "deny",
                    "deny",
                    PROTECTED,
                ),
                (
                    "printf '#!/bin/sh\\n' > ./hooks/../hooks/post-commit",
                    "deny",
                    "deny",
                    PROTECTED,
                ),
                ("cp /dev/null hooks/pre-push", "deny", "deny", PROTECTED),
                ("rm -rf hooks", "deny", "deny", PROTECTED),
                // Positive controls: the rest of tools/.
                ("printf x > notes.txt", "allow", "allow", ""),
                ("printf x > hooks.md", "allow", "allow", ""),
            ],
        );
        assert_eq!(
            hook_decision(&w, "printf '#!/bin/sh\\n' > hooks/pre-commit"),
            "deny",
            "{value}"
        );
        assert_eq!(hook_decision(&w, "printf x > notes.txt"), "allow");
    }
}

/// R7 from two levels below, and in a linked worktree (the configuration
/// read through its gitfile).
#[test]
fn r7_deeper_cwd_and_linked_worktree() {
    let w = repo();
    git(&w.cwd, &["config", "core.hooksPath", "a/b/hooks"]);
    std::fs::create_dir_all(w.cwd.join("a/b/hooks")).unwrap();
    let w = world_in(w, "a/b");
    expect(
        &w,
        &[
            ("printf x > hooks/pre-commit", "deny", "deny", PROTECTED),
            ("printf x > c.txt", "allow", "allow", ""),
        ],
    );
    let w = repo();
    git(&w.cwd, &["worktree", "add", "-q", "wt"]);
    git(
        &w.cwd.join("wt"),
        &["config", "core.hooksPath", "tools/hooks"],
    );
    std::fs::create_dir_all(w.cwd.join("wt/tools/hooks")).unwrap();
    let w = world_in(w, "wt/tools");
    expect(
        &w,
        &[
            ("printf x > hooks/pre-commit", "deny", "deny", PROTECTED),
            ("printf x > notes.txt", "allow", "allow", ""),
        ],
    );
}

/// R11: `.git/hooks` a symlink to a project directory (the usual recipe
/// for tracked hooks) makes that directory the hooks: a write there, by
/// either spelling, is refused; reading it and writing beside it are not.
#[test]
fn r11_hooks_directory_link_protects_its_target() {
    let w = repo();
    std::fs::create_dir_all(w.cwd.join("githooks")).unwrap();
    std::fs::write(w.cwd.join("githooks/pre-commit"), "#!/bin/sh\n").unwrap();
    std::fs::remove_dir_all(w.cwd.join(".git/hooks")).unwrap();
    std::os::unix::fs::symlink("../githooks", w.cwd.join(".git/hooks")).unwrap();
    expect(
        &w,
        &[
            (
                "printf '#!/bin/sh\\n' >> githooks/pre-commit",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "printf x > .git/hooks/post-commit",
                "deny",
                "deny",
                PROTECTED,
            ),
            ("cp /dev/null githooks/pre-push", "deny", "deny", PROTECTED),
            ("mv githooks/pre-commit old", "deny", "deny", PROTECTED),
            ("rm -rf githooks", "deny", "deny", PROTECTED),
            // Positive controls.
            ("cat githooks/pre-commit", "allow", "allow", ""),
            ("printf x > githooks.md", "allow", "allow", ""),
        ],
    );
    assert_eq!(hook_decision(&w, "printf x >> githooks/pre-commit"), "deny");
}

/// R11's siblings: `.git` a symlink to the git directory, `.claude` a
/// symlink to a shared directory, a hook that is a link to a script (F11's
/// layout, now refused unconfined too), a link inside a protected tree to
/// a directory.
#[test]
fn r11_sibling_links_protect_their_targets() {
    let w = repo();
    std::fs::rename(w.cwd.join(".git"), w.cwd.join("gd")).unwrap();
    std::os::unix::fs::symlink("gd", w.cwd.join(".git")).unwrap();
    std::fs::create_dir_all(w.cwd.join("shared/claude")).unwrap();
    std::os::unix::fs::symlink("shared/claude", w.cwd.join(".claude")).unwrap();
    std::fs::create_dir_all(w.cwd.join("scripts")).unwrap();
    std::fs::write(w.cwd.join("scripts/pc.sh"), "#!/bin/sh\n").unwrap();
    std::os::unix::fs::symlink("../../scripts/pc.sh", w.cwd.join("gd/hooks/pre-commit")).unwrap();
    std::fs::create_dir_all(w.cwd.join("vsc")).unwrap();
    std::fs::create_dir_all(w.cwd.join(".vscode")).unwrap();
    std::os::unix::fs::symlink("../vsc", w.cwd.join(".vscode/more")).unwrap();
    expect(
        &w,
        &[
            ("printf x >> gd/config", "deny", "deny", PROTECTED),
            ("printf x > gd/hooks/post-commit", "deny", "deny", PROTECTED),
            (
                "printf x > shared/claude/settings.json",
                "deny",
                "deny",
                PROTECTED,
            ),
            ("rm -rf shared", "deny", "deny", PROTECTED),
            ("printf x >> scripts/pc.sh", "deny", "deny", PROTECTED),
            ("printf x > vsc/tasks.json", "deny", "deny", PROTECTED),
            // Positive controls: beside each target.
            ("printf x > gd/notes", "allow", "allow", ""),
            ("printf x > shared/other.txt", "allow", "allow", ""),
            ("printf x > scripts/lint.sh", "allow", "allow", ""),
            ("printf x > vsc2.txt", "allow", "allow", ""),
        ],
    );
}

/// R10: `--cacheinfo` paths are the working tree's (git does not prefix
/// them with the cwd's place in it), in both spellings of the value.
#[test]
fn r10_cacheinfo_paths_are_read_from_the_top() {
    let w = repo();
    std::fs::create_dir_all(w.cwd.join("t")).unwrap();
    const E: &str = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
    let comma = format!("cd t && git update-index --add --cacheinfo 100644,{E},.envrc");
    let words = format!("cd t && git update-index --add --cacheinfo 100644 {E} .envrc");
    let eq = format!("cd t && git update-index --add --cacheinfo=100644,{E},.envrc");
    let ordinary = format!("cd t && git update-index --add --cacheinfo 100644,{E},x.txt");
    let in_t = format!("cd t && git update-index --add --cacheinfo 100644,{E},t/notes.txt");
    expect(
        &w,
        &[
            (&comma, "allow", "deny", PROTECTED),
            (&words, "allow", "deny", PROTECTED),
            (&eq, "allow", "deny", PROTECTED),
            // Positive controls: ordinary paths, from the top.
            (&ordinary, "allow", "allow", ""),
            (&in_t, "allow", "allow", ""),
        ],
    );
}

/// R5: a worktree of a bare clone lies inside the bare directory; it is a
/// writable root of its own (writes in it allowed, `git status` too), and
/// the bare directory's files stay out of reach.
#[test]
fn r5_worktree_of_a_bare_clone_is_a_root() {
    let w = repo();
    let base = w.cwd.parent().unwrap().to_path_buf();
    git(
        &base,
        &[
            "clone",
            "-q",
            "--bare",
            &w.cwd.display().to_string(),
            "bare.git",
        ],
    );
    git(&base.join("bare.git"), &["worktree", "add", "-q", "main"]);
    let mut w = w;
    let cwd = base.join("bare.git/main");
    w.cwd = cwd.clone();
    w.dirs.cwd = cwd;
    expect(
        &w,
        &[
            ("echo hi > notes.txt", "allow", "allow", ""),
            ("mkdir -p src && echo x > src/a.rs", "allow", "allow", ""),
            ("git status", "allow", "allow", ""),
            // The bare directory's configuration and hooks: outside the
            // root (and protected from above it).
            ("printf x >> ../config", "deny", "deny", "outside"),
            ("printf x > ../hooks/pre-commit", "deny", "deny", "outside"),
        ],
    );
    // Still refused: a cwd inside the bare directory's own files.
    let mut w2 = World::new();
    let refs = base.join("bare.git/refs");
    w2.cwd = refs.clone();
    w2.dirs.cwd = refs;
    expect(&w2, &[("echo hi > x", "deny", "deny", "outside")]);
}

/// `check --json [--unconfined] -c CMD` with `env` set: the decision and
/// the reasons.
fn decide_env(w: &World, unconfined: bool, env: &[(&str, String)], cmd: &str) -> (String, String) {
    let mut c = w.cmd();
    c.arg("check").arg("--json");
    if unconfined {
        c.arg("--unconfined");
    }
    c.args(["-c", cmd]);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("check");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{cmd}: {e}: {}", stderr(&out));
    });
    (
        v["decision"].as_str().unwrap_or("?").to_string(),
        reasons(&v),
    )
}

fn exe(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// R6: the helpers an allowed command runs by a bare name through `PATH`
/// (git's `ssh`, `gpg`, credential helpers, `$GIT_SSH_COMMAND`'s program;
/// tar's `gzip`; man's `groff`), found first in a `PATH` directory inside
/// the project (an activated venv's `bin/`), ask unconfined; confined,
/// the sandbox contains them. Controls: the same `PATH` without the
/// helper there, the venv after the system directories, commands that run
/// no helper.
#[test]
fn r6_path_helpers_in_a_project_directory_ask_unconfined() {
    let w = repo();
    std::fs::write(w.cwd.join("a.txt"), "a\n").unwrap();
    let venv = w.cwd.join(".venv/bin");
    exe(&venv.join("python"));
    let sys_path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    let first = vec![("PATH", format!("{}:{sys_path}", venv.display()))];
    let last = vec![("PATH", format!("{sys_path}:{}", venv.display()))];
    let cases_for = |env: &Vec<(&str, String)>, cases: &[(&str, &str, &str)], why: &str| {
        let mut fails = Vec::new();
        for (cmd, confined, unconfined) in cases {
            for (mode, want) in [(false, confined), (true, unconfined)] {
                let (d, r) = decide_env(&w, mode, env, cmd);
                if d != *want || (d != "allow" && mode && !r.contains("through PATH")) {
                    fails.push(format!(
                        "{why}: {cmd} (unconfined {mode}): {d}, want {want} ({r})"
                    ));
                }
            }
        }
        fails
    };
    // No helper in the venv: nothing asks.
    let mut fails = cases_for(
        &first,
        &[
            ("git fetch origin", "ask", "allow"),
            ("git commit -m x", "allow", "allow"),
            ("tar czf x.tgz a.txt", "allow", "allow"),
        ],
        "no helper",
    );
    exe(&venv.join("ssh"));
    exe(&venv.join("gpg"));
    exe(&venv.join("gzip"));
    exe(&venv.join("git-credential-store2"));
    fails.extend(cases_for(
        &first,
        &[
            // (Confined, these ask for the network the sandbox cuts.)
            ("git ls-remote git@127.0.0.1:x/y", "ask", "ask"),
            ("git fetch origin", "ask", "ask"),
            ("git clone git@127.0.0.1:x/y z", "ask", "ask"),
            ("git commit -m x", "allow", "ask"),
            ("git tag -s v1 -m x", "allow", "ask"),
            ("tar czf x.tgz a.txt", "allow", "ask"),
            // Positive controls: no helper run.
            ("git status", "allow", "allow"),
            ("git log --oneline", "allow", "allow"),
            ("git diff", "allow", "allow"),
            ("cat a.txt", "allow", "allow"),
        ],
        "helpers first",
    ));
    // A credential helper only the venv has is found there wherever the
    // venv is in PATH.
    fails.extend(cases_for(
        &last,
        &[("git fetch origin", "ask", "ask")],
        "credential helper",
    ));
    std::fs::remove_file(venv.join("git-credential-store2")).unwrap();
    // The venv after the system directories: their ssh, gpg, gzip run.
    if ["ssh", "gpg", "gzip"]
        .iter()
        .all(|n| sys_path.split(':').any(|d| Path::new(d).join(n).exists()))
    {
        fails.extend(cases_for(
            &last,
            &[
                ("git fetch origin", "ask", "allow"),
                ("git commit -m x", "allow", "allow"),
                ("tar czf x.tgz a.txt", "allow", "allow"),
            ],
            "venv last",
        ));
    }
    // `$GIT_SSH_COMMAND`'s program.
    exe(&venv.join("myssh"));
    let mut env = last.clone();
    env.push(("GIT_SSH_COMMAND", "myssh -v".into()));
    fails.extend(cases_for(
        &env,
        &[("git fetch origin", "ask", "ask")],
        "GIT_SSH_COMMAND",
    ));
    assert!(fails.is_empty(), "\n  {}", fails.join("\n  "));
    // The hook (unconfined) asks too.
    let out = w.hook_bash(&["--json"], &[("PATH", &first[0].1)], "git fetch origin");
    assert!(
        stdout(&out).contains("\"ask\""),
        "{} {}",
        stdout(&out),
        stderr(&out)
    );
}

/// R12: a tree moved or copied is checked entry by entry with each
/// directory looked at once (not once per entry below it): the answers
/// are those of the per-entry checks. A 3,000-entry tree: renamed, copied
/// into a new name and into a nested repository (whose `.git/hooks` the
/// tree would write), merged into the root with a `.claude/` inside.
#[test]
fn r12_large_trees_are_decided_as_before() {
    let w = repo();
    fn fill(d: &Path, depth: usize) {
        std::fs::create_dir_all(d).unwrap();
        for i in 0..10 {
            std::fs::write(d.join(format!("f{i}.txt")), "x").unwrap();
        }
        if depth < 7 {
            for j in 0..2 {
                fill(&d.join(format!("d{j}")), depth + 1);
            }
        }
    }
    fill(&w.cwd.join("big"), 0);
    // A tree that would put hooks into a nested repository.
    fill(&w.cwd.join("hooky"), 5);
    std::fs::create_dir_all(w.cwd.join("hooky/.git/hooks")).unwrap();
    std::fs::write(w.cwd.join("hooky/.git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
    git(&w.cwd, &["init", "-q", "app"]);
    fill(&w.cwd.join("withclaude"), 5);
    std::fs::create_dir_all(w.cwd.join("withclaude/.claude")).unwrap();
    std::fs::write(w.cwd.join("withclaude/.claude/settings.json"), "{}").unwrap();
    let start = std::time::Instant::now();
    expect(
        &w,
        &[
            ("mv big big2", "allow", "allow", ""),
            ("cp -r big big3", "allow", "allow", ""),
            ("cp -r big app/", "allow", "allow", ""),
            ("cp -a hooky/. app", "deny", "deny", "git"),
            ("cp -r withclaude/. .", "deny", "deny", PROTECTED),
            ("cp -r withclaude w2", "allow", "allow", ""),
        ],
    );
    // Twelve decisions of trees of up to 3,000 entries (a debug build on a
    // loaded machine: the bound is loose; before, ~0.2 s each in release).
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
}

/// R7's sibling below the root: a repository nested in the workspace
/// (`app/`) whose own `core.hooksPath` names `tools/hooks`.
#[test]
fn r7_nested_repository_hooks_path_is_protected() {
    let w = World::new();
    git(&w.cwd, &["init", "-q", "app"]);
    git(
        &w.cwd.join("app"),
        &["config", "core.hooksPath", "tools/hooks"],
    );
    std::fs::create_dir_all(w.cwd.join("app/tools/hooks")).unwrap();
    expect(
        &w,
        &[
            (
                "printf x > app/tools/hooks/pre-commit",
                "deny",
                "deny",
                PROTECTED,
            ),
            (
                "cp /dev/null app/tools/hooks/pre-push",
                "deny",
                "deny",
                PROTECTED,
            ),
            // Positive controls.
            ("printf x > app/tools/notes.txt", "allow", "allow", ""),
            ("printf x > tools-hooks.txt", "allow", "allow", ""),
        ],
    );
}

/// Review 11, F10: `core.hooksPath` names a link at the repository's top
/// (`hl -> tools/hooks`, outside the root `tools/`) that leads into the
/// root: what it leads to is protected.
#[test]
fn f10_hooks_path_through_a_link_into_the_cwd_root_is_protected() {
    let w = repo();
    std::fs::create_dir_all(w.cwd.join("tools/hooks")).unwrap();
    std::fs::write(w.cwd.join("tools/notes.txt"), "x\n").unwrap();
    std::os::unix::fs::symlink("tools/hooks", w.cwd.join("hl")).unwrap();
    git(&w.cwd, &["config", "core.hooksPath", "hl"]);
    let w = world_in(w, "tools");
    expect(
        &w,
        &[
            ("echo x > hooks/pre-commit", "deny", "deny", "protected"),
            ("echo x > ../hl/pre-commit", "deny", "deny", "protected"),
            (
                "cp notes.txt hooks/post-commit",
                "deny",
                "deny",
                "protected",
            ),
            // Positive control.
            ("echo x > notes2.txt", "allow", "allow", ""),
        ],
    );
}

/// Review 12, F5: the same link before the hooks directory exists (`hl ->
/// tools/hooks`, dangling), and a hooks path with a `..` after a link: the
/// path it will lead to is protected, not only one that exists.
#[test]
fn f5_a_hooks_path_through_a_link_not_made_yet_is_protected() {
    let w = repo();
    std::fs::create_dir_all(w.cwd.join("tools/sub")).unwrap();
    std::fs::write(w.cwd.join("tools/notes.txt"), "x\n").unwrap();
    std::os::unix::fs::symlink("tools/hooks", w.cwd.join("hl")).unwrap();
    git(&w.cwd, &["config", "core.hooksPath", "hl"]);
    let w = world_in(w, "tools");
    expect(
        &w,
        &[
            (
                "mkdir hooks && echo x > hooks/pre-commit",
                "deny",
                "deny",
                "protected",
            ),
            (
                "mkdir -p hooks; echo x > hooks/pre-push",
                "deny",
                "deny",
                "protected",
            ),
            (
                "mkdir hooks && cp notes.txt hooks/post-commit",
                "deny",
                "deny",
                "protected",
            ),
            // Positive controls.
            (
                "mkdir hooks2 && echo x > hooks2/pre-commit",
                "allow",
                "allow",
                "",
            ),
            ("echo x > sub/notes2.txt", "allow", "allow", ""),
        ],
    );
    // A `..` after a link in the value (`lnk/../hooks2`, `lnk -> tools/sub`):
    // the kernel's `..` is `tools/`.
    let w = repo();
    std::fs::create_dir_all(w.cwd.join("tools/sub")).unwrap();
    std::os::unix::fs::symlink("tools/sub", w.cwd.join("lnk")).unwrap();
    git(&w.cwd, &["config", "core.hooksPath", "lnk/../hooks2"]);
    let w = world_in(w, "tools");
    expect(
        &w,
        &[
            (
                "mkdir hooks2 && echo x > hooks2/pre-commit",
                "deny",
                "deny",
                "protected",
            ),
            (
                "mkdir hooks3 && echo x > hooks3/pre-commit",
                "allow",
                "allow",
                "",
            ),
        ],
    );
}
