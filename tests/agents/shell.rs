//! safe-exec as the configured shell: Claude Code's harness boilerplate in
//! both of its forms (issue 5's exact strings), and real programs that call
//! `$SHELL -c` (make, Python, Node, xargs, find -exec, git aliases). Allowed
//! commands must behave like bash; denied ones exit 126.

use crate::agents_support;

use crate::common::world::need_tool;
use agents_support::{
    World, bin, claude_prefix_chain, claude_shell_chain, code, sq, stderr, stdout,
};

fn reasons(v: &serde_json::Value) -> Vec<String> {
    let mut r: Vec<String> = v["reasons"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    r.sort();
    r
}

// --- Claude Code: CLAUDE_CODE_SHELL=/usr/bin/safe-exec ------------------------

#[test]
fn claude_shell_form_exact_string_decisions() {
    let w = World::new();
    let exact = format!(
        "source '{}' 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval 'npm test' && pwd -P >| {}",
        w.snapshot().display(),
        w.tmp.join("claude-3f2a-cwd").display()
    );
    assert_eq!(exact, claude_shell_chain(&w.snapshot(), "npm test"));
    for (model, want) in [
        ("npm test", "allow"),
        ("git status", "allow"),
        ("rm -rf ~", "deny"),
    ] {
        let v = w.check_json(&claude_shell_chain(&w.snapshot(), model));
        assert_eq!(v["decision"], want, "{model}: {v}");
    }
    // The model's command inside the chain is judged exactly like on its own.
    let alone = w.check_json("rm -rf ~");
    let chained = w.check_json(&claude_shell_chain(&w.snapshot(), "rm -rf ~"));
    assert_eq!(reasons(&chained), reasons(&alone));
    assert_eq!(chained["matched_rules"], alone["matched_rules"]);
    let alone = w.check_json("frobnicate --now");
    let chained = w.check_json(&claude_shell_chain(&w.snapshot(), "frobnicate --now"));
    assert_eq!(
        (chained["decision"].clone(), reasons(&chained)),
        (alone["decision"].clone(), reasons(&alone))
    );
}

#[test]
fn claude_shell_form_runs_with_c_before_l() {
    let w = World::new();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&w.work)
        .status();
    assert!(git.is_ok_and(|s| s.success()));
    let chain = claude_shell_chain(
        &w.snapshot(),
        "echo snapshot=$SNAPSHOT_LOADED; git status --short",
    );
    let o = w
        .command(bin())
        .args(["-c", "-l", &chain])
        .output()
        .expect("run");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), "snapshot=yes\n", "the snapshot was sourced");
    let sentinel = std::fs::read_to_string(w.tmp.join("claude-3f2a-cwd")).unwrap_or_default();
    assert_eq!(
        sentinel.trim(),
        w.work.display().to_string(),
        "the cwd sentinel was written"
    );

    let chain = claude_shell_chain(&w.snapshot(), "rm -rf ~");
    let o = w
        .command(bin())
        .args(["-c", "-l", &chain])
        .output()
        .expect("run");
    assert_eq!(code(&o), 126);
    assert!(
        stderr(&o).starts_with("safe-exec: denied:"),
        "{}",
        stderr(&o)
    );
    assert!(w.home.join(".ssh/id_rsa").exists());
}

#[test]
fn untrusted_source_in_the_chain_is_not_trusted() {
    let w = World::new();
    let evil = w.work.join("snap.sh");
    std::fs::write(&evil, "rm -rf ~\n").expect("write");
    let chain = claude_shell_chain(&evil, "git status");
    // Confined, a project file is sourced like any script the sandbox
    // contains; unconfined (the hook without --rewrite) it is not trusted.
    let out = w.run(&["check", "--json", "--unconfined", "-c", &chain], "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_ne!(v["decision"], "allow");
    // `..` out of the trusted directory does not count either.
    let sneaky = w.snapshot().parent().expect("dir").join("../../.bashrc");
    assert_ne!(
        w.check_json(&claude_shell_chain(&sneaky, "git status"))["decision"],
        "allow"
    );
    // A non-literal eval is unknown, never allowed.
    let v = w.check_json(&format!(
        "source {} && eval \"$CMD\" && pwd -P >| {}",
        sq(&w.snapshot().display().to_string()),
        w.tmp.join("claude-3f2a-cwd").display()
    ));
    assert_ne!(v["decision"], "allow");
}

// --- Claude Code: CLAUDE_CODE_SHELL_PREFIX="/usr/bin/safe-exec -c" ---------------

#[test]
fn claude_prefix_form_exact_string() {
    let w = World::new();
    let exact = format!(
        "source '{}' 2>/dev/null || true && {{ shopt -u extglob || setopt NO_EXTENDED_GLOB; }} >/dev/null 2>&1 || true && eval 'npm test' && pwd -P >| {}",
        w.snapshot().display(),
        w.tmp.join("claude-3f2a-cwd").display()
    );
    assert_eq!(exact, claude_prefix_chain(&w.snapshot(), "npm test"));
    for (model, want) in [
        ("npm test", "allow"),
        ("git status", "allow"),
        ("rm -rf ~", "deny"),
    ] {
        let v = w.check_json(&claude_prefix_chain(&w.snapshot(), model));
        assert_eq!(v["decision"], want, "{model}: {v}");
    }
    let alone = w.check_json("rm -rf ~");
    let chained = w.check_json(&claude_prefix_chain(&w.snapshot(), "rm -rf ~"));
    assert_eq!(reasons(&chained), reasons(&alone));

    // The harness runs `'/usr/bin/safe-exec' -c 'WHOLE STRING'` from its own shell.
    let run = |model: &str| {
        let line = format!(
            "{} -c {}",
            sq(bin()),
            sq(&claude_prefix_chain(&w.snapshot(), model))
        );
        w.command("bash")
            .arg("-c")
            .arg(line)
            .output()
            .expect("bash")
    };
    let o = run("echo \"it's $SNAPSHOT_LOADED\"");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), "it's yes\n");
    let o = run("rm -rf ~");
    assert_eq!(code(&o), 126, "{}", stderr(&o));
    assert!(w.home.join(".ssh/id_rsa").exists());
}

