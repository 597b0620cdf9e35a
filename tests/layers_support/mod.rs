//! Shared harness for the layers tests: a temporary HOME, cwd, TMPDIR,
//! state directory, system config and hooks directory per test, and the
//! real binary.
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::world::{Dirs, MARKER, hermetic};

pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        for d in ["home", "cwd", "tmp", "state", "hooks.d", "config"] {
            std::fs::create_dir_all(dir.path().join(d)).expect("mkdir");
        }
        std::fs::write(dir.path().join(MARKER), "").expect("marker");
        Env { dir }
    }

    pub fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    pub fn state(&self) -> PathBuf {
        self.path("state")
    }

    /// Writes an executable `/bin/sh` script and returns its path.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let p = self.path(name);
        // Written under another name and copied into place by a `cp`
        // child: a write descriptor of this process, inherited by a child
        // another test thread is forking, would make executing the script
        // fail now and then with ETXTBSY.
        let draft = self.path(&format!("{name}.draft"));
        std::fs::write(&draft, format!("#!/bin/sh\n{body}\n")).expect("write script");
        std::fs::set_permissions(&draft, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let cp = std::process::Command::new("cp")
            .arg("-p")
            .arg("--")
            .arg(&draft)
            .arg(&p)
            .status()
            .expect("run cp");
        assert!(cp.success(), "cp {} {}", draft.display(), p.display());
        p
    }

    /// Writes a profile extending `default` and returns its path.
    pub fn profile(&self, body: &str) -> PathBuf {
        let p = self.path("profile.toml");
        std::fs::write(&p, format!("extends = \"default\"\n{body}\n")).expect("write profile");
        p
    }

    /// The directories as the hermetic world sees them.
    pub fn dirs(&self) -> Dirs {
        Dirs {
            base: self.dir.path().to_path_buf(),
            home: self.path("home"),
            cwd: self.path("cwd"),
            tmp: self.path("tmp"),
            state: self.state(),
            config: self.path("config"),
            system_config: self.path("system-config.toml"),
        }
    }

    pub fn cmd(&self) -> Command {
        let mut c = hermetic(env!("CARGO_BIN_EXE_safe-exec"), &self.dirs());
        c.env("SAFE_EXEC_HOOKS_DIR", self.path("hooks.d"));
        c
    }

    /// Runs `safe-exec --profile P ARGS...`.
    pub fn run(&self, args: &[&str]) -> Output {
        let p = self.path("profile.toml");
        let mut c = self.cmd();
        if p.exists() {
            c.arg("--profile").arg(&p);
        }
        c.args(args).output().expect("run safe-exec")
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// JSON lines of a file written by a test script.
    pub fn json_lines(&self, name: &str) -> Vec<Value> {
        self.read(name)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
            .collect()
    }

    pub fn audit(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.state().join("audit.jsonl")).unwrap_or_default();
        text.lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("bad audit line {l:?}: {e}"))
            })
            .collect()
    }

    pub fn session(&self, id: &str) -> Value {
        let text = std::fs::read_to_string(self.state().join(format!("sessions/{id}.json")))
            .expect("session state");
        serde_json::from_str(&text).expect("session JSON")
    }
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A script body that saves its stdin as one JSON line to `file` (in the
/// test directory), then runs `then`.
pub fn record_then(dir: &Path, file: &str, then: &str) -> String {
    let f = dir.join(file);
    format!(
        "input=$(cat)\nprintf '%s\\n' \"$input\" >> '{}'\n{then}",
        f.display()
    )
}
