//! Shared harness of the sandbox integration tests.
//!
//! Every test gets a fresh temporary world ([`World`]): a HOME with a fake
//! `~/.ssh/id_rsa` and `~/.bashrc`, a writable `work` root (the cwd), a
//! writable `tmp` root ($TMPDIR), and an `outside` directory that is only
//! readable. Nothing touches the real home, /etc or the network beyond
//! loopback listeners the test creates.
//!
//! Commands are run through the `sandbox_exec` example (the library end to
//! end, with the real fork/exec path) until the CLI drives profiles.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

/// Landlock ABI of the running kernel (0 if none).
pub fn landlock_abi() -> u32 {
    safe_exec::sandbox::kernel::landlock_abi()
}

/// Call at the start of every test: a kernel without Landlock fails the
/// suite unless `SAFE_EXEC_TEST_ALLOW_NO_LANDLOCK=1`, which turns it into a
/// printed skip. Returns false when the test must skip.
pub fn require_landlock() -> bool {
    if landlock_abi() >= 6 {
        return true;
    }
    if std::env::var("SAFE_EXEC_TEST_ALLOW_NO_LANDLOCK").as_deref() == Ok("1") {
        eprintln!(
            "SKIP: kernel offers Landlock ABI {} (tests need 6); allowed by SAFE_EXEC_TEST_ALLOW_NO_LANDLOCK=1",
            landlock_abi()
        );
        return false;
    }
    panic!(
        "kernel offers Landlock ABI {} but the sandbox tests need ABI 6+; set SAFE_EXEC_TEST_ALLOW_NO_LANDLOCK=1 to skip them",
        landlock_abi()
    );
}

/// Prints a skip message (a skip is never a pass: the test returns early
/// having asserted nothing, and says why).
pub fn skip(why: &str) {
    eprintln!("SKIP: {why}");
}

/// Whether `tool` is on PATH.
pub fn have(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
}

fn target_dir() -> PathBuf {
    // target/debug/deps/<test-binary>
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("target dir")
        .to_path_buf()
}

/// The `sandbox_exec` example, built if `cargo test` did not build it.
pub fn driver() -> &'static Path {
    static DRIVER: OnceLock<PathBuf> = OnceLock::new();
    DRIVER.get_or_init(|| {
        // `cargo test --test X` does not rebuild examples: make sure the
        // driver matches the library under test (a no-op when fresh).
        let path = target_dir().join("examples/sandbox_exec");
        let status = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--example", "sandbox_exec"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo build --example sandbox_exec");
        assert!(status.success() && path.is_file());
        path
    })
}

/// The probe program (tests/probe/probe.rs), compiled once per test binary.
pub fn probe() -> &'static Path {
    static PROBE: OnceLock<PathBuf> = OnceLock::new();
    PROBE.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("probe dir");
        let out = dir.join("probe");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/probe/probe.rs");
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        let status = Command::new(rustc)
            .args(["--edition", "2021", "-C", "opt-level=1", "-o"])
            .arg(&out)
            .arg(&src)
            .status()
            .expect("run rustc for the probe");
        assert!(status.success(), "probe failed to compile");
        out
    })
}

/// A temporary world for one test.
pub struct World {
    _dir: tempfile::TempDir,
    /// Root of the world (canonical).
    pub base: PathBuf,
    /// $HOME.
    pub home: PathBuf,
    /// Writable root and cwd.
    pub work: PathBuf,
    /// Writable $TMPDIR.
    pub tmp: PathBuf,
    /// Readable but not writable.
    pub outside: PathBuf,
    /// The spec the next run uses (JSON of `{sandbox, env}`).
    pub spec: Value,
}

