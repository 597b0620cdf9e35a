//! Every command in README.md runs, so the README cannot rot.
//!
//! Each fenced ```` ```sh ```` block is run with `bash -e` (the first failing
//! command fails the test), one block after another, in a temporary copy of
//! the repository's tracked files (a fresh git repository, so `git status`
//! works) with a temporary HOME, XDG_CONFIG_HOME and TMPDIR. `./target/debug/safe-exec` is
//! the binary `cargo test` has just built, linked into the copy.
//!
//! Two things are served differently, on purpose:
//! - `cargo build` and `cargo run -- ARGS`: a `cargo` on PATH that checks
//!   the arguments are exactly these forms and runs the binary `cargo test`
//!   just built (it builds bins before integration tests). Running the real
//!   cargo inside `cargo test` would rebuild into the same `target/` that the
//!   other test binaries are executing from.
//! - `bash tests/run.sh` runs this very test, so it is not run here; it is
//!   what CI runs (`.ci/run`), which the test checks.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::world::{Dirs, hermetic};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `sh` blocks of a Markdown text, with the line each starts on.
fn sh_blocks(md: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in md.lines().enumerate() {
        let fence = line.trim_start();
        match &mut current {
            None if fence == "```sh" => current = Some((i + 1, String::new())),
            Some((start, text)) if fence == "```" => {
                out.push((*start, std::mem::take(text)));
                current = None;
            }
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    assert!(current.is_none(), "README.md: an unclosed ```sh block");
    out
}

/// Copies the files git tracks (and untracked, not ignored ones) into `dest`.
fn copy_tree(dest: &Path) {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(repo())
        .output()
        .expect("git ls-files");
    assert!(out.status.success());
    for rel in out.stdout.split(|b| *b == 0).filter(|s| !s.is_empty()) {
        let rel = Path::new(std::str::from_utf8(rel).unwrap());
        let from = repo().join(rel);
        if !from.is_file() {
            continue; // deleted in the working tree
        }
        let to = dest.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap();
    }
}

const CARGO_SHIM: &str = r#"#!/bin/sh
# cargo as the README uses it, served by the binary `cargo test` built.
case "$1" in
  build)
    shift
    [ "$*" = "--quiet" ] || { echo "README cargo shim: unexpected: cargo build $*" >&2; exit 99; }
    exit 0 ;;
  run)
    shift
    [ "$1" = "--quiet" ] && shift
    [ "$1" = "--" ] || { echo "README cargo shim: unexpected: cargo run $*" >&2; exit 99; }
    shift
    exec "$SAFE_EXEC_README_BIN" "$@" ;;
  *)
    echo "README cargo shim: unexpected: cargo $*" >&2; exit 99 ;;
esac
"#;

#[test]
fn every_sh_block_of_the_readme_runs() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let blocks = sh_blocks(&readme);
    assert!(blocks.len() >= 6, "found only {} sh blocks", blocks.len());

    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("safe-exec");
    let home = tmp.path().join("home");
    let tmpdir = tmp.path().join("tmp");
    let bin_dir = tmp.path().join("bin");
    for d in [&work, &home, &tmpdir, &bin_dir] {
        std::fs::create_dir_all(d).unwrap();
    }
    copy_tree(&work);
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&work)
        .status()
        .unwrap();
    assert!(git.success());
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_safe-exec"));
    std::fs::create_dir_all(work.join("target/debug")).unwrap();
    symlink(&exe, work.join("target/debug/safe-exec")).unwrap();
    let shim = bin_dir.join("cargo");
    std::fs::write(&shim, CARGO_SHIM).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );

    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    let mut ran = 0;
    for (line, block) in &blocks {
        if block.trim() == "bash tests/run.sh" {
            assert!(
                ci.lines().any(|l| l.trim() == "bash tests/run.sh"),
                "README.md:{line}: `bash tests/run.sh` is not what .ci/run runs"
            );
            continue;
        }
        let dirs = Dirs {
            base: tmp.path().to_path_buf(),
            home: home.clone(),
            cwd: work.clone(),
            tmp: tmpdir.clone(),
            state: tmp.path().join("state"),
            config: home.join(".config"),
            system_config: tmp.path().join("no-system-config.toml"),
        };
        let out = hermetic("bash", &dirs)
            .arg("-e")
            .arg("-c")
            .arg(block)
            .env("PATH", &path)
            .env("SAFE_EXEC_README_BIN", &exe)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README.md:{line}: block failed ({}):\n{block}\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!(
            "README.md:{line}: ok ({} bytes of output)",
            out.stdout.len() + out.stderr.len()
        );
        ran += 1;
    }
    assert!(ran >= 5, "ran only {ran} blocks");
    // The hook block wrote the user's settings (not the project's), with
    // the path of the binary that was built (issue 12: not /usr/bin).
    let settings = std::fs::read_to_string(home.join(".claude/settings.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&settings).expect("settings.json is JSON");
    let cmd = v["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let real = std::fs::canonicalize(&exe).unwrap();
    assert_eq!(
        cmd,
        format!("'{}' hook --json --agent claude-code", real.display())
    );
    assert!(home.join(".codex/hooks.json").exists());
    assert!(!work.join(".claude").exists());
}

#[test]
fn first_command_shows_build_progress() {
    // A cold build takes minutes: the newcomer's first command must not
    // hide it behind `--quiet`.
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let first = &sh_blocks(&readme)[0].1;
    assert!(first.trim_start().starts_with("cargo run"), "{first}");
    assert!(
        !first.contains("--quiet") && !first.contains(" -q "),
        "{first}"
    );
}

#[test]
fn sh_blocks_are_found() {
    let md = "text\n```sh\necho a\n```\n```text\nnot run\n```\n```sh\necho b\necho c\n```\n";
    let b = sh_blocks(md);
    assert_eq!(b.len(), 2);
    assert_eq!(b[0], (2, "echo a\n".to_string()));
    assert_eq!(b[1].1, "echo b\necho c\n");
}
