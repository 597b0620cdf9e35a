//! Daily work keeps working under the default confinement (read `/`, write
//! the project and $TMPDIR, deny `~/.ssh`/`~/.aws`, network off), in a
//! scratch repository with a temporary HOME. A missing tool is a printed
//! skip, never a pass.
use crate::common::sandbox as common;
use common::*;

/// Runs `script` with `safe-exec -c` (policy and kernel) or, with
/// `file = true`, as a script file (kernel only: expansions such as `"$T"`
/// make the policy ask, and there is nobody to answer).
fn run_ok(w: &World, script: &str, file: bool) -> String {
    let out = if file { w.bash(script) } else { w.sh(script) };
    assert_eq!(
        code(&out),
        0,
        "script failed: {script}\nstdout: {}\nstderr: {}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

fn ok(w: &World, script: &str) -> String {
    run_ok(w, script, false)
}

#[test]
fn git_workflow() {
    if !require_landlock() {
        return;
    }
    need_tool("git", "git");
    let w = World::new();
    let out = ok(
        &w,
        "set -e
        git init -q -b main repo && cd repo
        git config user.email t@example.com && git config user.name T
        echo one > a.txt && git add a.txt && git commit -qm first
        echo two >> a.txt && git diff --stat && git status --short
        git commit -qam second && git log --oneline | wc -l",
    );
    assert!(
        out.contains("1 file changed") && out.contains(" M a.txt"),
        "{out}"
    );
    assert_eq!(out.lines().last(), Some("2"));
}

#[test]
fn cargo_new_and_offline_build() {
    if !require_landlock() {
        return;
    }
    need_tool("cargo", "cargo");
    let w = World::new();
    // RUSTUP_HOME/CARGO_HOME of the toolchain stay readable (read root /);
    // the build writes only inside the project.
    let cargo_home = w.work.join("cargo-home");
    let out = w
        .command_c("set -e; cargo new -q --vcs none hello && cd hello && cargo build -q --offline && ./target/debug/hello")
        .env("CARGO_HOME", &cargo_home)
        .env("RUSTUP_HOME", std::env::var_os("RUSTUP_HOME").unwrap_or_else(|| format!("{}/.rustup", std::env::var("HOME").unwrap_or_default()).into()))
        .env("RUSTUP_TOOLCHAIN", std::env::var_os("RUSTUP_TOOLCHAIN").unwrap_or_else(|| "stable".into()))
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "Hello, world!");
}

#[test]
fn python_one_liner_and_venv() {
    if !require_landlock() {
        return;
    }
    need_tool("python3", "python3");
    let w = World::new();
    let out = ok(&w, "python3 -c 'print(6*7)'");
    assert_eq!(out.trim(), "42");
    let out = w.bash("python3 -m venv --without-pip venv && ./venv/bin/python -c 'import sys; print(sys.prefix)'");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).trim().ends_with("/venv"), "{}", stdout(&out));
}

#[test]
fn make_tar_sort_pipelines_and_heredoc() {
    let Some(w) = landlock_world() else {
        return;
    };
    need_tool("make", "make");
    std::fs::write(w.work.join("Makefile"), "all:\n\techo built > out.txt\n").unwrap();
    ok(&w, "make -s");
    assert_eq!(
        std::fs::read_to_string(w.work.join("out.txt")).unwrap(),
        "built\n"
    );
    let out = run_ok(&w, "set -e
        printf 'b\\na\\nc\\n' > in.txt
        sort in.txt > sorted.txt
        T=$(mktemp) && sort -r in.txt > \"$T\" && head -1 \"$T\"
        tar cf arch.tar in.txt sorted.txt && mkdir x && tar xf arch.tar -C x && cat x/sorted.txt | tr -d '\\n'
        echo
        cat <<EOF
heredoc $((1+1))
EOF", true);
    assert_eq!(out, "c\nabc\nheredoc 2\n");
}

#[test]
fn npm_version() {
    if !require_landlock() {
        return;
    }
    need_tool("npm", "npm");
    let w = World::new();
    let out = ok(&w, "npm --version");
    assert!(
        out.trim()
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit()),
        "{out}"
    );
}

/// Runs `inner` under `script` so that it has a pseudo-terminal.
fn on_pty(w: &World, inner: &str) -> std::process::Output {
    crate::common::world::hermetic("script", &w.dirs)
        .args(["-qec", inner, "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .unwrap()
}

#[test]
fn interactive_terminal_programs_work() {
    if !require_landlock() {
        return;
    }
    need_tool("script", "bsdutils");
    need_tool("stty", "coreutils");
    let w = World::new();
    let profile = w.profile_file();
    let run = |argv: &str| {
        format!(
            "SAFE_EXEC_STATE_DIR={} TMPDIR={} {} --profile {} --timeout 300 --cwd {} -- {argv}",
            w.state.display(),
            w.tmp.display(),
            bin().display(),
            profile.display(),
            w.work.display()
        )
    };
    // safe-exec on a pty: the command gets the terminal (foreground group).
    let out = on_pty(&w, &run("stty size"));
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(
        stdout(&out).split_whitespace().count() == 2,
        "{:?}",
        stdout(&out)
    );
    let out = on_pty(
        &w,
        &run("sh -c 'stty size < /dev/tty && test -t 0 && echo tty-ok'"),
    );
    assert!(stdout(&out).contains("tty-ok"), "{:?}", stdout(&out));
    // a pty opened inside the sandbox (/dev/ptmx + IoctlDev rules)
    let out = w.bash("script -qec 'stty size; echo inner-ok' /dev/null");
    assert!(
        stdout(&out).contains("inner-ok"),
        "{} {}",
        stdout(&out),
        stderr(&out)
    );
    // control: same without safe-exec
    let out = on_pty(&w, "stty size");
    assert_eq!(code(&out), 0);
}