// --- programs that call a shell ---------------------------------------------

#[test]
fn gnu_make_with_safe_exec_as_shell() {
    need_tool("make", "make");
    let w = World::new();
    std::fs::write(
        w.work.join("Makefile"),
        "all:\n\techo a && echo b\n\tprintf 'x\\ny\\n' | sort -r\n\t@echo \"home=$$HOME q='x y'\"\n\
         fail:\n\texit 3\nbad:\n\trm -rf ~\n",
    )
    .expect("Makefile");
    let make = |target: &str, shell: &str| {
        w.command("make")
            .args(["-s", &format!("SHELL={shell}"), target])
            .output()
            .expect("make")
    };
    let ours = make("all", bin());
    let theirs = make("all", "/bin/bash");
    assert_eq!(code(&ours), 0, "{}", stderr(&ours));
    assert_eq!(stdout(&ours), stdout(&theirs));
    assert!(stdout(&ours).contains("a\nb\ny\nx\n"), "{}", stdout(&ours));
    let o = make("fail", bin());
    assert!(stderr(&o).contains("Error 3"), "{}", stderr(&o));
    let o = make("bad", bin());
    assert!(stderr(&o).contains("safe-exec: denied:"), "{}", stderr(&o));
    assert!(stderr(&o).contains("Error 126"), "{}", stderr(&o));
    assert!(w.home.join(".ssh/id_rsa").exists());
}

#[test]
fn python_subprocess_shell_true() {
    need_tool("python3", "python3");
    let w = World::new();
    let script = r#"
import subprocess, sys
exe = sys.argv[1]
def run(cmd, shell):
    r = subprocess.run(cmd, shell=True, executable=shell, capture_output=True, text=True, env={"HOME": sys.argv[2], "PATH": "/usr/bin:/bin", "GREETING": "hi there"})
    return (r.returncode, r.stdout)
for cmd in ["echo \"$GREETING\" | tr a-z A-Z", "printf '%s|' 'a b' \"it's\" && exit 7", "echo $0"]:
    ours, theirs = run(cmd, exe), run(cmd, "/bin/bash")
    if cmd == "echo $0":
        assert ours == (0, exe + "\n"), ours
        continue
    assert ours == theirs, (cmd, ours, theirs)
r = subprocess.run("rm -rf ~", shell=True, executable=exe, capture_output=True, text=True)
assert r.returncode == 126, r
assert r.stderr.startswith("safe-exec: denied:"), r.stderr
print("ok")
"#;
    let o = w
        .command("python3")
        .args(["-c", script, bin(), &w.home.display().to_string()])
        .output()
        .expect("python3");
    assert_eq!(stdout(&o), "ok\n", "{}", stderr(&o));
}

