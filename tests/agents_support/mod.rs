//! Shared harness of the `agents_*` tests: a throw-away world (HOME with a
//! Claude Code shell snapshot, a project directory as cwd) and helpers that
//! drive the real binary the way an agent harness does.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::world::{Dirs, MARKER, hermetic, world_of};

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_safe-exec")
}

/// The snapshot file name Claude Code writes (issue 5's exact string).
pub const SNAPSHOT: &str = "snapshot-bash-1700000000000-ab12cd.sh";

/// A temporary HOME and project, and a `$TMPDIR` (the `{tmp}` root) that
/// holds the harness's cwd sentinel `claude-3f2a-cwd`, as Claude Code writes
/// it into its temp dir (`os.tmpdir()`).
pub struct World {
    _dir: tempfile::TempDir,
    /// `$HOME`, with `.claude/shell-snapshots/SNAPSHOT`.
    pub home: PathBuf,
    /// The project (cwd of every command).
    pub work: PathBuf,
    /// `$XDG_CONFIG_HOME` (empty: no user config).
    pub config: PathBuf,
    /// `$TMPDIR`.
    pub tmp: PathBuf,
    /// The same directories as the hermetic world sees them.
    pub dirs: Dirs,
}

impl World {
    /// Creates the world.
    pub fn new() -> Self {
        let (dir, root) = crate::common::world::tempdir("safe-exec-agents-");
        let home = root.join("home");
        let work = root.join("work");
        let config = root.join("config");
        let tmp = root.join("tmp");
        std::fs::write(root.join(MARKER), "").expect("marker");
        for d in [
            &home,
            &work,
            &config,
            &tmp,
            &home.join(".claude/shell-snapshots"),
        ] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
        std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE\n").expect("key");
        std::fs::write(
            home.join(".claude/shell-snapshots").join(SNAPSHOT),
            "# snapshot\nexport SNAPSHOT_LOADED=yes\n",
        )
        .expect("snapshot");
        let dirs = Dirs {
            base: root.clone(),
            home: home.clone(),
            cwd: work.clone(),
            tmp: tmp.clone(),
            state: home.join(".state"),
            config: config.clone(),
            system_config: root.join("no-system-config.toml"),
        };
        Self {
            _dir: dir,
            home,
            work,
            config,
            tmp,
            dirs,
        }
    }

    /// Path of the snapshot file.
    pub fn snapshot(&self) -> PathBuf {
        self.home.join(".claude/shell-snapshots").join(SNAPSHOT)
    }

    /// A command for `program` with this world's environment.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        hermetic(program, &self.dirs)
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

/// The harness's cwd sentinel for a chain whose snapshot is `snapshot`:
/// `claude-3f2a-cwd` in the `$TMPDIR` of the world holding the snapshot
/// (`/tmp` outside a world, as issue 5 recorded it).
pub fn sentinel(snapshot: &Path) -> PathBuf {
    world_of(snapshot)
        .map(|w| w.join("tmp"))
        .unwrap_or_else(|| PathBuf::from("/tmp"))
        .join("claude-3f2a-cwd")
}

/// Issue 5's Claude Code chain (`CLAUDE_CODE_SHELL` form) around `model`.
pub fn claude_shell_chain(snapshot: &Path, model: &str) -> String {
    format!(
        "source {} 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval {} && pwd -P >| {}",
        sq(&snapshot.display().to_string()),
        sq(model),
        sentinel(snapshot).display()
    )
}

/// Issue 5's Claude Code chain (`CLAUDE_CODE_SHELL_PREFIX` form) around `model`.
pub fn claude_prefix_chain(snapshot: &Path, model: &str) -> String {
    format!(
        "source {} 2>/dev/null || true && {{ shopt -u extglob || setopt NO_EXTENDED_GLOB; }} >/dev/null 2>&1 || true && eval {} && pwd -P >| {}",
        sq(&snapshot.display().to_string()),
        sq(model),
        sentinel(snapshot).display()
    )
}
