//! Review of round eleven, confined and for real (F7, F4, F3): the
//! supervisor puts back what a script (the policy cannot see inside it)
//! changed in a nested repository whose `.git` is a gitfile (a linked
//! worktree, a separate git directory), in a nested bare git directory,
//! and in the links on the way of a protected link chain. Harmless
//! payloads, as root and as the test user; an ordinary file written by the
//! same script stays (the positive control), and a run writing only beside
//! the protected files ends normally.
use super::supervisor::{git, prep, repo, run_as, who};
use crate::common::sandbox as common;
use common::*;
use std::path::Path;

fn script_run(w: &World, who: super::supervisor::Who, body: &str) -> std::process::Output {
    let _ = w.script("r11h.sh", body);
    let s = w.work.join("r11h.sh").display().to_string();
    prep(w, who);
    let cwd = w.work.display().to_string();
    let out = run_as(w, who, &["--cwd", &cwd, "--", &s]);
    let _ = std::fs::remove_file(w.work.join("r11h.sh"));
    out
}

fn restored(out: &std::process::Output, what: &str) {
    assert_eq!(code(out), 126, "{what}: {}", stderr(out));
    assert!(
        stderr(out).contains("changed protected files"),
        "{what}: {}",
        stderr(out)
    );
}

/// A workspace holding `wtsrc` (hooks path `h4`) with its linked worktree
/// `wt`, a repository `x/n3` whose git directory is `gd3`, and a bare
/// clone `B` with a worktree `B/main`.
fn workspace(w: &World) {
    let d = &w.work;
    git(d, &["init", "-q", "-b", "main", "wtsrc"]);
    let src = d.join("wtsrc");
    std::fs::write(src.join("a.txt"), "a\n").unwrap();
    git(&src, &["add", "a.txt"]);
    git(&src, &["commit", "-qm", "init"]);
    git(&src, &["config", "core.hooksPath", "h4"]);
    git(&src, &["worktree", "add", "-q", "../wt"]);
    std::fs::create_dir_all(d.join("wt/h4")).unwrap();
    std::fs::create_dir_all(d.join("x")).unwrap();
    let gd3 = d.join("gd3").display().to_string();
    git(
        d,
        &["init", "-q", &format!("--separate-git-dir={gd3}"), "x/n3"],
    );
    git(d, &["clone", "-q", "--bare", "wtsrc", "B"]);
    git(&d.join("B"), &["worktree", "add", "-q", "main"]);
}

/// F7 and F4: the worktree's hooks path, the separate git directory's
/// config and hooks, the bare clone's, and a gitfile pointed elsewhere.
#[test]
fn f7_f4_gitfile_and_bare_repositories_are_restored() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        for (body, check) in [
            (
                "printf '#!/bin/sh\\necho x\\n' > wt/h4/pre-commit\n",
                "wt/h4/pre-commit",
            ),
            (
                "printf '#!/bin/sh\\n' > gd3/hooks/pre-commit\n",
                "gd3/hooks/pre-commit",
            ),
            (
                "printf '[core]\\n\\tfsmonitor = x\\n' >> gd3/config\n",
                "gd3/config",
            ),
            (
                "printf '#!/bin/sh\\n' > B/hooks/pre-commit\n",
                "B/hooks/pre-commit",
            ),
            (
                "printf '[core]\\n\\tfsmonitor = x\\n' >> B/config\n",
                "B/config",
            ),
            ("echo 'gitdir: /nonexistent' > wt/.git\n", "wt/.git"),
            ("echo 'gitdir: /nonexistent' > x/n3/.git\n", "x/n3/.git"),
            (
                "printf '[core]\\n\\tfsmonitor = x\\n' >> B/worktrees/main/config.worktree\n",
                "B/worktrees/main/config.worktree",
            ),
        ] {
            let w = World::new();
            workspace(&w);
            let before = std::fs::read(w.work.join(check)).ok();
            let out = script_run(&w, who, &format!("{body}echo ok > notes.txt\n"));
            restored(&out, check);
            assert_eq!(
                std::fs::read(w.work.join(check)).ok(),
                before,
                "{who:?}: {check} was not put back"
            );
            assert_eq!(
                std::fs::read_to_string(w.work.join("notes.txt")).unwrap(),
                "ok\n",
                "{who:?}: {check}"
            );
        }
        // Positive control: writes in the same repositories beside their
        // git files end normally.
        let w = World::new();
        workspace(&w);
        let out = script_run(
            &w,
            who,
            "echo ok > wt/notes.txt\necho ok > x/n3/notes.txt\necho ok > B/main/notes.txt\n",
        );
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert!(w.work.join("B/main/notes.txt").exists());
    }
}

/// F3: the links on the way of a protected link chain (`.git/hooks ->
/// ../l2 -> gh`, `.envrc -> e1 -> real.sh`, `.claude -> l1 -> real`)
/// pointed elsewhere are put back.
#[test]
fn f3_links_on_the_way_of_a_protected_chain_are_restored() {
    if !require_landlock() {
        return;
    }
    fn layout(w: &World) {
        let d = &w.work;
        repo(w);
        std::fs::create_dir_all(d.join("gh")).unwrap();
        std::fs::create_dir_all(d.join("real")).unwrap();
        std::fs::remove_dir_all(d.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink("../l2", d.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink("gh", d.join("l2")).unwrap();
        std::os::unix::fs::symlink("l1", d.join(".claude")).unwrap();
        std::os::unix::fs::symlink("real", d.join("l1")).unwrap();
        std::fs::write(d.join("real.sh"), "export A=1\n").unwrap();
        std::os::unix::fs::symlink("real.sh", d.join("e1")).unwrap();
        std::os::unix::fs::symlink("e1", d.join(".envrc")).unwrap();
    }
    for who in who() {
        for (body, link, was) in [
            (
                "mkdir ogh && printf '#!/bin/sh\\n' > ogh/pre-commit && chmod +x ogh/pre-commit\nrm l2 && ln -s ogh l2\n",
                "l2",
                "gh",
            ),
            (
                "mkdir other && echo '{}' > other/settings.json\nrm l1 && ln -s other l1\n",
                "l1",
                "real",
            ),
            (
                "echo 'touch x' > evil.sh\nrm e1 && ln -s evil.sh e1\n",
                "e1",
                "real.sh",
            ),
        ] {
            let w = World::new();
            layout(&w);
            let out = script_run(&w, who, &format!("{body}echo ok > notes.txt\n"));
            restored(&out, link);
            assert_eq!(
                std::fs::read_link(w.work.join(link)).unwrap(),
                Path::new(was),
                "{who:?}: {link} was not put back"
            );
            assert_eq!(
                std::fs::read_to_string(w.work.join("notes.txt")).unwrap(),
                "ok\n",
                "{who:?}: {link}"
            );
        }
        assert!(!Path::new("/nonexistent-f3").exists());
        // Positive control: a new link beside the chain stays.
        let w = World::new();
        layout(&w);
        let out = script_run(&w, who, "ln -s gh l3\necho ok > notes.txt\n");
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert_eq!(
            std::fs::read_link(w.work.join("l3")).unwrap(),
            Path::new("gh")
        );
        assert!(!w.work.join("gh/pre-commit").exists());
    }
}