#[test]
fn node_exec_sync_with_shell() {
    need_tool("node", "nodejs");
    let w = World::new();
    let script = r#"
const cp = require('child_process');
const exe = process.argv[1];
if (!exe || !exe.includes('safe-exec')) { console.log('no safe-exec path given'); process.exit(2); }
const run = (cmd, shell) => { try { return [0, cp.execSync(cmd, {shell, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']})]; } catch (e) { return [e.status, e.stdout]; } };
for (const cmd of ["echo hi | tr a-z A-Z", "printf '%s\\n' \"a  b\" && exit 5", "echo \"$HOME\""]) {
  const a = JSON.stringify(run(cmd, exe)), b = JSON.stringify(run(cmd, '/bin/bash'));
  if (a !== b) { console.log('MISMATCH', cmd, a, b); process.exit(1); }
}
const [st] = run('rm -rf ~', exe);
if (st !== 126) { console.log('status', st); process.exit(1); }
console.log('ok');
"#;
    let o = w
        .command("node")
        .args(["-e", script, bin()])
        .output()
        .expect("node");
    assert_eq!(stdout(&o), "ok\n", "{}", stderr(&o));
}

#[test]
fn xargs_and_find_exec_call_it() {
    let w = World::new();
    std::fs::write(w.work.join("one.txt"), "1\n").expect("write");
    std::fs::write(w.work.join("two.txt"), "2\n").expect("write");
    let sh = |line: &str| {
        w.command("bash")
            .arg("-c")
            .arg(line)
            .env("SE", bin())
            .output()
            .expect("bash")
    };
    let o = sh("printf 'a b\\nc\\n' | xargs -I{} \"$SE\" -c 'echo \"got $1\"' sh {}");
    assert_eq!(
        (code(&o), stdout(&o).as_str()),
        (0, "got a b\ngot c\n"),
        "{}",
        stderr(&o)
    );
    let o = sh("find . -name '*.txt' -exec \"$SE\" -c 'cat \"$1\"' sh {} \\; | sort");
    assert_eq!(
        (code(&o), stdout(&o).as_str()),
        (0, "1\n2\n"),
        "{}",
        stderr(&o)
    );
    for (shell, name) in [(bin(), "safe-exec"), ("/bin/bash", "bash")] {
        let o = w
            .command("bash")
            .arg("-c")
            .arg("find . -name '*.txt' -exec \"$S\" -c 'exit 4' sh {} +; echo \"find=$?\"")
            .env("S", shell)
            .output()
            .expect("bash");
        assert_eq!(
            stdout(&o),
            "find=1\n",
            "{name}: find -exec + reports the failure"
        );
    }
    // Denied through xargs: the home directory survives.
    let o = sh("echo \"$HOME\" | xargs \"$SE\" -c 'rm -rf \"$1\"' sh; echo \"xargs=$?\"");
    assert!(stderr(&o).contains("safe-exec: denied:"), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "xargs=123\n",
        "GNU xargs maps a child's 126 to 123"
    );
    let o = sh("find \"$HOME\" -maxdepth 0 -exec \"$SE\" -c 'rm -rf \"$1\"' sh {} \\;");
    assert!(stderr(&o).contains("safe-exec: denied:"), "{}", stderr(&o));
    assert!(w.home.join(".ssh/id_rsa").exists());
    // And directly: 126.
    let o = w
        .command(bin())
        .args(["-c", "rm -rf \"$1\"", "sh"])
        .arg(&w.home)
        .output()
        .expect("run");
    assert_eq!(code(&o), 126);
}

/// git runs `!` aliases with the compile-time `SHELL_PATH` (`/bin/sh -c
/// 'ALIAS "$@"'`, see `GIT_TRACE=1`); `$SHELL` and configuration cannot
/// change it. The closest honest setup is an alias that prefixes safe-exec.
#[test]
fn git_aliases_prefix_safe_exec() {
    let w = World::new();
    let init = w.command("git").args(["init", "-q"]).status();
    assert!(init.is_ok_and(|s| s.success()));
    let trace = w
        .command("git")
        .args(["-c", "alias.probe=!true && true"])
        .arg("probe")
        .env("GIT_TRACE", "1")
        .output()
        .expect("git");
    assert!(
        stderr(&trace).contains("/bin/sh -c"),
        "git's alias shell: {}",
        stderr(&trace)
    );

    let alias = format!("alias.safe=!{} -c", sq(bin()));
    let git = |cmd: &str| {
        w.command("git")
            .args(["-c", &alias, "safe", cmd])
            .output()
            .expect("git")
    };
    let o = git("echo \"it's\" $((1+1)) | tr a-z A-Z");
    // `$((...))` is arithmetic; whatever safe-exec decides must not run it differently.
    if code(&o) == 0 {
        assert_eq!(stdout(&o), "IT'S 2\n");
    }
    let o = git("git status --short && echo clean");
    assert_eq!(
        (code(&o), stdout(&o).as_str()),
        (0, "clean\n"),
        "{}",
        stderr(&o)
    );
    let o = git("exit 9");
    assert_eq!(code(&o), 9);
    let o = git("rm -rf ~");
    assert_eq!(code(&o), 126, "{}", stderr(&o));
    assert!(w.home.join(".ssh/id_rsa").exists());
}

#[test]
fn shell_flags_positional_and_environment_like_bash() {
    let w = World::new();
    let cases: &[&[&str]] = &[
        &["-c", "echo \"$0|$1|$2\"", "name", "a b", "c"],
        &["-lc", "echo login"],
        &["-c", "-l", "echo c-before-l"],
        &["--login", "-c", "echo long"],
        &["-ec", "false; echo not-reached"],
        &["-c", "echo \"$FOO_FOR_TEST\""],
        &["-c", "exit 42"],
        &["-c", "printf '%s\\n' 'a\"b' \"c'd\" 'e\\f'"],
    ];
    for args in cases {
        let ours = w
            .command(bin())
            .args(*args)
            .env("FOO_FOR_TEST", "kept")
            .output()
            .expect("run");
        let theirs = w
            .command("bash")
            .args(*args)
            .env("FOO_FOR_TEST", "kept")
            .output()
            .expect("bash");
        assert_eq!(code(&ours), code(&theirs), "{args:?}: {}", stderr(&ours));
        assert_eq!(stdout(&ours), stdout(&theirs), "{args:?}");
    }
}
