//! Shared harness of the `agents_*` tests: a throw-away world (HOME with a
//! Claude Code shell snapshot, a project directory as cwd) and helpers that
//! drive the real binary the way an agent harness does.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_safe-exec")
}

/// The snapshot file name Claude Code writes (issue 5's exact string).
pub const SNAPSHOT: &str = "snapshot-bash-1700000000000-ab12cd.sh";

/// A temporary HOME and project. `{tmp}` stays `/tmp` (TMPDIR unset) so the
/// harness's cwd sentinel `/tmp/claude-3f2a-cwd` is inside a writable root,
/// as on a real machine.
pub struct World {
    _dir: tempfile::TempDir,
    /// `$HOME`, with `.claude/shell-snapshots/SNAPSHOT`.
    pub home: PathBuf,
    /// The project (cwd of every command).
    pub work: PathBuf,
    /// `$XDG_CONFIG_HOME` (empty: no user config).
    pub config: PathBuf,
}

impl World {
    /// Creates the world.
    pub fn new() -> Self {
        // Not under /tmp: with HOME inside the writable `{tmp}` root the
        // sandbox carves `/tmp` around the secret paths in HOME, and new
        // files directly in `/tmp` (the harness's cwd sentinel) could not be
        // created. A real HOME is not under /tmp.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let home = root.join("home");
        let work = root.join("work");
        let config = root.join("config");
        for d in [&home, &work, &config, &home.join(".claude/shell-snapshots")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
        std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE\n").expect("key");
        std::fs::write(
            home.join(".claude/shell-snapshots").join(SNAPSHOT),
            "# snapshot\nexport SNAPSHOT_LOADED=yes\n",
        )
        .expect("snapshot");
        Self {
            _dir: dir,
            home,
            work,
            config,
        }
    }

    /// Path of the snapshot file.
    pub fn snapshot(&self) -> PathBuf {
        self.home.join(".claude/shell-snapshots").join(SNAPSHOT)
    }

    /// A command for `program` with this world's environment.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.current_dir(&self.work)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("SAFE_EXEC_STATE_DIR", self.home.join(".state"))
            .env_remove("TMPDIR")
            .env_remove("SAFE_EXEC_PROFILE")
            .env_remove("SAFE_EXEC_AGENT")
            .stdin(Stdio::null());
        c
    }

    /// Runs `safe-exec ARGS` with `stdin`.
    pub fn run(&self, args: &[&str], stdin: &str) -> Output {
        let mut c = self.command(bin());
        c.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawn safe-exec");
        if let Some(mut i) = child.stdin.take() {
            let _ = i.write_all(stdin.as_bytes());
        }
        child.wait_with_output().expect("wait")
    }

    /// `safe-exec hook ARGS` with a Bash PreToolUse input for `command`,
    /// run in this world's project.
    pub fn hook(&self, args: &[&str], command: &str) -> Output {
        let input = serde_json::json!({
            "session_id": "test-session",
            "transcript_path": "/dev/null",
            "cwd": self.work,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "test"},
            "tool_use_id": "toolu_1",
        });
        let mut all = vec!["hook"];
        all.extend_from_slice(args);
        self.run(&all, &input.to_string())
    }

    /// `safe-exec check --json -c STRING`, parsed.
    pub fn check_json(&self, string: &str) -> serde_json::Value {
        let out = self.run(&["check", "--json", "-c", string], "");
        serde_json::from_slice(&out.stdout).expect("check --json prints JSON")
    }
}

/// stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code (-1 when killed by a signal).
pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Single-quotes `s` for bash the way harnesses do (`'\''` for a quote).
pub fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Issue 5's Claude Code chain (`CLAUDE_CODE_SHELL` form) around `model`.
pub fn claude_shell_chain(snapshot: &Path, model: &str) -> String {
    format!(
        "source {} 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval {} && pwd -P >| /tmp/claude-3f2a-cwd",
        sq(&snapshot.display().to_string()),
        sq(model)
    )
}

/// Issue 5's Claude Code chain (`CLAUDE_CODE_SHELL_PREFIX` form) around `model`.
pub fn claude_prefix_chain(snapshot: &Path, model: &str) -> String {
    format!(
        "source {} 2>/dev/null || true && {{ shopt -u extglob || setopt NO_EXTENDED_GLOB; }} >/dev/null 2>&1 || true && eval {} && pwd -P >| /tmp/claude-3f2a-cwd",
        sq(&snapshot.display().to_string()),
        sq(model)
    )
}
