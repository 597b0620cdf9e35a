//! Red team 10, F5, confined and for real: a root above other
//! repositories (a workspace cwd, `{tmp}` holding scratch clones) has
//! their `.git/config` and `.git/hooks/` restored by the supervisor (one
//! and two levels below the root), and a cwd inside `.git` is no writable
//! root. Harmless payloads; positive controls beside each refusal.
use super::supervisor::{git, prep, repo, run_as, who};
use crate::common::sandbox as common;
use common::*;

#[test]
fn nested_repositories_below_a_root_are_restored() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        git(&w.work, &["init", "-q", "app"]);
        std::fs::create_dir_all(w.work.join("ws")).unwrap();
        git(&w.work.join("ws"), &["init", "-q", "lib"]);
        git(&w.tmp, &["init", "-q", "other"]);
        let app_config = std::fs::read(w.work.join("app/.git/config")).unwrap();
        let lib_config = std::fs::read(w.work.join("ws/lib/.git/config")).unwrap();
        // A script file: the policy does not see the paths, the
        // supervisor answers.
        let s = w.script(
            "nested.sh",
            "printf '[core]\\n\\tfsmonitor = true\\n' >> app/.git/config\n\
             printf '[core]\\n\\tfsmonitor = true\\n' >> ws/lib/.git/config\n\
             echo 'exit 0' > \"$TMPDIR/other/.git/hooks/pre-commit\"\n\
             echo ordinary > app/notes.txt\n\
             echo ordinary > \"$TMPDIR/other/notes.txt\"\n",
        );
        prep(&w, who);
        let out = run_as(&w, who, &["--", &s]);
        assert_eq!(code(&out), 126, "{who:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("changed protected files"),
            "{who:?}: {}",
            stderr(&out)
        );
        assert_eq!(
            std::fs::read(w.work.join("app/.git/config")).unwrap(),
            app_config,
            "{who:?}"
        );
        assert_eq!(
            std::fs::read(w.work.join("ws/lib/.git/config")).unwrap(),
            lib_config,
            "{who:?}"
        );
        assert!(
            !w.tmp.join("other/.git/hooks/pre-commit").exists(),
            "{who:?}: the hook survived"
        );
        // Positive controls: the ordinary files the same command wrote stay.
        for f in [w.work.join("app/notes.txt"), w.tmp.join("other/notes.txt")] {
            assert_eq!(
                std::fs::read_to_string(&f).unwrap(),
                "ordinary\n",
                "{who:?}: {f:?}"
            );
        }
    }
}

#[test]
fn a_cwd_inside_git_is_no_writable_root() {
    if !require_landlock() {
        return;
    }
    let mut w = World::new();
    repo(&w);
    let config = std::fs::read(w.work.join(".git/config")).unwrap();
    let gitdir = w.work.join(".git");
    w.dirs.cwd = gitdir.clone();
    // A script file: the policy does not see the path, the kernel answers.
    let evil = w.script(
        "cwdgit.sh",
        "printf '[core]\\n\\tfsmonitor = true\\n' >> config",
    );
    let ok = w.script("ordinary.sh", "echo ok >> notes.txt");
    fn run(w: &World, cwd: &std::path::Path, script: &str) -> std::process::Output {
        w.safe_exec()
            .current_dir(cwd)
            .arg("--profile")
            .arg(w.profile_file())
            .args([
                "--",
                &w.work
                    .join(script.trim_start_matches("./"))
                    .display()
                    .to_string(),
            ])
            .output()
            .expect("run")
    }
    let out = run(&w, &gitdir, &evil);
    assert_ne!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(std::fs::read(gitdir.join("config")).unwrap(), config);
    // Positive control: the same kind of write from the project's top
    // directory to an ordinary file goes through.
    w.dirs.cwd = w.work.clone();
    let out = run(&w, &w.work.clone(), &ok);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(w.work.join("notes.txt")).unwrap(),
        "ok\n"
    );
}
