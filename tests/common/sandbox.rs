//! Shared harness of the sandbox integration tests.
//!
//! Every test gets a fresh temporary world ([`World`]): a HOME with a fake
//! `~/.ssh/id_rsa` and `~/.bashrc`, a writable `work` root (the cwd), a
//! writable `tmp` root ($TMPDIR), and an `outside` directory that is only
//! readable. Nothing touches the real home, /etc or the network beyond
//! loopback listeners the test creates.
//!
//! Commands run through the real `safe-exec` binary with a per-test profile
//! file (`--profile`). The profile lets the probe (an unknown program) and
//! dangerous commands past the policy layer, and the probe's path arguments
//! are hex-encoded, so what a test observes is the kernel's answer.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

use super::world::{Dirs, MARKER, hermetic};
#[allow(unused_imports)]
pub use super::world::{in_ci, need_tool, skip_or_fail};

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

/// A fresh [`World`] for a test that needs Landlock, or `None` when the
/// test must skip (see [`require_landlock`]): `let Some(w) =
/// landlock_world() else { return };`.
pub fn landlock_world() -> Option<World> {
    require_landlock().then(World::new)
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

/// The real `safe-exec` binary under test.
pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_safe-exec"))
}

/// The `sandbox_exec` example (a JSON `SandboxSpec` driver), built if
/// `cargo test` did not build it. Only for the network modes no profile can
/// select yet (`http`, `ping`: the CLI never grants them).
pub fn spec_driver() -> &'static Path {
    static DRIVER: OnceLock<PathBuf> = OnceLock::new();
    DRIVER.get_or_init(|| {
        let dir = target_dir();
        let path = dir.join("examples/sandbox_exec");
        let mut build = Command::new(env!("CARGO"));
        build.args(["build", "--quiet", "--example", "sandbox_exec"]);
        // Tests built with `--release` live in target/release.
        if dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        // Tests built with `--target T` (tests/run.sh's shipped-target
        // pass) live in target/T/debug: build the example there too.
        if let Some(triple) = dir
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .filter(|n| n.contains("-linux-"))
        {
            build.args(["--target", triple]);
        }
        let status = build
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
    /// `SAFE_EXEC_STATE_DIR` (a protected path of the default profile).
    pub state: PathBuf,
    /// The same directories as the hermetic world sees them.
    pub dirs: Dirs,
    /// The profile the next run uses, as a TOML-shaped JSON value; written
    /// to a fresh file for every run and passed with `--profile`.
    pub profile: Value,
}

impl World {
    /// Creates the world and its profile: `extends = "default"` (read `/`,
    /// write `{cwd}` + `{tmp}`, deny `~/.ssh`, `~/.aws`, ..., network off,
    /// required enforcement) with a policy that lets unknown programs (the
    /// probe) and dangerous commands run, so the kernel is what answers.
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
        let state = base.join("state");
        for d in [
            &home,
            &work,
            &tmp,
            &outside,
            &state,
            &home.join(".ssh"),
            &home.join(".aws"),
        ] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(base.join(MARKER), "").expect("write");
        std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY\n").expect("write");
        std::fs::write(home.join(".aws/credentials"), "aws_secret\n").expect("write");
        std::fs::write(home.join(".bashrc"), "# bashrc\n").expect("write");
        std::fs::write(outside.join("f"), "original\n").expect("write");
        let profile = json!({
            "extends": "default",
            "name": "sandbox-test",
            "policy": {
                "mode": "dangerous",
                "allow_dangerous": true,
                "unknown_commands": "allow",
                "above_mode": "allow",
            },
            "shell": {"substitutions": true},
            "paths": {},
            // The default profile's network is "loopback"; these tests
            // start from "off" and set what they test.
            "sandbox": {"network": "off"},
            "env": {},
        });
        let dirs = Dirs {
            base: base.clone(),
            home: home.clone(),
            cwd: work.clone(),
            tmp: tmp.clone(),
            state: state.clone(),
            config: home.join(".config"),
            system_config: base.join("no-system-config.toml"),
        };
        World {
            _dir: dir,
            dirs,
            base,
            home,
            work,
            tmp,
            outside,
            state,
            profile,
        }
    }

    /// Sets a profile key: `read`, `write`, `deny_read` go to `[paths]`;
    /// everything else to `[sandbox]` (`network`, `unix_sockets`,
    /// `enforcement`, `limits`, `timeout_seconds`).
    pub fn set(&mut self, key: &str, value: Value) -> &mut Self {
        let section = if matches!(key, "read" | "write" | "deny_read" | "runtime") {
            "paths"
        } else {
            "sandbox"
        };
        self.profile[section][key] = value;
        self
    }

    /// Sets `[env] KEY = value`.
    pub fn set_env(&mut self, key: &str, value: Value) -> &mut Self {
        self.profile["env"][key] = value;
        self
    }

    /// Sets `[policy] KEY = value`.
    pub fn set_policy(&mut self, key: &str, value: Value) -> &mut Self {
        self.profile["policy"][key] = value;
        self
    }

    /// Sets the profile's wall-clock limit in seconds.
    pub fn timeout(&mut self, secs: u64) -> &mut Self {
        self.set("timeout_seconds", json!(secs))
    }

    /// Writes the profile to a fresh file and returns its path.
    pub fn profile_file(&self) -> PathBuf {
        let path = self.base.join(format!("profile-{}.toml", rand_suffix()));
        let text = toml::to_string(&self.profile).expect("profile as TOML");
        std::fs::write(&path, text).expect("write profile");
        path
    }

    /// `safe-exec` (not started) with the world's environment
    /// ([`hermetic`]: HOME, TMPDIR, state and config directories inside the
    /// world, no system config, nothing else inherited but PATH, stdin null,
    /// cwd = work). Add the arguments.
    pub fn safe_exec(&self) -> Command {
        hermetic(bin(), &self.dirs)
    }

    /// A command (not started): `safe-exec --profile P -- argv...`.
    pub fn command<S: AsRef<OsStr>>(&self, argv: &[S]) -> Command {
        let mut cmd = self.safe_exec();
        cmd.arg("--profile")
            .arg(self.profile_file())
            .arg("--")
            .args(argv);
        cmd
    }

    /// A command (not started): `safe-exec --profile P -c script`, which
    /// runs under the profile's shell (bash) inside the sandbox.
    pub fn command_c(&self, script: &str) -> Command {
        let mut cmd = self.safe_exec();
        cmd.arg("--profile")
            .arg(self.profile_file())
            .arg("-c")
            .arg(script);
        cmd
    }

    /// `safe-exec --profile P --timeout 300 -- argv...`: with a time limit
    /// safe-exec stays as the supervising parent (without one it execs in
    /// place), forwards signals and exits 128+N itself.
    pub fn supervised<S: AsRef<OsStr>>(&self, argv: &[S]) -> Command {
        let mut cmd = self.safe_exec();
        cmd.arg("--profile")
            .arg(self.profile_file())
            .args(["--timeout", "300", "--"])
            .args(argv);
        cmd
    }

    /// `safe-exec --profile P --timeout 300 -c script` (see [`World::supervised`]).
    pub fn supervised_c(&self, script: &str) -> Command {
        let mut cmd = self.safe_exec();
        cmd.arg("--profile")
            .arg(self.profile_file())
            .args(["--timeout", "300", "-c"])
            .arg(script);
        cmd
    }

    /// Runs `safe-exec --profile P -- argv...` and returns its output.
    pub fn run<S: AsRef<OsStr>>(&self, argv: &[S]) -> Output {
        self.command(argv).output().expect("run safe-exec")
    }

    /// Runs the probe with `args` under safe-exec; returns its exit code.
    /// Arguments containing `/` are handed over hex-encoded (`hex:...`), so
    /// the policy layer cannot see the paths and the kernel must answer.
    pub fn probe(&self, args: &[&str]) -> i32 {
        probe_ran(&self.run(&probe_argv(probe(), args)), args)
    }

    /// Runs `safe-exec --profile P -c script` (bash inside the sandbox).
    pub fn sh(&self, script: &str) -> Output {
        self.command_c(script).output().expect("run safe-exec -c")
    }

    /// Writes an executable bash script `name` into work and returns
    /// `./name`: a program whose contents the policy layer cannot see.
    pub fn script(&self, name: &str, body: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = self.work.join(name);
        std::fs::write(&path, format!("#!/bin/bash\n{body}\n")).expect("write script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        format!("./{name}")
    }

    /// Runs `script` as a bash script file (`safe-exec -- ./script-N.sh`):
    /// for scripts whose expansions (`"$T"`, `$!`, `trap`) the policy would
    /// rightly refuse to judge. The kernel confinement is the same.
    pub fn bash(&self, script: &str) -> Output {
        let s = self.script(&format!("script-{}.sh", rand_suffix()), script);
        self.run(&[&s])
    }

    /// [`World::bash`], supervised (see [`World::supervised`]), not started.
    pub fn supervised_bash(&self, script: &str) -> Command {
        let s = self.script(&format!("script-{}.sh", rand_suffix()), script);
        self.supervised(&[&s])
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

/// The `sandbox_exec` driver's spec of the world's default confinement
/// (read `/`, write the work dir and TMPDIR, deny `~/.ssh` and `~/.aws`)
/// with `network`.
pub fn driver_spec(w: &World, network: &str) -> Value {
    json!({
        "sandbox": {
            "read": ["/"],
            "write": [w.work, w.tmp],
            "deny_read": [w.home.join(".ssh"), w.home.join(".aws")],
            "network": network,
            "unix_sockets": false,
            "limits": {},
            "enforcement": "required",
            "timeout": null
        },
        "env": {"mode": "inherit", "allow": [], "remove": [], "set": {}}
    })
}

/// Runs the probe through the `sandbox_exec` example with the world's
/// default confinement but `network` set to a mode only the library can
/// select (`http`, `ping`). Returns the probe's exit code.
pub fn spec_probe(w: &World, network: &str, args: &[&str]) -> i32 {
    let spec = driver_spec(w, network);
    let spec_path = w.base.join(format!("spec-{}.json", rand_suffix()));
    std::fs::write(&spec_path, spec.to_string()).expect("write spec");
    let out = hermetic(spec_driver(), &w.dirs)
        .arg("--spec")
        .arg(&spec_path)
        .arg("--supervise")
        .arg("--cwd")
        .arg(&w.work)
        .arg("--")
        .arg(probe())
        .args(args)
        .output()
        .expect("run sandbox_exec");
    code(&out)
}

/// `hex:...` form of a probe argument (see tests/probe/probe.rs).
pub fn hidden(arg: &str) -> String {
    let hex: String = arg.bytes().map(|b| format!("{b:02x}")).collect();
    format!("hex:{hex}")
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

/// Asserts a policy refusal: exit 126 and one `safe-exec: denied:` line.
pub fn assert_denied(out: &Output) {
    assert_eq!(
        code(out),
        126,
        "stdout: {} stderr: {}",
        stdout(out),
        stderr(out)
    );
    assert!(
        stderr(out).starts_with("safe-exec: denied:"),
        "{}",
        stderr(out)
    );
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

// ------------------------------------------------ the unprivileged user

/// The unprivileged test user (nobody).
pub const TEST_USER: u32 = 65534;

/// Whether the tests run as root (the unprivileged cases need it, to
/// switch to [`TEST_USER`]).
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// `setpriv` that runs what follows as [`TEST_USER`], without groups.
pub fn setpriv_test_user() -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args([
        &format!("--reuid={TEST_USER}"),
        &format!("--regid={TEST_USER}"),
        "--clear-groups",
    ]);
    cmd
}

/// A command run as [`TEST_USER`] in `w`: cwd work, a clean environment
/// with the world's HOME, TMPDIR and state dir, no system configuration,
/// no system git configuration, stdin from /dev/null.
pub fn test_user_command(w: &World) -> Command {
    let mut cmd = setpriv_test_user();
    cmd.current_dir(&w.work)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &w.home)
        .env("TMPDIR", &w.tmp)
        .env("SAFE_EXEC_STATE_DIR", &w.state)
        .env("SAFE_EXEC_SYSTEM_CONFIG", w.base.join("none.toml"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null());
    cmd
}

/// The probe's argv: `probe` and `args`, those containing `/` handed over
/// hex-encoded (see [`hidden`]).
pub fn probe_argv(probe: &Path, args: &[&str]) -> Vec<String> {
    let mut v = vec![probe.display().to_string()];
    v.extend(args.iter().map(|a| {
        if a.contains('/') {
            hidden(a)
        } else {
            a.to_string()
        }
    }));
    v
}

/// The probe's exit code, after checking that it ran (not refused by
/// safe-exec, not found, not a probe usage error).
pub fn probe_ran(out: &Output, args: &[&str]) -> i32 {
    let rc = code(out);
    assert!(
        !(125..=127).contains(&rc) && rc != 200,
        "probe {args:?} did not run: exit {rc}: {}",
        stderr(out)
    );
    rc
}

/// The probe under safe-exec, supervised (`--timeout` keeps safe-exec as
/// the parent), as the caller.
pub fn supervised_probe(w: &World, args: &[&str]) -> i32 {
    let out = w
        .supervised(&probe_argv(probe(), args))
        .output()
        .expect("run safe-exec");
    probe_ran(&out, args)
}

/// safe-exec and the probe as the unprivileged [`TEST_USER`] (`setpriv`):
/// both copied where the user can reach them, the world's directories
/// opened to the user.
pub struct AsUser {
    /// safe-exec, copied into the world's base directory.
    pub bin: PathBuf,
    /// The probe, copied likewise.
    pub probe: PathBuf,
    /// The world's profile file, readable by the user.
    pub profile: PathBuf,
}

impl AsUser {
    /// Prepares `w` for the user: its directories opened (mode 777) and
    /// [`AsUser::copies`].
    pub fn new(w: &World) -> AsUser {
        use std::os::unix::fs::PermissionsExt;
        for d in [&w.base, &w.work, &w.tmp, &w.home, &w.state, &w.outside] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        }
        AsUser::copies(w)
    }

    /// Only copies safe-exec and the probe into `w`'s base directory and
    /// makes the profile file readable (for worlds whose directories the
    /// test sets up itself).
    pub fn copies(w: &World) -> AsUser {
        use std::os::unix::fs::PermissionsExt;
        assert!(
            have("setpriv"),
            "setpriv is needed to run the unprivileged cases"
        );
        let bin_copy = w.base.join("safe-exec");
        let probe_copy = w.base.join("probe");
        copy_executable(bin(), &bin_copy);
        copy_executable(probe(), &probe_copy);
        let profile = w.profile_file();
        std::fs::set_permissions(&profile, std::fs::Permissions::from_mode(0o644))
            .expect("chmod profile");
        AsUser {
            bin: bin_copy,
            probe: probe_copy,
            profile,
        }
    }

    /// A command run as the user in `w` ([`test_user_command`]).
    pub fn base(&self, w: &World) -> Command {
        test_user_command(w)
    }

    /// `safe-exec --profile P [--timeout 60] -- argv` as the user.
    fn run(&self, w: &World, argv: &[String], supervised: bool) -> Output {
        self.run_in(self.base(w), argv, supervised)
    }

    /// `safe-exec --profile P [--timeout 60] -- argv` through `cmd` (a
    /// [`test_user_command`], perhaps with another HOME).
    pub fn run_in(&self, mut cmd: Command, argv: &[String], supervised: bool) -> Output {
        cmd.arg(&self.bin).arg("--profile").arg(&self.profile);
        if supervised {
            cmd.args(["--timeout", "60"]);
        }
        cmd.arg("--").args(argv);
        cmd.output().expect("run safe-exec as the user")
    }

    /// `safe-exec --profile P -- argv` as the user.
    pub fn safe_exec(&self, w: &World, argv: &[String]) -> Output {
        self.run(w, argv, false)
    }

    /// The probe under safe-exec as the user.
    pub fn sandboxed(&self, w: &World, args: &[&str]) -> i32 {
        probe_ran(&self.run(w, &probe_argv(&self.probe, args), false), args)
    }

    /// The probe under safe-exec, supervised (a time limit keeps safe-exec
    /// as the parent), as the user.
    pub fn sandboxed_supervised(&self, w: &World, args: &[&str]) -> i32 {
        probe_ran(&self.run(w, &probe_argv(&self.probe, args), true), args)
    }

    /// The probe without safe-exec, as the user (positive control).
    pub fn unsandboxed(&self, w: &World, args: &[&str]) -> i32 {
        code(
            &self
                .base(w)
                .arg(&self.probe)
                .args(args)
                .output()
                .expect("run the probe as the user"),
        )
    }

    /// The probe as the child of a shell of the user (its parent is then
    /// the user's own process), without safe-exec.
    pub fn under_user_shell(&self, w: &World, args: &[&str]) -> i32 {
        let script = format!("{} {}; exit $?", self.probe.display(), args.join(" "));
        code(
            &self
                .base(w)
                .args(["sh", "-c", &script])
                .output()
                .expect("run sh as the user"),
        )
    }
}

/// A pty the test opened ("another terminal"): (master, slave,
/// /dev/pts/N), owned by `owner` (root: left as opened; mode 0620, as
/// grantpt leaves it).
pub fn other_terminal(owner: u32) -> (std::os::fd::OwnedFd, std::fs::File, PathBuf) {
    use nix::fcntl::OFlag;
    use std::os::unix::fs::OpenOptionsExt;
    let master = nix::pty::posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY).expect("posix_openpt");
    nix::pty::grantpt(&master).expect("grantpt");
    nix::pty::unlockpt(&master).expect("unlockpt");
    let path = PathBuf::from(nix::pty::ptsname_r(&master).expect("ptsname_r"));
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&path)
        .expect("open slave");
    if owner != 0 {
        std::os::unix::fs::chown(&path, Some(owner), None).expect("chown pty");
    }
    (master.into(), slave, path)
}

/// Copies an executable to `to` in a child process (`cp`), never through a
/// write descriptor of this process: the tests run in threads, and a
/// descriptor open for writing here is inherited by a child another
/// thread is forking until that child execs, so executing the copy fails
/// now and then with `ETXTBSY` ("Text file busy"). A `cp` child's
/// descriptor dies with it.
pub fn copy_executable(from: &Path, to: &Path) {
    let out = Command::new("cp")
        .arg("--")
        .arg(from)
        .arg(to)
        .output()
        .expect("run cp");
    assert!(
        out.status.success(),
        "cp {} {}: {}",
        from.display(),
        to.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
