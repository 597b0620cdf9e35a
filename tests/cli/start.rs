//! What the binary's own entry point (`src/sys/start.rs`, in place of the
//! Rust runtime's start-up) must keep doing: closed standard descriptors
//! are reopened on `/dev/null` before anything is opened, `SIGPIPE` is
//! ignored by safe-exec but at its default in the command, the arguments
//! and the exit code pass through, and standard output is flushed at exit.
use crate::common::policy as common;
use crate::common::world::hermetic;
use common::*;

/// Runs `safe-exec ARGS` through `sh` with `redirs` (e.g. `0<&- 2>&-`).
fn through_sh(w: &World, redirs: &str, args: &[&str]) -> std::process::Output {
    let mut c = hermetic("/bin/sh", &w.dirs);
    c.current_dir(&w.cwd)
        .arg("-c")
        .arg(format!("exec \"$0\" \"$@\" {redirs}"))
        .arg(BIN)
        .args(args)
        .stdin(std::process::Stdio::null());
    c.output().expect("spawn sh")
}

#[test]
fn closed_standard_descriptors_are_dev_null_in_the_command() {
    let w = World::new();
    for redirs in ["0<&-", "0<&- 2>&-", "2>&-"] {
        let out = through_sh(
            &w,
            redirs,
            &[
                "--",
                "/bin/sh",
                "-c",
                "readlink /proc/self/fd/0 /proc/self/fd/2",
            ],
        );
        assert_eq!(code(&out), 0, "{redirs}: {}", stderr(&out));
        let fds: Vec<&str> = std::str::from_utf8(&out.stdout)
            .expect("utf-8")
            .lines()
            .collect();
        // Standard input is /dev/null either way (the test's own).
        assert_eq!(fds.first().copied(), Some("/dev/null"), "{redirs}: {fds:?}");
        if redirs.contains("2>&-") {
            assert_eq!(fds.get(1).copied(), Some("/dev/null"), "{redirs}: {fds:?}");
        } else {
            assert_ne!(fds.get(1).copied(), Some("/dev/null"), "{redirs}: {fds:?}");
        }
    }
    // `check` with its standard input and error closed still answers.
    let out = through_sh(&w, "0<&- 2>&-", &["check", "-c", "git status"]);
    assert_eq!(code(&out), 0);
    assert_eq!(stdout(&out), "allow\n");
}

#[test]
fn sigpipe_is_ignored_by_safe_exec_and_default_in_the_command() {
    let w = World::new();
    // The command's ignored signals (inherited ones aside) do not include
    // SIGPIPE (signal 13: bit 12 of the mask).
    let (out, _) = w.run(["--", "/bin/sh", "-c", "grep SigIgn /proc/self/status"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mask = stdout(&out)
        .trim()
        .strip_prefix("SigIgn:")
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .expect("SigIgn line");
    assert_eq!(
        mask & (1 << 12),
        0,
        "SIGPIPE ignored in the command: {mask:x}"
    );
    // safe-exec writing into a pipe nobody reads gets EPIPE instead of
    // being killed by SIGPIPE: `check` still exits with its decision.
    let (read, write) = nix::unistd::pipe().expect("pipe");
    drop(read);
    let out = w
        .cmd()
        .args(["check", "--json", "-c", "git status"])
        .stdout(std::process::Stdio::from(write))
        .output()
        .expect("spawn");
    assert_eq!(
        out.status.code(),
        Some(0),
        "killed by a signal? {:?} {}",
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        stderr(&out)
    );
}

#[test]
fn arguments_exit_code_and_output_pass_through() {
    let w = World::new();
    let (out, _) = w.run(["-c", "printf '%s|' \"$@\"; exit 5", "name", "a b", "", "c"]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
    assert_eq!(stdout(&out), "a b||c|");
    let (out, _) = w.run(["check", "-c", "rm -rf /"]);
    assert_eq!(code(&out), 2);
    assert!(stdout(&out).starts_with("deny\n"), "{}", stdout(&out));
}

/// `check` and `hook` arguments parsed with only their own definition
/// (`cli::parse_narrow`, the start-up path) give exactly what the full
/// command line gives; anything it cannot parse is left to the full parse.
#[test]
fn narrow_parse_of_check_and_hook_equals_the_full_parse() {
    use clap::Parser;
    use safe_exec::cli::{Cli, parse_narrow};
    let cases: &[&[&str]] = &[
        &["check", "-c", "git status && cargo test"],
        &["check", "--json", "-c", "ls -la"],
        &["check", "--explain", "--unconfined", "-c", "rm -rf /"],
        &["check", "-c", "echo $1", "name", "a", "-b", "--c"],
        &["check", "--", "git", "push", "--force"],
        &["check", "--profile", "strict", "--cwd", "/tmp", "-c", "x"],
        &[
            "check",
            "--profile=strict",
            "--cwd=/tmp",
            "--session",
            "s",
            "-c",
            "x",
        ],
        &["check", "--agent", "codex", "--timeout", "5", "--", "ls"],
        &["check", "--approval", "t", "--cwd-out", "/tmp/f", "-c", "x"],
        &["check", "-cx"],
        &["check", "-c=x"],
        &["check", "ls", "-l"],
        &["check", "--json", "--", "-c", "x"],
        &["check", "-c", "x", "--json"],
        &["check", "--timeout", "x", "-c", "x"],
        &["check", "--unknown", "-c", "x"],
        &["check", "--help"],
        &["check", "-h"],
        &["check", "--version"],
        &["check"],
        &["check", "-c"],
        &["check", "--jso", "-c", "x"],
        &["hook"],
        &["hook", "--json"],
        &["hook", "--json", "--rewrite"],
        &["hook", "--rewrite"],
        &["hook", "--agent", "codex", "--profile", "p.toml"],
        &["hook", "--agent=claude-code", "--json", "--session=s"],
        &["hook", "extra"],
        &["hook", "--help"],
        &["hook", "-c", "x"],
    ];
    let mut narrow_used = 0;
    for case in cases {
        let args: Vec<std::ffi::OsString> = std::iter::once("safe-exec")
            .chain(case.iter().copied())
            .map(Into::into)
            .collect();
        let full = Cli::try_parse_from(&args);
        match parse_narrow(&args) {
            Some(narrow) => {
                narrow_used += 1;
                let full =
                    full.unwrap_or_else(|e| panic!("{case:?}: narrow parsed, full failed: {e}"));
                assert_eq!(
                    format!("{narrow:?}"),
                    format!("{:?}", full.command),
                    "{case:?}"
                );
            }
            None => {
                // Left to the full parse: only what it refuses (or answers
                // with help) is.
                assert!(full.is_err(), "{case:?}: full parsed, narrow did not");
            }
        }
    }
    assert!(narrow_used >= 20, "{narrow_used}");
    // Other subcommands are never parsed narrowly.
    for other in [
        &["safe-exec", "doctor"][..],
        &["safe-exec", "log", "--json"],
    ] {
        let args: Vec<std::ffi::OsString> = other.iter().map(Into::into).collect();
        assert!(parse_narrow(&args).is_none(), "{other:?}");
    }
}
