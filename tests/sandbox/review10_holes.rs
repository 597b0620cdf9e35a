//! The review of round ten's holes, confined and for real (R7, R11): the
//! supervisor puts back what a script (the policy cannot see inside it)
//! changed in the hooks directory named by the `core.hooksPath` of the
//! repository above the cwd, and behind protected entries that are
//! symlinks to directories. Harmless payloads, as root and as the test
//! user; an ordinary file written by the same script stays (the positive
//! control).
use super::supervisor::{git, prep, repo, run_as, who};
use crate::common::sandbox as common;
use common::*;

fn script_run(
    w: &World,
    who: super::supervisor::Who,
    cwd: &std::path::Path,
    body: &str,
) -> std::process::Output {
    let _ = w.script("r10h.sh", body);
    let s = w.work.join("r10h.sh").display().to_string();
    prep(w, who);
    let cwd = cwd.display().to_string();
    let out = run_as(w, who, &["--cwd", &cwd, "--", &s]);
    let _ = std::fs::remove_file(w.work.join("r10h.sh"));
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

/// R7: the cwd `tools/` of a repository whose hooks path is `tools/hooks`.
#[test]
fn r7_hooks_path_above_the_cwd_is_restored() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        for (body, how) in [
            (
                "printf '#!/bin/sh\\necho x\\n' > hooks/pre-commit\necho ok > notes.txt\n",
                "create",
            ),
            (
                "printf 'echo x\\n' >> hooks/post-commit\necho ok > notes.txt\n",
                "append",
            ),
            (
                "printf '#!/bin/sh\\necho x\\n' > n && mv n hooks/post-commit\necho ok > notes.txt\n",
                "rename over",
            ),
        ] {
            let w = World::new();
            repo(&w);
            git(&w.work, &["config", "core.hooksPath", "tools/hooks"]);
            std::fs::create_dir_all(w.work.join("tools/hooks")).unwrap();
            std::fs::write(w.work.join("tools/hooks/post-commit"), "#!/bin/sh\n").unwrap();
            let tools = w.work.join("tools");
            let out = script_run(&w, who, &tools, &format!("cd {}\n{body}", tools.display()));
            restored(&out, how);
            assert!(
                !tools.join("hooks/pre-commit").exists(),
                "{who:?} {how}: the hook stayed"
            );
            assert_eq!(
                std::fs::read_to_string(tools.join("hooks/post-commit")).unwrap(),
                "#!/bin/sh\n",
                "{who:?} {how}"
            );
            assert_eq!(
                std::fs::read_to_string(tools.join("notes.txt")).unwrap(),
                "ok\n",
                "{who:?} {how}"
            );
        }
        // Positive control: a run that writes only beside the hooks ends
        // normally.
        let w = World::new();
        repo(&w);
        git(&w.work, &["config", "core.hooksPath", "tools/hooks"]);
        std::fs::create_dir_all(w.work.join("tools/hooks")).unwrap();
        let tools = w.work.join("tools");
        let out = script_run(
            &w,
            who,
            &tools,
            &format!("cd {}\necho ok > hooks.md\n", tools.display()),
        );
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert!(tools.join("hooks.md").exists());
    }
}

/// R11: `.git/hooks -> ../githooks`, `.git -> gd`, `.claude ->
/// shared/claude`: what the command changes behind the links is put back.
#[test]
fn r11_directory_links_are_restored_at_their_targets() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        for (layout, body, check) in [
            (
                "hooks",
                "printf '#!/bin/sh\\necho x\\n' > githooks/pre-commit\necho ok > notes.txt\n",
                "githooks/pre-commit",
            ),
            (
                "hooks",
                "echo 'echo x' >> githooks/post-merge\necho ok > notes.txt\n",
                "githooks/post-merge",
            ),
            (
                "gitdir",
                "printf '[core]\\n\\tfsmonitor = x\\n' >> gd/config\necho ok > notes.txt\n",
                "gd/config",
            ),
            (
                "gitdir",
                "printf '#!/bin/sh\\n' > gd/hooks/pre-commit\necho ok > notes.txt\n",
                "gd/hooks/pre-commit",
            ),
            (
                "claude",
                "echo '{}' > shared/claude/settings.json\necho ok > notes.txt\n",
                "shared/claude/settings.json",
            ),
        ] {
            let w = World::new();
            repo(&w);
            match layout {
                "hooks" => {
                    std::fs::create_dir_all(w.work.join("githooks")).unwrap();
                    std::fs::write(w.work.join("githooks/post-merge"), "#!/bin/sh\n").unwrap();
                    std::fs::remove_dir_all(w.work.join(".git/hooks")).unwrap();
                    std::os::unix::fs::symlink("../githooks", w.work.join(".git/hooks")).unwrap();
                }
                "gitdir" => {
                    std::fs::rename(w.work.join(".git"), w.work.join("gd")).unwrap();
                    std::os::unix::fs::symlink("gd", w.work.join(".git")).unwrap();
                }
                _ => {
                    std::fs::create_dir_all(w.work.join("shared/claude")).unwrap();
                    std::os::unix::fs::symlink("shared/claude", w.work.join(".claude")).unwrap();
                }
            }
            let before = std::fs::read(w.work.join(check)).ok();
            let out = script_run(&w, who, &w.work.clone(), body);
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
        // Positive control: beside the targets, a run ends normally.
        let w = World::new();
        repo(&w);
        std::fs::create_dir_all(w.work.join("githooks")).unwrap();
        std::fs::remove_dir_all(w.work.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink("../githooks", w.work.join(".git/hooks")).unwrap();
        let out = script_run(&w, who, &w.work.clone(), "echo ok > githooks.md\n");
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
    }
}

