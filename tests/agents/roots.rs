//! Red team 5, F6 and F9 through the hook. F6: with `hook --rewrite` a
//! `cd` carries over to the harness shell (`--cwd-out`), so the agent
//! chooses the next call's working directory; the home directory, the
//! directories above it and the system directories are never writable
//! roots, so the next call cannot write `~/.bashrc` or plant a program in
//! `/usr/local/bin`. F9: a file tool's path starting with `~` is the home
//! directory (`~NAME` is refused as ambiguous), for every file tool.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::agents_support;
use agents_support::{World, code, sq, stderr, stdout};
use serde_json::{Value, json};

fn claude_input(cwd: &Path, tool: &str, tool_input: Value) -> String {
    json!({"session_id":"s-roots","cwd":cwd,"hook_event_name":"PreToolUse",
        "tool_name":tool,"tool_input":tool_input,"tool_use_id":"toolu_roots"})
    .to_string()
}

fn codex_input(cwd: &Path, tool: &str, command: &str) -> String {
    json!({"session_id":"s-roots","turn_id":"t","cwd":cwd,"hook_event_name":"PreToolUse",
        "model":"gpt-5.5","permission_mode":"bypassPermissions",
        "tool_name":tool,"tool_input":{"command":command},"tool_use_id":"call_roots"})
    .to_string()
}

fn hook(w: &World, args: &[&str], input: &str) -> Output {
    let mut all = vec!["hook"];
    all.extend_from_slice(args);
    w.run(&all, input)
}

/// `hookSpecificOutput` of a `--json` answer (`Null` for no opinion).
fn answer(o: &Output) -> Value {
    if o.stdout.is_empty() {
        return Value::Null;
    }
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)));
    v["hookSpecificOutput"].clone()
}

/// The rewritten command of an allowed `--rewrite` answer.
fn rewritten(o: &Output) -> String {
    answer(o)["updatedInput"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("no updatedInput: {}", stdout(o)))
        .to_string()
}

/// Runs `cmd` as the harness's persistent shell does (bash, in `dir`),
/// then prints the directory the shell ends in.
fn harness_shell(w: &World, dir: &Path, cmd: &str) -> Output {
    w.command("bash")
        .current_dir(dir)
        .args([
            "-c",
            &format!("eval {} < /dev/null; echo \"rc=$? $(pwd -P)\"", sq(cmd)),
        ])
        .output()
        .expect("bash")
}

