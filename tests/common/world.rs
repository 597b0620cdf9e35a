//! The one hermetic world every harness builds its commands from.
//!
//! A world is a temporary directory holding everything a command may touch:
//! HOME, the project (cwd), `$TMPDIR`, the state directory, the XDG
//! directories and a place for system configs. Commands start from a
//! cleared environment plus an allow-list ([`PASS_THROUGH`]): nothing the
//! test runner happens to have set (`CARGO_TARGET_DIR`, `SAFE_EXEC_PROFILE`,
//! `XDG_*`, `SSH_AUTH_SOCK`, ...) reaches the command under test, and nothing
//! the command does can land in the real home, `/etc` or the real `/tmp`.
//!
//! The four harnesses (`common::policy`, `common::sandbox`, `agents_support`,
//! `layers_support`) lay their directories out differently (their field names
//! are used by many tests), so each fills in a [`Dirs`] and calls
//! [`hermetic`]; the environment is defined here, once.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Variables copied from the test runner's environment (when set). Only what
/// finding programs needs: `PATH`. Everything else is set from the world.
pub const PASS_THROUGH: &[&str] = &["PATH"];

/// Name of the marker file at the root of every world (so helpers given a
/// path inside a world can find the world's other directories).
pub const MARKER: &str = ".safe-exec-test-world";

/// Where a world's pieces are.
#[derive(Debug, Clone)]
pub struct Dirs {
    /// Root of the world (canonical).
    pub base: PathBuf,
    /// `$HOME`.
    pub home: PathBuf,
    /// The command's working directory.
    pub cwd: PathBuf,
    /// `$TMPDIR` (the `{tmp}` root).
    pub tmp: PathBuf,
    /// `$SAFE_EXEC_STATE_DIR`.
    pub state: PathBuf,
    /// `$XDG_CONFIG_HOME`.
    pub config: PathBuf,
    /// `$SAFE_EXEC_SYSTEM_CONFIG` (absent unless a test writes it).
    pub system_config: PathBuf,
}

impl Dirs {
    /// The standard layout under `base`: `home`, `work`, `tmp`, `state`,
    /// `config`, `etc/config.toml` (not created).
    pub fn under(base: &Path) -> Dirs {
        Dirs {
            base: base.to_path_buf(),
            home: base.join("home"),
            cwd: base.join("work"),
            tmp: base.join("tmp"),
            state: base.join("state"),
            config: base.join("config"),
            system_config: base.join("etc/config.toml"),
        }
    }

    /// Creates the directories (and the world marker).
    pub fn create(&self) {
        for d in [
            &self.base,
            &self.home,
            &self.cwd,
            &self.tmp,
            &self.state,
            &self.config,
        ] {
            std::fs::create_dir_all(d).expect("create a world directory");
        }
        std::fs::write(self.base.join(MARKER), "").expect("world marker");
    }
}

/// A fresh temporary directory for a world (canonical path) and its guard.
pub fn tempdir(prefix: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("canonicalize the world");
    (dir, base)
}

/// A fully built world with the standard layout ([`Dirs::under`]), for new
/// tests that need no harness of their own.
pub struct World {
    _dir: tempfile::TempDir,
    /// The directories.
    pub dirs: Dirs,
}

impl World {
    /// Creates a world.
    pub fn new() -> World {
        let (dir, base) = tempdir("safe-exec-world-");
        let dirs = Dirs::under(&base);
        dirs.create();
        World { _dir: dir, dirs }
    }

    /// `program` with the world's environment (see [`hermetic`]).
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        hermetic(program, &self.dirs)
    }

    /// The binary under test with the world's environment.
    pub fn safe_exec(&self) -> Command {
        self.command(env!("CARGO_BIN_EXE_safe-exec"))
    }
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

/// `program` (not started) in the world: cleared environment, the
/// [`PASS_THROUGH`] variables, HOME, TMPDIR, the XDG directories, the state
/// directory, no system configuration, `LANG=C.UTF-8`, git's system config
/// off, cwd inside the world, stdin null.
pub fn hermetic(program: impl AsRef<OsStr>, d: &Dirs) -> Command {
    let mut c = Command::new(program);
    c.env_clear();
    for var in PASS_THROUGH {
        if let Some(v) = std::env::var_os(var) {
            c.env(var, v);
        }
    }
    if std::env::var_os("PATH").is_none() {
        c.env("PATH", "/usr/local/bin:/usr/bin:/bin");
    }
    c.env("HOME", &d.home)
        .env("TMPDIR", &d.tmp)
        .env("LANG", "C.UTF-8")
        .env("XDG_CONFIG_HOME", &d.config)
        .env("XDG_CACHE_HOME", d.home.join(".cache"))
        .env("XDG_DATA_HOME", d.home.join(".local/share"))
        .env("XDG_STATE_HOME", d.home.join(".local/state"))
        .env("SAFE_EXEC_STATE_DIR", &d.state)
        .env("SAFE_EXEC_SYSTEM_CONFIG", &d.system_config)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .current_dir(&d.cwd)
        .stdin(Stdio::null());
    c
}

/// The world containing `path` (the nearest ancestor with the marker).
pub fn world_of(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .find(|a| a.join(MARKER).is_file())
        .map(Path::to_path_buf)
}

/// Whether CI is running the tests (`CI=true`): there a missing tool or
/// data file is a failure, never a skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Whether `tool` is on PATH.
pub fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
}

/// A tool a test needs. `bash tests/run.sh` installs every one of them, so
/// a missing tool is a failure (with what to install), not a silent pass.
pub fn need_tool(tool: &str, package: &str) {
    assert!(
        on_path(tool),
        "`{tool}` is not installed (Debian package {package}); `bash tests/run.sh` installs it as root"
    );
}

/// A condition outside the test's control (a port it cannot bind, say):
/// in CI a failure, elsewhere a skip that says why on stderr. Returns
/// (outside CI) so the caller can return early.
pub fn skip_or_fail(why: &str) {
    assert!(!in_ci(), "CI=true: cannot skip: {why}");
    eprintln!("SKIP: {why}");
}
