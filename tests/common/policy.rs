//! Shared harness of the policy and CLI tests: drives the real binary
//! (`CARGO_BIN_EXE_safe-exec`) inside a throw-away world: a temporary HOME
//! (with a fake `~/.ssh/id_rsa`), a temporary project directory as cwd, a
//! temporary TMPDIR and state directory, and no user or system config. The
//! real home is never consulted.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::world::{Dirs, MARKER, hermetic};

/// Path of the binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_safe-exec");

/// A temporary world for one test.
pub struct World {
    _dir: tempfile::TempDir,
    /// Temporary HOME.
    pub home: PathBuf,
    /// Project directory (the cwd of every command).
    pub cwd: PathBuf,
    /// `$TMPDIR`.
    pub tmp: PathBuf,
    /// `SAFE_EXEC_STATE_DIR`.
    pub state: PathBuf,
    /// `XDG_CONFIG_HOME` (empty unless a test writes a config).
    pub xdg: PathBuf,
    /// A directory for profiles and system configs written by the tests.
    pub etc: PathBuf,
    /// The same directories as the hermetic world sees them.
    pub dirs: Dirs,
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

impl World {
    /// A fresh world.
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("safe-exec-policy-")
            .tempdir()
            .expect("tempdir");
        let root = dir.path().canonicalize().expect("canonicalize");
        let home = root.join("home");
        let cwd = root.join("project");
        let tmp = root.join("tmp");
        let state = root.join("state");
        let xdg = root.join("xdg");
        let etc = root.join("etc");
        for d in [
            &home,
            &cwd,
            &tmp,
            &state,
            &xdg,
            &etc,
            &home.join(".ssh"),
            &cwd.join("src"),
        ] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(root.join(MARKER), "").unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "FAKE KEY\n").unwrap();
        std::fs::write(home.join(".bashrc"), "# bashrc\n").unwrap();
        std::fs::write(cwd.join("Cargo.toml"), "[package]\nname = \"demo\"\n").unwrap();
        std::fs::write(cwd.join("src/main.rs"), "fn main() {}\n").unwrap();
        let dirs = Dirs {
            base: root.clone(),
            home: home.clone(),
            cwd: cwd.clone(),
            tmp: tmp.clone(),
            state: state.clone(),
            config: xdg.clone(),
            system_config: etc.join("no-system-config.toml"),
        };
        World {
            _dir: dir,
            home,
            cwd,
            tmp,
            state,
            xdg,
            etc,
            dirs,
        }
    }

    /// A command for the binary with the world's environment.
    pub fn cmd(&self) -> Command {
        let mut c = hermetic(BIN, &self.dirs);
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs `safe-exec hook ARGS` (with `env` set) on a Bash tool call of
    /// `cmd` in the world's cwd, as Claude Code sends it on stdin.
    pub fn hook_bash(&self, args: &[&str], env: &[(&str, &str)], cmd: &str) -> Output {
        use std::io::Write as _;
        let input = serde_json::json!({
            "session_id": "policy-test",
            "cwd": self.cwd,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": cmd},
        });
        let mut c = self.cmd();
        c.arg("hook").args(args).stdin(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().expect("spawn hook");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.to_string().as_bytes())
            .expect("write hook input");
        child.wait_with_output().expect("hook output")
    }

    /// Runs the binary with `args`; returns the output and the wall time.
    pub fn run<I, S>(&self, args: I) -> (Output, Duration)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let start = Instant::now();
        let out = self.cmd().args(args).output().expect("spawn safe-exec");
        (out, start.elapsed())
    }

    /// `safe-exec check --json -c STRING` (default profile); returns the exit
    /// code and the parsed JSON.
    pub fn check_json(&self, s: &str) -> (i32, Value) {
        self.check_json_args(&["-c", s])
    }

    /// `safe-exec check --json ARGS...`.
    pub fn check_json_args(&self, args: &[&str]) -> (i32, Value) {
        let mut all = vec!["check", "--json"];
        all.extend_from_slice(args);
        let (out, _) = self.run(&all);
        let code = code(&out);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "check --json {args:?}: stdout is not JSON ({e}); exit {code}\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (code, v)
    }

    /// The decision of `check --json -c STRING`.
    pub fn decision(&self, s: &str) -> String {
        let (_, v) = self.check_json(s);
        v["decision"].as_str().unwrap_or("<missing>").to_string()
    }

    /// Writes a file under the world's `etc` directory; returns its path.
    pub fn write_etc(&self, name: &str, text: &str) -> PathBuf {
        let p = self.etc.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Path helper.
    pub fn path(&self, p: &str) -> PathBuf {
        self.cwd.join(Path::new(p))
    }
}

/// Exit code (-1 when killed by a signal).
pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

/// stdout as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A `check --json` answer's reasons, joined with ` | ` (empty when none).
pub fn reasons(v: &Value) -> String {
    v["reasons"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .unwrap_or_default()
}

/// (decision, reasons joined) of `check --json [--unconfined] -c CMD`.
pub fn decide(w: &World, unconfined: bool, cmd: &str) -> (String, String) {
    let mut args = vec![];
    if unconfined {
        args.push("--unconfined");
    }
    args.extend(["-c", cmd]);
    let (code, v) = w.check_json_args(&args);
    assert!(matches!(code, 0 | 2 | 3), "check exit {code} for {cmd:?}");
    (
        v["decision"].as_str().unwrap_or("?").to_string(),
        reasons(&v),
    )
}

/// Every case `(command, confined decision, unconfined decision, words the
/// reason contains when not allowed)`.
pub fn expect(w: &World, cases: &[(&str, &str, &str, &str)]) {
    let mut fails = Vec::new();
    for (cmd, confined, unconfined, reason) in cases {
        for (mode, want) in [(false, confined), (true, unconfined)] {
            let (d, why) = decide(w, mode, cmd);
            let label = if mode { "unconfined" } else { "confined" };
            if d != *want {
                fails.push(format!("{label} {cmd:?}: {d}, want {want} ({why})"));
            } else if d != "allow" && !why.contains(reason) {
                fails.push(format!("{label} {cmd:?}: reason {why:?} lacks {reason:?}"));
            }
        }
    }
    assert!(fails.is_empty(), "\n  {}", fails.join("\n  "));
}

/// Checks every command under the default profile and collects those whose
/// decision `bad` rejects: one test failure lists all offenders at once.
pub fn collect_failures(
    w: &World,
    cases: &[&str],
    what: &str,
    bad: impl Fn(&str) -> bool,
) -> Vec<String> {
    let mut fails = Vec::new();
    for c in cases {
        let (code, v) = w.check_json(c);
        let d = v["decision"].as_str().unwrap_or("<missing>");
        assert_ne!(code, 101, "check panicked on {c:?}");
        assert!(matches!(code, 0 | 2 | 3), "check exit {code} for {c:?}");
        if bad(d) {
            fails.push(format!("{what}: {c:?} -> {d} ({})", reasons(&v)));
        }
    }
    fails
}