#[test]
fn a_cd_out_of_the_project_does_not_move_the_writable_root_there() {
    let w = World::new();
    let bashrc = w.home.join(".bashrc");
    std::fs::write(&bashrc, "# bashrc\n").expect("write");
    std::fs::create_dir_all(w.work.join("sub")).expect("mkdir");
    // A program of the project that writes into its working directory:
    // the policy cannot see its writes, the sandbox answers.
    let script = w.work.join("w.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nprintf 'touch /tmp/CANARY\\n' >> .bashrc\nprintf x > planted.txt\n",
    )
    .expect("write");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let script = script.display().to_string();
    // Call 1: `cd ~` is allowed and carries over (the shell ends in HOME).
    let o = hook(
        &w,
        &["--json", "--rewrite"],
        &claude_input(&w.work, "Bash", json!({"command": "cd ~"})),
    );
    assert_eq!(answer(&o)["permissionDecision"], "allow", "{}", stdout(&o));
    let o = harness_shell(&w, &w.work, &rewritten(&o));
    assert_eq!(
        stdout(&o),
        format!("rc=0 {}\n", w.home.display()),
        "{}",
        stderr(&o)
    );
    // Call 2, from HOME: a visible write to a dotfile is refused, with the
    // reason; the script runs confined and its writes fail.
    let o = hook(
        &w,
        &["--json", "--rewrite"],
        &claude_input(
            &w.home,
            "Bash",
            json!({"command": "printf 'x\\n' | tee -a .bashrc"}),
        ),
    );
    assert_eq!(answer(&o)["permissionDecision"], "deny", "{}", stdout(&o));
    let why = answer(&o)["permissionDecisionReason"].to_string();
    assert!(why.contains("outside the writable roots"), "{why}");
    let o = hook(
        &w,
        &["--json", "--rewrite"],
        &claude_input(&w.home, "Bash", json!({"command": script})),
    );
    assert_eq!(answer(&o)["permissionDecision"], "allow", "{}", stdout(&o));
    let why = answer(&o)["permissionDecisionReason"].to_string();
    assert!(
        why.contains(&format!(
            "the working directory {} is not writable: it is the home directory",
            w.home.display()
        )),
        "{why}"
    );
    assert!(
        why.contains("Run the agent in a project directory"),
        "{why}"
    );
    let o = harness_shell(&w, &w.home, &rewritten(&o));
    assert!(stderr(&o).contains("Permission denied"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&bashrc).expect("read"),
        "# bashrc\n"
    );
    assert!(!w.home.join("planted.txt").exists());
    // Positive control: `cd sub` inside the project carries over, and the
    // same script writes there.
    let o = hook(
        &w,
        &["--json", "--rewrite"],
        &claude_input(&w.work, "Bash", json!({"command": "cd sub"})),
    );
    let sub = w.work.join("sub");
    let o = harness_shell(&w, &w.work, &rewritten(&o));
    assert_eq!(
        stdout(&o),
        format!("rc=0 {}\n", sub.display()),
        "{}",
        stderr(&o)
    );
    let o = hook(
        &w,
        &["--json", "--rewrite"],
        &claude_input(&sub, "Bash", json!({"command": script})),
    );
    assert_eq!(answer(&o)["permissionDecision"], "allow", "{}", stdout(&o));
    assert!(
        !answer(&o)["permissionDecisionReason"]
            .to_string()
            .contains("not writable")
    );
    let o = harness_shell(&w, &sub, &rewritten(&o));
    // The write lands; the `.bashrc` it also creates at the top of the
    // writable root is a protected file (red team 5, F6 addendum), so it is
    // removed after the run and reported (exit 126).
    assert!(
        stdout(&o).starts_with("rc=126 "),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    assert!(
        stderr(&o).contains(".bashrc (created by the command; removed)"),
        "{}",
        stderr(&o)
    );
    assert!(!sub.join(".bashrc").exists());
    assert_eq!(
        std::fs::read_to_string(sub.join("planted.txt")).expect("planted"),
        "x"
    );
}

#[test]
fn the_places_a_cd_can_reach_are_refused_in_every_protocol() {
    let w = World::new();
    std::fs::create_dir_all(w.home.join(".config/systemd/user")).expect("mkdir");
    let mut places: Vec<PathBuf> = vec![
        w.home.clone(),                                    // cd ~
        w.home.join("..").canonicalize().expect("parent"), // cd ~/.. ; cd .. from ~/proj
        w.home.join(".config/systemd/user"),
        PathBuf::from("/"),
    ];
    for d in [
        "/etc/cron.d",
        "/usr/local/bin",
        "/usr/bin",
        "/etc/ssh",
        "/var/lib",
    ] {
        if Path::new(d).is_dir() {
            places.push(PathBuf::from(d));
        }
    }
    for dir in &places {
        let c = "cp /bin/true zz_planted";
        // Rewrite (confined), plain JSON (unconfined) and exit codes; Codex.
        let o = hook(
            &w,
            &["--json", "--rewrite"],
            &claude_input(dir, "Bash", json!({"command": c})),
        );
        assert_eq!(
            answer(&o)["permissionDecision"],
            "deny",
            "{}: {}",
            dir.display(),
            stdout(&o)
        );
        let o = hook(
            &w,
            &["--json"],
            &claude_input(dir, "Bash", json!({"command": c})),
        );
        assert_eq!(
            answer(&o)["permissionDecision"],
            "deny",
            "{}: {}",
            dir.display(),
            stdout(&o)
        );
        let o = hook(&w, &[], &claude_input(dir, "Bash", json!({"command": c})));
        assert_eq!(code(&o), 2, "{}: {}", dir.display(), stderr(&o));
        let o = hook(&w, &["--json", "--rewrite"], &codex_input(dir, "Bash", c));
        assert_eq!(
            answer(&o)["permissionDecision"],
            "deny",
            "{}: {}",
            dir.display(),
            stdout(&o)
        );
        // A command that writes nothing runs, told why.
        let o = hook(
            &w,
            &["--json", "--rewrite"],
            &claude_input(dir, "Bash", json!({"command": "true"})),
        );
        assert_eq!(
            answer(&o)["permissionDecision"],
            "allow",
            "{}: {}",
            dir.display(),
            stdout(&o)
        );
        let why = answer(&o)["permissionDecisionReason"].to_string();
        assert!(
            why.contains(&format!(
                "the working directory {} is not writable",
                dir.display()
            )),
            "{why}"
        );
    }
    // Positive control: the project.
    let o = hook(
        &w,
        &["--json", "--rewrite"],
        &claude_input(
            &w.work,
            "Bash",
            json!({"command": "cp /bin/true zz_planted"}),
        ),
    );
    assert_eq!(answer(&o)["permissionDecision"], "allow", "{}", stdout(&o));
}

#[test]
fn a_file_tool_path_starting_with_a_tilde_is_the_home_directory() {
    let w = World::new();
    let home = w.home.display().to_string();
    let tool_input = |tool: &str, path: &str| match tool {
        "NotebookEdit" => json!({"notebook_path": path, "new_source": "x"}),
        "MultiEdit" => {
            json!({"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]})
        }
        "Edit" => json!({"file_path": path, "old_string": "a", "new_string": "b"}),
        _ => json!({"file_path": path, "content": "x"}),
    };
    for (tool, path, why) in [
        (
            "Write",
            "~/.bashrc",
            format!("`Write` of {home}/.bashrc is refused: it is outside the writable roots"),
        ),
        ("Write", "~", format!("`Write` of {home} is refused")),
        (
            "Edit",
            "~/.profile",
            format!("`Edit` of {home}/.profile is refused: it is outside the writable roots"),
        ),
        (
            "MultiEdit",
            "~//.zshrc",
            format!("`MultiEdit` of {home}/.zshrc is refused"),
        ),
        (
            "NotebookEdit",
            "~/n.ipynb",
            format!("`NotebookEdit` of {home}/n.ipynb is refused"),
        ),
        (
            "Write",
            "~/.config/autostart/e.desktop",
            format!("`Write` of {home}/.config/autostart/e.desktop is refused"),
        ),
        (
            "Read",
            "~/.ssh/id_rsa",
            format!("`Read` of {home}/.ssh/id_rsa is refused: it is inside the secret path"),
        ),
        (
            "Write",
            "~root/.bashrc",
            "`Write` of ~root/.bashrc is refused: a path starting with `~NAME` is ambiguous"
                .to_string(),
        ),
        ("Edit", "~+/x", "is ambiguous".to_string()),
    ] {
        let input = claude_input(&w.work, tool, tool_input(tool, path));
        let o = hook(&w, &[], &input);
        assert_eq!(code(&o), 2, "{tool} {path}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&why),
            "{tool} {path}: want {why:?}, got {}",
            stderr(&o)
        );
        let o = hook(&w, &["--json"], &input);
        assert_eq!(answer(&o)["permissionDecision"], "deny", "{tool} {path}");
    }
    // apply_patch (Codex), both headers.
    for p in [
        "*** Begin Patch\n*** Add File: ~/.bashrc\n+x\n*** End Patch\n".to_string(),
        "*** Begin Patch\n*** Update File: src/a.rs\n*** Move to: ~/.profile\n@@\n-a\n+b\n*** End Patch\n".to_string(),
    ] {
        let o = hook(&w, &[], &codex_input(&w.work, "apply_patch", &p));
        assert_eq!(code(&o), 2, "{p}: {}", stderr(&o));
        assert!(stderr(&o).contains(&format!("{home}/.")), "{p}: {}", stderr(&o));
    }
    // Positive controls: reading a plain file of HOME, a `~` that is not
    // leading, the project.
    for (tool, path) in [
        ("Read", "~/notes.txt"),
        ("Write", "src/~x"),
        ("Write", "./~x"),
        ("Write", "src/a.rs"),
    ] {
        let o = hook(
            &w,
            &[],
            &claude_input(&w.work, tool, tool_input(tool, path)),
        );
        assert_eq!(code(&o), 0, "{tool} {path}: {}", stderr(&o));
    }
}