/// R7's sibling below the root, confined: a nested repository's own
/// `core.hooksPath` directory is put back.
#[test]
fn r7_nested_repository_hooks_path_is_restored() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        git(&w.work, &["init", "-q", "app"]);
        git(
            &w.work.join("app"),
            &["config", "core.hooksPath", "tools/hooks"],
        );
        std::fs::create_dir_all(w.work.join("app/tools/hooks")).unwrap();
        let out = script_run(
            &w,
            who,
            &w.work.clone(),
            "printf '#!/bin/sh\\necho x\\n' > app/tools/hooks/pre-commit\necho ok > app/tools/notes.txt\n",
        );
        restored(&out, "nested hooks path");
        assert!(
            !w.work.join("app/tools/hooks/pre-commit").exists(),
            "{who:?}"
        );
        assert!(w.work.join("app/tools/notes.txt").exists(), "{who:?}");
    }
}

/// Review 11, F10: the hooks path is a link at the repository's top
/// (`hl -> tools/hooks`, outside the root `tools/`) that leads into the
/// root: what it leads to is protected.
#[test]
fn f10_hooks_path_through_a_link_into_the_root_is_restored() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        std::fs::create_dir_all(w.work.join("tools/hooks")).unwrap();
        std::os::unix::fs::symlink("tools/hooks", w.work.join("hl")).unwrap();
        git(&w.work, &["config", "core.hooksPath", "hl"]);
        let tools = w.work.join("tools");
        let out = script_run(
            &w,
            who,
            &tools,
            &format!(
                "cd {}\nprintf '#!/bin/sh\\necho x\\n' > hooks/pre-commit\necho ok > notes.txt\n",
                tools.display()
            ),
        );
        restored(&out, "through hl");
        assert!(
            !tools.join("hooks/pre-commit").exists(),
            "{who:?}: the hook stayed"
        );
        assert_eq!(
            std::fs::read_to_string(tools.join("notes.txt")).unwrap(),
            "ok\n",
            "{who:?}"
        );
        // Positive control: the same run writing only beside the hooks.
        let w = World::new();
        repo(&w);
        std::fs::create_dir_all(w.work.join("tools/hooks")).unwrap();
        std::os::unix::fs::symlink("tools/hooks", w.work.join("hl")).unwrap();
        git(&w.work, &["config", "core.hooksPath", "hl"]);
        let tools = w.work.join("tools");
        let out = script_run(
            &w,
            who,
            &tools,
            &format!("cd {}\necho ok > notes.txt\n", tools.display()),
        );
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert_eq!(
            std::fs::read_to_string(tools.join("notes.txt")).unwrap(),
            "ok\n"
        );
    }
}

/// Review 12, F5: the hooks path is a link to a hooks directory not made
/// yet (`hl -> tools/hooks`, dangling); a confined run makes it and a hook
/// in it: put back.
#[test]
fn f5_hooks_path_through_a_link_not_made_yet_is_restored() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        std::fs::create_dir_all(w.work.join("tools")).unwrap();
        std::os::unix::fs::symlink("tools/hooks", w.work.join("hl")).unwrap();
        git(&w.work, &["config", "core.hooksPath", "hl"]);
        let tools = w.work.join("tools");
        let out = script_run(
            &w,
            who,
            &tools,
            &format!(
                "cd {}\nmkdir hooks\nprintf '#!/bin/sh\\necho x\\n' > hooks/pre-commit\necho ok > notes.txt\n",
                tools.display()
            ),
        );
        restored(&out, "dangling hl");
        assert!(
            !tools.join("hooks/pre-commit").exists(),
            "{who:?}: the hook stayed"
        );
        assert_eq!(
            std::fs::read_to_string(tools.join("notes.txt")).unwrap(),
            "ok\n",
            "{who:?}"
        );
    }
}