impl World {
    /// Creates the world and the default spec: read `/`, write work+tmp,
    /// deny `~/.ssh` and `~/.aws`, network off, required enforcement.
    pub fn new() -> World {
        let dir = tempfile::Builder::new()
            .prefix("safe-exec-test-")
            .tempdir()
            .expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("canonicalize");
        let home = base.join("home");
        let work = base.join("work");
        let tmp = base.join("tmp");
        let outside = base.join("outside");
        for d in [
            &home,
            &work,
            &tmp,
            &outside,
            &home.join(".ssh"),
            &home.join(".aws"),
        ] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY\n").expect("write");
        std::fs::write(home.join(".aws/credentials"), "aws_secret\n").expect("write");
        std::fs::write(home.join(".bashrc"), "# bashrc\n").expect("write");
        std::fs::write(outside.join("f"), "original\n").expect("write");
        let spec = json!({
            "sandbox": {
                "read": ["/"],
                "write": [work, tmp],
                "deny_read": [home.join(".ssh"), home.join(".aws")],
                "network": "off",
                "unix_sockets": false,
                "limits": {},
                "enforcement": "required",
                "timeout": null
            },
            "env": {"mode": "inherit", "allow": [], "remove": [], "set": {}}
        });
        World {
            _dir: dir,
            base,
            home,
            work,
            tmp,
            outside,
            spec,
        }
    }

    /// Sets `sandbox.KEY = value`.
    pub fn set(&mut self, key: &str, value: Value) -> &mut Self {
        self.spec["sandbox"][key] = value;
        self
    }

    /// Sets `env.KEY = value`.
    pub fn set_env(&mut self, key: &str, value: Value) -> &mut Self {
        self.spec["env"][key] = value;
        self
    }

    /// Sets a wall-clock limit in seconds.
    pub fn timeout(&mut self, secs: u64) -> &mut Self {
        self.set("timeout", json!({"secs": secs, "nanos": 0}))
    }

    /// A command (not started) running `argv` in the sandbox, supervised,
    /// with HOME/TMPDIR in the world and cwd = work.
    pub fn command<S: AsRef<OsStr>>(&self, argv: &[S]) -> Command {
        let spec_path = self.base.join(format!("spec-{}.json", rand_suffix()));
        std::fs::write(&spec_path, self.spec.to_string()).expect("write spec");
        let mut cmd = Command::new(driver());
        cmd.arg("--spec")
            .arg(&spec_path)
            .arg("--supervise")
            .arg("--cwd")
            .arg(&self.work)
            .arg("--")
            .args(argv)
            .env("HOME", &self.home)
            .env("TMPDIR", &self.tmp)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .current_dir(&self.work)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `argv` in the sandbox and returns its output.
    pub fn run<S: AsRef<OsStr>>(&self, argv: &[S]) -> Output {
        self.command(argv).output().expect("run sandbox_exec")
    }

    /// Runs the probe with `args` in the sandbox; returns its exit code.
    pub fn probe(&self, args: &[&str]) -> i32 {
        let mut argv: Vec<&OsStr> = vec![probe().as_os_str()];
        argv.extend(args.iter().map(OsStr::new));
        let out = self.run(&argv);
        code(&out)
    }

    /// Runs `sh -c script` in the sandbox.
    pub fn sh(&self, script: &str) -> Output {
        self.run(&["/bin/sh", "-c", script])
    }

    /// A path under work / outside / home, as a string.
    pub fn w(&self, rel: &str) -> String {
        self.work.join(rel).display().to_string()
    }
    /// See [`World::w`].
    pub fn o(&self, rel: &str) -> String {
        self.outside.join(rel).display().to_string()
    }
    /// See [`World::w`].
    pub fn h(&self, rel: &str) -> String {
        self.home.join(rel).display().to_string()
    }
}

fn rand_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs the probe WITHOUT any sandbox (positive controls for syscalls no
/// profile can allow). Runs in a temp dir, never in the real home.
pub fn probe_unsandboxed(args: &[&str]) -> i32 {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(probe())
        .args(args)
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("run probe");
    code(&out)
}

/// Exit code of an output (128+N for a signal).
pub fn code(out: &Output) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    out.status
        .code()
        .or_else(|| out.status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

/// Stdout as a string.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Stderr as a string.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Whether process `pid` exists (and is not a zombie).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// errno constants used in assertions.
pub const EPERM: i32 = libc::EPERM;
/// See [`EPERM`].
pub const EACCES: i32 = libc::EACCES;
/// See [`EPERM`].
pub const EXDEV: i32 = libc::EXDEV;
/// See [`EPERM`].
pub const ENOSYS: i32 = libc::ENOSYS;
/// See [`EPERM`].
pub const EBADF: i32 = libc::EBADF;
