//! Review of round twelve, wrappers (F1, F2, F14, F16): holes found in the
//! merged code and fixed as classes. Decided in both modes, with the exact
//! decision and a positive control beside each refusal; the hook (no
//! `--rewrite`, unconfined) is asked for the review's own spellings.
use crate::common::policy as common;
use common::*;

/// A project whose files are named like system programs (`echo`,
/// `basename`): `sh echo` runs the project's file.
fn world() -> World {
    let w = World::new();
    std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&w.cwd)
        .status()
        .unwrap();
    for f in ["echo", "basename"] {
        std::fs::write(w.cwd.join(f), "touch PWN\n").unwrap();
    }
    w
}

/// `safe-exec hook --json` on a Bash call of `cmd` (unconfined).
fn hook_decision(w: &World, cmd: &str) -> String {
    let out = w.hook_bash(&["--json"], &[], cmd);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    if out.stdout.is_empty() {
        return "allow".into();
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("?")
        .to_string()
}

const SH: &str = "`sh` runs code";
const BUILT: &str = "replaced by input at run time";
const EXECDIR: &str = "in the directory of each match";

/// F1: xargs' `-e`, `-i`, `-l` and `--eof`, `--replace`, `--max-lines`
/// take an optional value, attached only: the next word is the command.
/// They were read as taking it, so `xargs -i sh echo` was judged as `echo`.
#[test]
fn f1_xargs_optional_values_are_attached_only() {
    let w = world();
    expect(
        &w,
        &[
            // Confined, `sh FILE` runs in the sandbox as `sh echo` always did.
            ("echo x | xargs -i sh echo", "ask", "ask", "run time"),
            ("echo x | xargs -l sh basename", "ask", "ask", "run time"),
            ("echo x | xargs -e sh echo", "ask", "ask", "run time"),
            ("echo x | xargs --replace sh echo", "ask", "ask", "run time"),
            (
                "echo x | xargs --max-lines sh echo",
                "ask",
                "ask",
                "run time",
            ),
            ("echo x | xargs --eof sh echo", "ask", "ask", "run time"),
            ("echo x | xargs -r -i sh echo", "ask", "ask", "run time"),
            ("echo x | xargs -i bash basename", "ask", "ask", "run time"),
            // The same program without xargs' options: the control that
            // `sh` is seen at all.
            ("echo x | xargs sh echo", "ask", "ask", "run time"),
            // Positive controls: attached values, and the options alone
            // before a harmless program.
            ("echo x | xargs -i echo", "allow", "allow", ""),
            ("echo x | xargs -i{} echo {}", "allow", "allow", ""),
            ("echo x | xargs --replace=R echo R", "allow", "allow", ""),
            ("echo x | xargs -l1 echo", "allow", "allow", ""),
            ("echo x | xargs --max-lines=1 echo", "allow", "allow", ""),
            ("echo x | xargs -eEND echo", "allow", "allow", ""),
            ("echo x | xargs --eof=END echo", "allow", "allow", ""),
            ("echo x | xargs -E END echo", "allow", "allow", ""),
            ("echo x | xargs -L 1 echo", "allow", "allow", ""),
            ("echo x | xargs -I R echo R", "allow", "allow", ""),
        ],
    );
    for c in [
        "echo x | xargs -i sh echo",
        "echo x | xargs -l sh basename",
        "echo x | xargs --replace sh echo",
    ] {
        assert_eq!(hook_decision(&w, c), "ask", "{c}");
    }
    assert_eq!(hook_decision(&w, "echo x | xargs -i echo"), "allow");
}

/// F2: env's `--default-signal`, `--ignore-signal`, `--block-signal` take
/// an optional `=SIG`: `env --default-signal sh echo` runs `sh echo`.
/// Siblings from the other wrappers' --help: `watch -d[X]`, `script -t[FILE]`;
/// and options that were misread the other way (`script -E WHEN`, ltrace's
/// `-L` and `-b` are flags).
#[test]
fn f2_env_signal_options_and_siblings_are_attached_only() {
    let w = world();
    expect(
        &w,
        &[
            ("env --default-signal sh echo hello", "allow", "ask", SH),
            ("env --ignore-signal sh echo", "allow", "ask", SH),
            ("env --block-signal sh echo", "allow", "ask", SH),
            (
                "env --block-signal --default-signal sh echo",
                "allow",
                "ask",
                SH,
            ),
            ("watch -d sh echo", "allow", "ask", SH),
            ("watch --differences sh echo", "allow", "ask", SH),
            ("ltrace -L sh echo", "allow", "ask", SH),
            ("ltrace -b sh echo", "allow", "ask", SH),
            // Control: `sh echo` without a wrapper.
            ("sh echo", "allow", "ask", SH),
            // Positive controls.
            ("env --default-signal echo hello", "allow", "allow", ""),
            ("env --default-signal=INT echo hello", "allow", "allow", ""),
            ("env --ignore-signal=PIPE echo hello", "allow", "allow", ""),
            ("env -u HOME echo hello", "allow", "allow", ""),
            ("watch -d ls", "allow", "allow", ""),
            ("script -E never -q -c ls out.log", "allow", "allow", ""),
        ],
    );
    assert_eq!(
        hook_decision(&w, "env --default-signal sh echo hello"),
        "ask"
    );
    assert_eq!(
        hook_decision(&w, "env --default-signal echo hello"),
        "allow"
    );
}

/// F14: xargs' replacement string (`-I R`, `-i`, `--replace`) and find's
/// `{}` inside a nested shell's string (or a wrapper's command string or
/// directory) are replaced by input: the string is code built from input
/// (a file named `a;touch x` becomes a command). As an argument of its own
/// (`sh -c '... "$1"' _ {}`) it is data, judged as before.
#[test]
fn f14_a_replacement_string_inside_a_nested_shell_string_is_built_from_input() {
    let w = world();
    std::fs::write(w.cwd.join("a;touch PWN"), "").unwrap();
    expect(
        &w,
        &[
            (
                "echo .git/config | xargs -I{} sh -c 'echo x >> {}'",
                "ask",
                "ask",
                BUILT,
            ),
            ("ls | xargs -I{} sh -c 'echo {}'", "ask", "ask", BUILT),
            ("ls | xargs -I {} sh -c 'cat {}'", "ask", "ask", BUILT),
            ("ls | xargs -I X bash -c 'echo X'", "ask", "ask", BUILT),
            ("ls | xargs -IX dash -c 'echo X'", "ask", "ask", BUILT),
            ("ls | xargs -i bash -c 'echo {}'", "ask", "ask", BUILT),
            ("ls | xargs --replace zsh -c 'echo {}'", "ask", "ask", BUILT),
            (
                "ls | xargs --replace=% ksh -c 'echo %'",
                "ask",
                "ask",
                BUILT,
            ),
            (
                "ls | xargs -I{} timeout 5 sh -c 'cat {}'",
                "ask",
                "ask",
                BUILT,
            ),
            (
                "ls | xargs -I{} busybox sh -c 'cat {}'",
                "ask",
                "ask",
                BUILT,
            ),
            ("ls | xargs -I{} env -S 'cat {}'", "ask", "ask", BUILT),
            ("ls | xargs -I{} watch 'cat {}'", "ask", "ask", BUILT),
            ("ls | xargs -I{} env -C {} touch x", "ask", "ask", BUILT),
            (
                "xargs -I% sh -c 'echo x > %' <<< .envrc",
                "ask",
                "ask",
                BUILT,
            ),
            (
                "find . -maxdepth 0 -exec sh -c 'echo PWN > {}/.envrc' \\;",
                "ask",
                "ask",
                BUILT,
            ),
            ("find . -exec bash -c 'wc -l {}' \\;", "ask", "ask", BUILT),
            ("find . -ok dash -c 'cat {}' \\;", "ask", "ask", BUILT),
            ("find . -exec sh -c 'cat {}' +", "ask", "ask", BUILT),
            // Positive controls: the replacement as data, or absent.
            (
                "ls | xargs -I{} sh -c 'echo \"$1\"' _ {}",
                "allow",
                "allow",
                "",
            ),
            // As an argument of its own the replacement is data, but not
            // known: `$1` of such a string is an unknown operand (it was
            // read as the text `{}`, so a write to `"$1"` was allowed), as
            // are the operands xargs appends and an expansion given as one.
            (
                "echo .envrc | xargs -I{} sh -c 'echo x > \"$1\"' _ {}",
                "ask",
                "ask",
                "not literal",
            ),
            (
                "find . -name .envrc -exec sh -c 'echo x > \"$1\"' _ {} \\;",
                "ask",
                "ask",
                "not literal",
            ),
            (
                "echo .envrc | xargs sh -c 'echo x > \"$1\"' _",
                "ask",
                "ask",
                "not literal",
            ),
            (
                "sh -c 'echo x > \"$1\"' _ \"$(cat name.txt)\"",
                "ask",
                "ask",
                "not literal",
            ),
            (
                "find . -exec sh -c 'wc -l \"$1\"' _ {} \\;",
                "ask",
                "ask",
                "",
            ),
            ("find . -exec sh -c 'wc -l \"$@\"' _ {} +", "ask", "ask", ""),
            // Literal operands are known.
            ("sh -c 'echo x > \"$1\"' _ notes.txt", "allow", "allow", ""),
            (
                "sh -c 'echo x > \"$1\"' _ .envrc",
                "deny",
                "deny",
                "protected",
            ),
            ("ls | xargs -I{} sh -c 'echo hi'", "allow", "allow", ""),
            ("ls | xargs -I X echo X", "allow", "allow", ""),
            // Without -I the `{}` is not replaced.
            ("ls | xargs sh -c 'echo {}'", "allow", "allow", ""),
            ("find . -name '*.rs' -exec wc -l {} +", "allow", "allow", ""),
        ],
    );
    for c in [
        "ls | xargs -I{} sh -c 'echo {}'",
        "echo .git/config | xargs -I{} sh -c 'echo x >> {}'",
        "find . -maxdepth 0 -exec sh -c 'echo PWN > {}/.envrc' \\;",
    ] {
        assert_eq!(hook_decision(&w, c), "ask", "{c}");
    }
    assert_eq!(
        hook_decision(&w, "ls | xargs -I{} sh -c 'echo \"$1\"' _ {}"),
        "allow"
    );
    assert_eq!(
        hook_decision(
            &w,
            "find . -name .envrc -exec sh -c 'echo x > \"$1\"' _ {} \\;"
        ),
        "ask"
    );
}

/// F16: `find -execdir`/`-okdir` run their command in each match's
/// directory (`.git` for `./.git/hooks`): its relative paths are not the
/// cwd's. Unconfined, such a command is unknown (asked); a relative write
/// to a protected name is still refused.
#[test]
fn f16_execdir_commands_run_in_an_unknown_directory() {
    let w = world();
    expect(
        &w,
        &[
            (
                "find . -maxdepth 2 -name hooks -execdir sh -c 'echo x >> config' \\;",
                "allow",
                "ask",
                EXECDIR,
            ),
            (
                "find . -name hooks -okdir sh -c 'echo x >> config' \\;",
                "allow",
                "ask",
                EXECDIR,
            ),
            (
                "find . -name hooks -execdir tee -a config \\;",
                "ask",
                "ask",
                "",
            ),
            (
                "find . -name x -execdir wc -l {} +",
                "allow",
                "ask",
                EXECDIR,
            ),
            (
                "find . -execdir sh -c 'cat \"$1\"' _ {} \\;",
                "ask",
                "ask",
                "",
            ),
            (
                "find . -name .git -execdir touch .envrc \\;",
                "deny",
                "deny",
                "protected",
            ),
            // Positive controls: `-exec` runs in the cwd.
            ("find . -name x -exec wc -l {} +", "allow", "allow", ""),
            (
                "find . -maxdepth 2 -name hooks -exec sh -c 'echo x >> notes.txt' \\;",
                "allow",
                "allow",
                "",
            ),
        ],
    );
    assert_eq!(
        hook_decision(
            &w,
            "find . -maxdepth 2 -name hooks -execdir sh -c 'echo x >> config' \\;"
        ),
        "ask"
    );
    assert_eq!(
        hook_decision(&w, "find . -name x -exec wc -l {} +"),
        "allow"
    );
}
