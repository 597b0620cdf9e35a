//! The supervisor (issue 11 item 4): rows M (metadata), L (lifetime), X1-X3
//! (protected files), loopback-only network and exec-time checks. Every
//! escape runs for real with a harmless payload (a canary file the test
//! made, a `sleep` the test can find), next to a positive control, as root
//! and as an unprivileged user (uid 65534 through `setpriv`).
use crate::common::sandbox as common;
use common::*;
use serde_json::json;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

pub(super) const NOBODY: u32 = TEST_USER;

/// Who runs safe-exec.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Who {
    Caller,
    Nobody,
}

/// The identities to test: the caller, and as root also uid 65534.
pub(super) fn who() -> Vec<Who> {
    if is_root() {
        assert!(
            have("setpriv") || std::env::var("CI").as_deref() != Ok("true"),
            "setpriv is needed to test as an unprivileged user"
        );
        if have("setpriv") {
            return vec![Who::Caller, Who::Nobody];
        }
        skip("setpriv missing: unprivileged half not run");
    }
    vec![Who::Caller]
}

/// Makes the world usable by uid 65534: every directory of it writable,
/// the binary copied inside it.
pub(super) fn open_world(w: &World) -> PathBuf {
    fn chmod_r(p: &Path) {
        if let Ok(m) = std::fs::symlink_metadata(p) {
            if m.file_type().is_symlink() {
                return;
            }
            let _ = std::os::unix::fs::lchown(p, Some(NOBODY), Some(NOBODY));
            if m.is_dir() {
                let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777));
                if let Ok(rd) = std::fs::read_dir(p) {
                    for e in rd.flatten() {
                        chmod_r(&e.path());
                    }
                }
            }
        }
    }
    let copy = w.base.join("safe-exec-bin");
    if !copy.exists() {
        copy_executable(bin(), &copy);
    }
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    for d in [&w.work, &w.tmp, &w.home, &w.state, &w.outside] {
        chmod_r(d);
    }
    std::fs::set_permissions(&w.base, std::fs::Permissions::from_mode(0o755)).unwrap();
    copy
}

/// Prepares the world for `who` (opens it up for uid 65534).
pub(super) fn prep(w: &World, who: Who) {
    if who == Who::Nobody {
        open_world(w);
    }
}

/// `safe-exec --profile P ARGS...` as `who`, in the world.
pub(super) fn run_as(w: &World, who: Who, args: &[&str]) -> Output {
    let profile = w.profile_file();
    std::fs::set_permissions(&profile, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut cmd = match who {
        Who::Caller => {
            let mut c = w.safe_exec();
            c.arg("--profile").arg(&profile).args(args);
            c
        }
        Who::Nobody => {
            let b = open_world(w);
            let mut c = test_user_command(w);
            c.arg(&b).arg("--profile").arg(&profile).args(args);
            c
        }
    };
    cmd.output().expect("run safe-exec")
}

/// [`run_as`] after [`prep`], asserting that the command succeeded.
fn run_ok(w: &World, who: Who, args: &[&str]) -> Output {
    prep(w, who);
    let out = run_as(w, who, args);
    assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
    out
}

/// Runs `body` as a bash script file under safe-exec: the policy layer
/// cannot see inside, so what a test observes is the kernel layer's answer.
fn run_script(w: &World, who: Who, body: &str) -> Output {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let s = w.script(
        &format!("escape-{}.sh", N.fetch_add(1, Ordering::Relaxed)),
        body,
    );
    prep(w, who);
    let out = run_as(w, who, &["--", &s]);
    let _ = std::fs::remove_file(w.work.join(s.trim_start_matches("./")));
    out
}

/// The same program WITHOUT safe-exec, as `who` (positive controls).
fn plain_as(w: &World, who: Who, argv: &[&str]) -> Output {
    let mut c = match who {
        Who::Caller => {
            let mut c = Command::new(argv[0]);
            c.args(&argv[1..]);
            c
        }
        Who::Nobody => {
            open_world(w);
            let mut c = setpriv_test_user();
            c.args(argv).env("PATH", "/usr/local/bin:/usr/bin:/bin");
            c
        }
    };
    c.current_dir(&w.work)
        .env("HOME", &w.home)
        .stdin(Stdio::null())
        .output()
        .expect("run control")
}

/// A python script that tries every metadata call on its argument and
/// prints one `name=errno` line each (0 = it worked).
const META_PY: &str = r#"
import os, sys, errno
t = sys.argv[1]
def tryit(name, f):
    try:
        f(); print(f"{name}=0")
    except OSError as e:
        print(f"{name}={e.errno}")
uid, gid = os.geteuid(), os.getegid()
tryit("chmod", lambda: os.chmod(t, 0o600))
tryit("chmod-nofollow", lambda: os.chmod(t, 0o600, follow_symlinks=False))
tryit("chmod-nofollow-at", lambda: os.chmod(os.path.basename(t), 0o640, dir_fd=os.open(os.path.dirname(t), os.O_RDONLY)))
tryit("chown", lambda: os.chown(t, uid, gid))
tryit("lchown", lambda: os.lchown(t, uid, gid))
tryit("utime", lambda: os.utime(t, (1000000000, 1000000000)))
tryit("utime-now", lambda: os.utime(t))
tryit("setxattr", lambda: os.setxattr(t, "user.safeexec", b"x"))
tryit("removexattr", lambda: os.removexattr(t, "user.safeexec"))
def fd_ops():
    fd = os.open(t, os.O_RDONLY)
    try:
        os.fchmod(fd, 0o604)
    finally:
        os.close(fd)
tryit("fchmod-readonly-fd", fd_ops)
def fd_chown():
    fd = os.open(t, os.O_RDONLY)
    try:
        os.fchown(fd, uid, gid)
    finally:
        os.close(fd)
tryit("fchown-readonly-fd", fd_chown)
def opath():
    fd = os.open(t, os.O_PATH)
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        r = libc.syscall(452, fd, b"", 0o606, 0x1000)  # fchmodat2(fd, "", AT_EMPTY_PATH)
        if r != 0:
            raise OSError(ctypes.get_errno(), "fchmodat2")
    finally:
        os.close(fd)
tryit("fchmodat2-opath", opath)
"#;

fn meta_results(out: &Output) -> Vec<(String, i32)> {
    stdout(out)
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once('=')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

/// Asserts that every call of [`META_PY`] worked (user.* xattrs may be
/// unsupported by the filesystem).
fn all_metadata_calls_worked(out: &Output, what: &str) {
    let res = meta_results(out);
    assert_eq!(res.len(), 12, "{what}: {} {}", stdout(out), stderr(out));
    for (name, errno) in &res {
        if name.contains("xattr") && *errno == libc::EOPNOTSUPP {
            continue;
        }
        assert_eq!(*errno, 0, "{what}: {name}: {res:?}");
    }
}

fn reset_canary(p: &Path, who: Who) {
    std::fs::write(p, "canary\n").unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
    if who == Who::Nobody {
        std::os::unix::fs::lchown(p, Some(NOBODY), Some(NOBODY)).unwrap();
    }
}

fn snapshot(p: &Path) -> (u32, u32, i64) {
    let m = std::fs::metadata(p).unwrap();
    (m.mode(), m.uid(), m.mtime())
}

/// Row M: chmod/chown/utime/xattr on a file outside the writable roots are
/// refused (EPERM), on every path; the same calls inside the root, and
/// outside safe-exec, work.
#[test]
fn metadata_outside_the_roots_is_refused() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        let py = w.base.join("meta.py");
        std::fs::write(&py, META_PY).unwrap();
        std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o644)).unwrap();
        let canary = w.outside.join("canary");
        let inside = w.work.join("inside");
        reset_canary(&canary, who);
        reset_canary(&inside, who);
        let before = snapshot(&canary);

        let out = run_as(
            &w,
            who,
            &[
                "--",
                "python3",
                py.to_str().unwrap(),
                canary.to_str().unwrap(),
            ],
        );
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        let res = meta_results(&out);
        assert_eq!(res.len(), 12, "{who:?}: {}", stdout(&out));
        for (name, errno) in &res {
            assert_eq!(*errno, EPERM, "{who:?}: {name} outside the roots: {res:?}");
        }
        assert_eq!(snapshot(&canary), before, "{who:?}: canary untouched");
        assert!(
            stderr(&out).contains("safe-exec: denied: chmod")
                && stderr(&out).contains("outside the writable roots"),
            "{}",
            stderr(&out)
        );

        // Positive control 1: the same calls on a file inside the root.
        let out = run_as(
            &w,
            who,
            &[
                "--",
                "python3",
                py.to_str().unwrap(),
                inside.to_str().unwrap(),
            ],
        );
        all_metadata_calls_worked(&out, &format!("{who:?}: inside the root"));
        assert_eq!(
            snapshot(&inside).0 & 0o777,
            0o606,
            "{who:?}: last chmod applied"
        );

        // Positive control 2: the same calls on the canary without safe-exec.
        reset_canary(&canary, who);
        let out = plain_as(
            &w,
            who,
            &["python3", py.to_str().unwrap(), canary.to_str().unwrap()],
        );
        all_metadata_calls_worked(&out, &format!("{who:?}: control"));
        assert_ne!(
            snapshot(&canary),
            before,
            "{who:?}: control changed the canary"
        );
    }
}

/// Row M, other spellings: coreutils chmod/touch/chown and a symlink inside
/// the root that points outside.
#[test]
fn metadata_through_tools_and_symlinks_is_refused() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        let canary = w.outside.join("canary");
        reset_canary(&canary, who);
        std::os::unix::fs::symlink(&canary, w.work.join("link")).unwrap();
        let before = snapshot(&canary);
        for script in [
            format!("chmod 600 {}", canary.display()),
            "chmod 600 link".to_string(),
            format!("touch -d 2001-01-01 {}", canary.display()),
            "touch -d 2001-01-01 link".to_string(),
            format!("chown --reference={0} {0}", canary.display()),
        ] {
            // A script file: the policy cannot see the path, the kernel
            // layer must answer.
            let s = w.script("meta.sh", &script);
            prep(&w, who);
            let out = run_as(&w, who, &["--", &s]);
            assert_ne!(code(&out), 0, "{who:?}: {script}: {}", stderr(&out));
            // EPERM from the supervisor, or EACCES from Landlock when the
            // tool opens the file for writing first (touch).
            assert!(
                stderr(&out).contains("Operation not permitted")
                    || stderr(&out).contains("Permission denied"),
                "{who:?}: {script}: {}",
                stderr(&out)
            );
            assert_eq!(snapshot(&canary), before, "{who:?}: {script}");
        }
        // Positive controls: chmod +x and touch -d on project files.
        std::fs::write(w.work.join("script.sh"), "echo hi\n").unwrap();
        let out = run_ok(
            &w,
            who,
            &[
                "-c",
                "chmod +x script.sh && touch -d 2001-01-01 script.sh && ./script.sh",
            ],
        );
        assert_eq!(stdout(&out), "hi\n");
        let m = std::fs::metadata(w.work.join("script.sh")).unwrap();
        assert!(m.mode() & 0o111 != 0);
        assert_eq!(m.mtime(), 978307200);
    }
}

fn find_marker(marker: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Ok(c) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            if c.contains(marker) && alive(pid) {
                out.push(pid);
            }
        }
    }
    out
}

fn kill_all(pids: &[i32]) {
    for p in pids {
        // SAFETY: killing processes this test started.
        unsafe { libc::kill(*p, libc::SIGKILL) };
    }
}

/// Row L: daemons (`setsid -f`, double fork, nohup in the background) do
/// not outlive safe-exec, nor its time limit.
#[test]
fn no_process_of_the_tree_outlives_safe_exec() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let mut w = World::new();
        let marker = format!("{}.{}", 900 + std::process::id() % 97, who as u32 + 1);
        let script = w.script(
            "daemons.sh",
            &format!(
                "setsid -f sleep {m}1\n( ( sleep {m}2 & ) & )\nnohup sleep {m}3 >/dev/null 2>&1 &\nsetsid sh -c 'sleep {m}4' &\necho started",
                m = marker
            ),
        );
        let out = run_ok(&w, who, &["--", &script]);
        assert_eq!(stdout(&out), "started\n");
        std::thread::sleep(Duration::from_millis(200));
        let left = find_marker(&marker);
        kill_all(&left);
        assert!(left.is_empty(), "{who:?}: survivors {left:?}");

        // Time limit: the command itself hangs; everything goes, exit 124.
        w.timeout(2);
        let script = w.script(
            "hang.sh",
            &format!("setsid -f sleep {marker}5\nsleep {marker}6"),
        );
        prep(&w, who);
        let out = run_as(&w, who, &["--", &script]);
        assert_eq!(code(&out), 124, "{who:?}: {}", stderr(&out));
        std::thread::sleep(Duration::from_millis(200));
        let left = find_marker(&marker);
        kill_all(&left);
        assert!(left.is_empty(), "{who:?}: survivors after timeout {left:?}");

        // Positive control: the same daemon started without safe-exec lives on.
        let mut ctl = match who {
            Who::Caller => Command::new("setsid"),
            Who::Nobody => {
                let mut c = Command::new("setpriv");
                c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "setsid"]);
                c
            }
        };
        let st = ctl
            .args(["-f", "sleep", &format!("{marker}7")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        std::thread::sleep(Duration::from_millis(200));
        let left = find_marker(&format!("{marker}7"));
        kill_all(&left);
        assert_eq!(left.len(), 1, "{who:?}: control daemon survived its parent");
    }
}

/// The real git in `dir` (HOME `dir`, no system config); a failure fails
/// the test.
pub(super) fn git(dir: &Path, args: &[&str]) {
    git_out(dir, dir, args);
}

pub(super) fn repo(w: &World) {
    git(&w.work, &["init", "-q", "-b", "main"]);
    git(&w.work, &["config", "user.email", "t@example.org"]);
    git(&w.work, &["config", "user.name", "t"]);
    std::fs::write(w.work.join("a.txt"), "a\n").unwrap();
    git(&w.work, &["add", "a.txt"]);
    git(&w.work, &["commit", "-qm", "init"]);
}

fn assert_restored(out: &Output, who: Who, what: &str) {
    assert_eq!(code(out), 126, "{who:?}: {what}: {}", stderr(out));
    assert!(
        stderr(out).contains("safe-exec: denied: the command changed protected files"),
        "{who:?}: {what}: {}",
        stderr(out)
    );
}

/// Row X1: `.git/config` and `.git/hooks/` changes are undone (exit 126)
/// while ordinary git work (commit, checkout -b) goes through.
#[test]
fn git_config_and_hooks_changes_do_not_survive() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        prep(&w, who);
        let config = std::fs::read(w.work.join(".git/config")).unwrap();
        let payload = format!("touch {}", w.base.join("pwned").display());
        for (what, script) in [
            (
                "append fsmonitor",
                format!("printf '[core]\\n\\tfsmonitor = {payload}\\n' >> .git/config"),
            ),
            (
                "git config core.pager",
                format!("git config core.pager '{payload}'"),
            ),
            (
                "replace by rename",
                "cp .git/config x && echo '[core]\n\thooksPath = /tmp' >> x && mv x .git/config"
                    .to_string(),
            ),
            (
                "hook",
                format!(
                    "printf '#!/bin/sh\\n{payload}\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit || true; printf '#!/bin/sh\\n{payload}\\n' > .git/hooks/post-checkout"
                ),
            ),
            (
                "symlinked .git/hooks dir",
                format!(
                    "mkdir -p evil && printf '#!/bin/sh\\n{payload}\\n' > evil/pre-commit && rm -rf .git/hooks && ln -s ../evil .git/hooks"
                ),
            ),
        ] {
            let out = run_script(&w, who, &script);
            assert_restored(&out, who, what);
            assert_eq!(
                std::fs::read(w.work.join(".git/config")).unwrap(),
                config,
                "{who:?}: {what}"
            );
            assert!(
                !w.work.join(".git/hooks/pre-commit").exists(),
                "{who:?}: {what}"
            );
            assert!(
                !w.work.join(".git/hooks/post-checkout").exists(),
                "{who:?}: {what}"
            );
            assert!(
                std::fs::symlink_metadata(w.work.join(".git/hooks")).map_or(true, |m| m.is_dir()),
                "{who:?}: {what}"
            );
        }
        // The user's next plain git commands do not run the payload.
        git(&w.work, &["status", "--short"]);
        let out = run_ok(
            &w,
            who,
            &[
                "-c",
                "git checkout -q -b feature && echo b >> a.txt && git commit -qam two && git log --oneline",
            ],
        );
        assert!(stdout(&out).contains("two"), "{}", stdout(&out));
        assert!(!w.base.join("pwned").exists(), "{who:?}: payload ran");
    }
}

/// A protected file given a second name by a hard link (to it, or a
/// linked copy renamed over it) would change whenever that name is written,
/// after the run and outside any sandbox: it is put back as a file of its
/// own, and the run reports it (exit 126).
#[test]
fn hard_links_to_protected_files_do_not_survive() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        std::fs::write(w.work.join(".git/hooks/pre-push"), "#!/bin/sh\n").unwrap();
        std::fs::write(w.work.join(".envrc"), "export A=1\n").unwrap();
        let config = std::fs::read_to_string(w.work.join(".git/config")).unwrap();
        let payload = format!("touch {}", w.base.join("pwned").display());
        let out = run_script(
            &w,
            who,
            "ln .git/config cfg && ln .git/hooks/pre-push pp && cp .envrc e && ln e e2 && mv e .envrc",
        );
        assert_restored(&out, who, "hard links");
        assert!(
            stderr(&out).contains("hard link"),
            "{who:?}: {}",
            stderr(&out)
        );
        for (p, other) in [
            (".git/config", "cfg"),
            (".git/hooks/pre-push", "pp"),
            (".envrc", "e2"),
        ] {
            // The links were made (the attack ran); the protected names are
            // files of their own again.
            let (m, o) = (
                std::fs::metadata(w.work.join(p)).unwrap(),
                std::fs::metadata(w.work.join(other)).unwrap(),
            );
            assert_eq!(m.nlink(), 1, "{who:?}: {p}");
            assert_ne!(m.ino(), o.ino(), "{who:?}: {p}");
        }
        std::fs::write(
            w.work.join("cfg"),
            format!("[core]\n\tfsmonitor = {payload}\n"),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(w.work.join(".git/config")).unwrap(),
            config,
            "{who:?}: written through the link"
        );
        git(&w.work, &["status", "--short"]);
        assert!(!w.base.join("pwned").exists(), "{who:?}: payload ran");
        // Control: a link the user made before the run is left alone, and
        // a run that touches nothing protected goes through.
        std::fs::remove_file(w.work.join("pp")).unwrap();
        std::fs::hard_link(w.work.join(".git/hooks/pre-push"), w.work.join("pp")).unwrap();
        run_ok(&w, who, &["--", "true"]);
        assert_eq!(
            std::fs::metadata(w.work.join(".git/hooks/pre-push"))
                .unwrap()
                .nlink(),
            2,
            "{who:?}"
        );
    }
}

/// Rows X2 and X3: agent and tool configuration inside the project.
#[test]
fn agent_and_tool_configs_do_not_survive() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        std::fs::create_dir_all(w.work.join(".claude")).unwrap();
        std::fs::write(w.work.join(".claude/settings.json"), "{\"hooks\":{}}\n").unwrap();
        std::fs::write(w.work.join(".npmrc"), "fund=false\n").unwrap();
        // A venv that existed before the run.
        let sp = w.work.join(".venv/lib/python3.11/site-packages");
        std::fs::create_dir_all(&sp).unwrap();
        std::fs::write(w.work.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        std::fs::write(sp.join("keep.pth"), "/opt/x\n").unwrap();
        prep(&w, who);
        let files = [
            ".claude/settings.local.json",
            ".claude/settings.json",
            ".codex/hooks.json",
            ".mcp.json",
            ".cursor/mcp.json",
            ".vscode/tasks.json",
            ".cargo/config.toml",
            ".cargo/config",
            ".npmrc",
            ".envrc",
            ".mise.toml",
            ".venv/lib/python3.11/site-packages/keep.pth",
            ".venv/lib/python3.11/site-packages/evil.pth",
        ];
        let mut script = String::new();
        for f in files {
            script.push_str(&format!(
                "mkdir -p \"$(dirname {f})\" && echo 'import os; os.system(\"touch pwned\")' >> {f}\n"
            ));
        }
        script.push_str("echo ordinary > notes.txt\n");
        let out = run_script(&w, who, &script);
        assert_restored(&out, who, "configs");
        assert_eq!(
            std::fs::read_to_string(w.work.join(".claude/settings.json")).unwrap(),
            "{\"hooks\":{}}\n"
        );
        assert_eq!(
            std::fs::read_to_string(w.work.join(".npmrc")).unwrap(),
            "fund=false\n"
        );
        assert_eq!(
            std::fs::read_to_string(sp.join("keep.pth")).unwrap(),
            "/opt/x\n"
        );
        for f in files {
            let p = w.work.join(f);
            if !["settings.json", ".npmrc", "keep.pth"]
                .iter()
                .any(|k| f.ends_with(k))
            {
                assert!(!p.exists(), "{who:?}: {f} survived");
            }
        }
        // Directory trees are protected as a whole; `.cargo/` itself is not
        // (only its config files), so an empty `.cargo` may stay.
        for d in [".codex", ".cursor", ".vscode"] {
            assert!(!w.work.join(d).exists(), "{who:?}: {d} survived");
        }
        // Positive control: the ordinary file the same command wrote stays.
        assert_eq!(
            std::fs::read_to_string(w.work.join("notes.txt")).unwrap(),
            "ordinary\n"
        );
        // Positive control: a venv the command creates itself keeps its .pth.
        run_ok(
            &w,
            who,
            &[
                "-c",
                "mkdir -p new/lib/python3.11/site-packages && touch new/pyvenv.cfg && echo x > new/lib/python3.11/site-packages/own.pth",
            ],
        );
        assert!(
            w.work
                .join("new/lib/python3.11/site-packages/own.pth")
                .exists()
        );
    }
}

/// Rows X1-X3 in a big directory: the protected-file snapshot does not list
/// a root of 2,000 files that has no subdirectory (its link count says so),
/// and lists it when it has one (a venv); either way nothing is missed.
#[test]
fn protected_files_in_a_big_directory_are_still_restored() {
    use std::os::unix::fs::MetadataExt;
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        for i in 0..2000 {
            std::fs::write(w.work.join(format!("f{i}")), "").unwrap();
        }
        std::fs::write(w.work.join(".npmrc"), "fund=false\n").unwrap();
        // Control: the fast case is set up (no subdirectory, link count 2).
        assert_eq!(std::fs::metadata(&w.work).unwrap().nlink(), 2);
        let out = run_script(
            &w,
            who,
            "echo evil > .envrc\nmkdir -p .git/hooks && echo evil > .git/hooks/pre-commit\n\
             echo evil > .git/config\necho registry=evil >> .npmrc\necho ordinary > notes.txt\n",
        );
        assert_restored(&out, who, "big root, no subdirectory");
        for f in [".envrc", ".git/config", ".git/hooks/pre-commit"] {
            assert!(!w.work.join(f).exists(), "{who:?}: {f} survived");
        }
        assert_eq!(
            std::fs::read_to_string(w.work.join(".npmrc")).unwrap(),
            "fund=false\n"
        );
        // Positive control: the ordinary file the same command wrote stays.
        assert_eq!(
            std::fs::read_to_string(w.work.join("notes.txt")).unwrap(),
            "ordinary\n"
        );
        let _ = std::fs::remove_dir_all(w.work.join(".git"));
        // Now with a venv among the 2,000 files: the root is listed.
        let sp = w.work.join("env/lib/python3.12/site-packages");
        std::fs::create_dir_all(&sp).unwrap();
        std::fs::write(w.work.join("env/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        std::fs::write(sp.join("keep.pth"), "/opt/x\n").unwrap();
        assert!(std::fs::metadata(&w.work).unwrap().nlink() > 2, "control");
        let out = run_script(
            &w,
            who,
            "d=env/lib/python3.12/site-packages\necho 'import os' > $d/evil.pth\n\
             echo 'import os' >> $d/keep.pth\n",
        );
        assert_restored(&out, who, "big root with a venv");
        assert!(!sp.join("evil.pth").exists(), "{who:?}: evil.pth survived");
        assert_eq!(
            std::fs::read_to_string(sp.join("keep.pth")).unwrap(),
            "/opt/x\n"
        );
    }
}

/// Row X1-X3, the order of events: the protected-file snapshot is taken by
/// the supervisor thread while the child sets up its sandbox, and it is
/// complete before the command's first instruction. A command whose very
/// first act changes protected files (a protected tree of 1,500 files to
/// snapshot, so that a snapshot still running when the command starts
/// would see the change) has every change undone, ten runs in a row; the
/// same command that changes nothing protected exits 0 (control).
#[test]
fn the_snapshot_is_complete_before_the_command_starts() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        let tree = w.work.join(".vscode");
        std::fs::create_dir_all(&tree).unwrap();
        for i in 0..1500 {
            std::fs::write(tree.join(format!("f{i}.json")), format!("{i}\n")).unwrap();
        }
        std::fs::write(w.work.join(".npmrc"), "fund=false\n").unwrap();
        // Control: nothing protected changed, nothing reported, exit 0.
        let out = run_script(&w, who, "echo ordinary > notes.txt\n");
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("protected"), "{}", stderr(&out));
        for round in 0..10 {
            let out = run_script(
                &w,
                who,
                "echo evil > .vscode/f1499.json\necho evil >> .npmrc\necho evil > .envrc\n",
            );
            assert_restored(&out, who, &format!("first act, round {round}"));
            assert_eq!(
                std::fs::read_to_string(tree.join("f1499.json")).unwrap(),
                "1499\n",
                "{who:?}: round {round}"
            );
            assert_eq!(
                std::fs::read_to_string(w.work.join(".npmrc")).unwrap(),
                "fund=false\n",
                "{who:?}: round {round}"
            );
            assert!(!w.work.join(".envrc").exists(), "{who:?}: round {round}");
        }
    }
}

/// A loopback HTTP server the test runs (one canned response per request).
fn http_server() -> (u16, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        use std::io::{Read, Write};
        l.set_nonblocking(false).unwrap();
        for s in l.incoming().take(4) {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nhello\n");
        }
    });
    (port, h)
}

const NET_PY: &str = r#"
import socket, sys, urllib.request
port = int(sys.argv[1])
def tryit(name, f):
    try:
        r = f(); print(f"{name}=0 {r!r}")
    except OSError as e:
        print(f"{name}={e.errno}")
tryit("http-127", lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode().strip())
tryit("http-localhost", lambda: urllib.request.urlopen(f"http://localhost:{port}/", timeout=5).read().decode().strip())
tryit("tcp-external", lambda: socket.create_connection(("192.0.2.1", 80), timeout=3) and "connected")
tryit("tcp6-external", lambda: socket.create_connection(("2001:db8::1", 80), timeout=3) and "connected")
tryit("tcp-mapped-external", lambda: socket.socket(socket.AF_INET6).connect(("::ffff:192.0.2.1", 80)))
def udp(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    return s.sendto(b"exfil", addr)
tryit("udp-external", lambda: udp(("192.0.2.1", 9)))
def udpmsg(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    return s.sendmsg([b"exfil"], [], 0, addr)
tryit("udp-sendmsg-external", lambda: udpmsg(("192.0.2.1", 9)))
tryit("udp-dns-stub", lambda: udp(("127.0.0.53", 53)))
tryit("udp-loopback", lambda: udp(("127.0.0.1", int(sys.argv[2]))))
"#;

/// Loopback-only network (default profile): a server the test started is
/// reachable; external addresses (v4, v6, v4-mapped, UDP, sendmsg) and a
/// local DNS stub are refused with EACCES.
#[test]
fn loopback_reaches_the_test_server_and_nothing_else() {
    if !require_landlock() {
        return;
    }
    assert!(
        safe_exec::supervisor::loopback_enforced(),
        "the supervisor must enforce loopback on this kernel"
    );
    for who in who() {
        let mut w = World::new();
        w.set("network", json!("loopback"));
        let (port, server) = http_server();
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let uport = rx.local_addr().unwrap().port();
        let py = w.base.join("net.py");
        std::fs::write(&py, NET_PY).unwrap();
        std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o644)).unwrap();
        let out = run_as(
            &w,
            who,
            &[
                "--",
                "python3",
                py.to_str().unwrap(),
                &port.to_string(),
                &uport.to_string(),
            ],
        );
        let text = stdout(&out);
        let get = |k: &str| -> String {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{k}=")))
                .unwrap_or("missing")
                .to_string()
        };
        assert_eq!(
            get("http-127"),
            "0 'hello'",
            "{who:?}: {text} {}",
            stderr(&out)
        );
        assert_eq!(get("http-localhost"), "0 'hello'", "{who:?}: {text}");
        for k in [
            "tcp-external",
            "tcp6-external",
            "tcp-mapped-external",
            "udp-external",
            "udp-sendmsg-external",
            "udp-dns-stub",
        ] {
            assert_eq!(get(k), EACCES.to_string(), "{who:?}: {k}: {text}");
        }
        assert!(get("udp-loopback").starts_with("0 5"), "{who:?}: {text}");
        let mut buf = [0u8; 16];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(
            &buf[..n],
            b"exfil",
            "positive control: loopback datagram arrived"
        );
        assert!(stderr(&out).contains("loopback-only"), "{}", stderr(&out));
        drop(server);
    }
}

/// The default profile (no network setting) is loopback where enforced.
#[test]
fn default_profile_network_is_loopback() {
    let w = World::new();
    let out = w
        .safe_exec()
        .args(["check", "--json", "--", "true"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["sandbox"]["network"], "loopback", "{v}");
}

/// Exec-time checks: a program the command starts (make recipe, find
/// -exec, a script written earlier) is matched with its real argv; a
/// critical match fails with EACCES and a line on stderr; ordinary
/// recipes still run.
#[test]
fn exec_time_checks_refuse_critical_argv() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        // The "home" is the world's, inside nothing the test cares about;
        // a canary in it shows whether rm ran.
        std::fs::create_dir_all(w.home.join("keep")).unwrap();
        std::fs::write(w.home.join("keep/canary"), "x").unwrap();
        std::fs::write(
            w.work.join("Makefile"),
            "wipe:\n\trm -rf $(HOME)\nclean:\n\tmkdir -p build && rm -rf build\n",
        )
        .unwrap();
        std::fs::write(w.work.join("later.sh"), "rm -rf \"$HOME\"\n").unwrap();
        prep(&w, who);
        for (what, args) in [
            ("make", vec!["--", "make", "wipe"]),
            ("find -exec", vec![]),
            ("script", vec!["--", "bash", "later.sh"]),
        ] {
            let out = if args.is_empty() {
                run_script(&w, who, "find . -maxdepth 0 -exec rm -rf \"$HOME\" \\;")
            } else {
                run_as(&w, who, &args)
            };
            // (find reports the failed -exec on stderr and may still exit 0.)
            if what != "find -exec" {
                assert_ne!(code(&out), 0, "{who:?}: {what}");
            }
            assert!(
                stderr(&out).contains("safe-exec: denied: exec inside the command refused")
                    && stderr(&out).contains("fs-rm-home"),
                "{who:?}: {what}: {}",
                stderr(&out)
            );
            assert!(
                w.home.join("keep/canary").exists(),
                "{who:?}: {what}: home wiped"
            );
        }
        // Positive control: an ordinary recipe runs its rm.
        let out = run_as(&w, who, &["--", "make", "clean"]);
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert!(!w.work.join("build").exists());
    }
}

/// Everyday work still runs confined under the supervisor.
#[test]
fn everyday_work_still_runs() {
    let Some(w) = landlock_world() else {
        return;
    };
    repo(&w);
    for (what, script) in [
        (
            "git",
            "git checkout -q -b topic && echo c > c.txt && git add c.txt && git commit -qm c",
        ),
        ("script", "script -q -c true /dev/null"),
        (
            "venv",
            "python3 -m venv .venv && .venv/bin/python -c 'import sys; print(sys.prefix)'",
        ),
    ] {
        let out = run_as(&w, Who::Caller, &["-c", script]);
        assert_eq!(code(&out), 0, "{what}: {}", stderr(&out));
    }
    if have("npm") {
        std::fs::write(
            w.work.join("package.json"),
            r#"{"name":"x","version":"1.0.0","scripts":{"test":"node -e \"console.log(42)\""}}"#,
        )
        .unwrap();
        let out = run_as(&w, Who::Caller, &["--", "npm", "test"]);
        assert_eq!(code(&out), 0, "npm: {}", stderr(&out));
        assert!(stdout(&out).contains("42"));
    } else {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "npm missing in CI"
        );
        skip("npm missing");
    }
    if have("cargo") {
        let c = w.work.join("tiny");
        std::fs::create_dir_all(c.join("src")).unwrap();
        std::fs::write(
            c.join("Cargo.toml"),
            "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .unwrap();
        std::fs::write(c.join("src/main.rs"), "fn main() { println!(\"tiny\"); }\n").unwrap();
        let mut cmd = w.safe_exec();
        cmd.arg("--profile").arg(w.profile_file()).args([
            "--cwd",
            c.to_str().unwrap(),
            "--",
            "cargo",
            "build",
            "--offline",
            "-q",
        ]);
        if let Ok(h) = std::env::var("CARGO_HOME") {
            cmd.env("CARGO_HOME", h);
        } else if let Some(h) = std::env::var_os("HOME") {
            cmd.env("CARGO_HOME", PathBuf::from(h).join(".cargo"));
        }
        if let Ok(r) = std::env::var("RUSTUP_HOME") {
            cmd.env("RUSTUP_HOME", r);
        } else if let Some(h) = std::env::var_os("HOME") {
            cmd.env("RUSTUP_HOME", PathBuf::from(h).join(".rustup"));
        }
        let out = cmd.output().unwrap();
        assert_eq!(code(&out), 0, "cargo build: {}", stderr(&out));
        assert!(c.join("target/debug/tiny").is_file());
    }
}

// ---- Red team 5: F1 (git redirections), F2 (snapshot bounds), F3 (restore
// races). Each run is a script file: the policy cannot see inside, so what
// is observed is the supervisor's snapshot and restore.

/// A fake submodule git directory (what `git submodule absorbgitdirs`
/// leaves): HEAD, objects/, refs/, config, hooks/.
fn fake_gitdir(dir: &Path) {
    for d in ["hooks", "objects/ab", "refs/heads"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(dir.join("config"), "[core]\n\tbare = false\n").unwrap();
}

/// `safe-exec check --json` (the static policy) as the caller.
fn check_json(w: &World, args: &[&str]) -> serde_json::Value {
    let out = w
        .safe_exec()
        .arg("check")
        .arg("--json")
        .arg("--profile")
        .arg(w.profile_file())
        .args(args)
        .output()
        .unwrap();
    serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", stdout(&out), stderr(&out)))
}

/// `safe-exec hook` with one Claude Code PreToolUse call: its exit code
/// (2: refused) and what it printed.
fn file_tool(w: &World, tool: &str, input: serde_json::Value) -> (i32, String) {
    use std::io::Write;
    let stdin = json!({"session_id":"s","cwd":w.work,"hook_event_name":"PreToolUse",
        "tool_name":tool,"tool_input":input})
    .to_string();
    let mut child = w
        .safe_exec()
        .arg("hook")
        .arg("--profile")
        .arg(w.profile_file())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (code(&out), format!("{}{}", stdout(&out), stderr(&out)))
}

/// F1 (red team 5): `.git/commondir` (and `config.worktree`, the
/// submodules' and linked worktrees' git directories, a gitfile in place
/// of `.git`) redirect git's configuration and hooks: every spelling is
/// undone (exit 126), the user's next plain `git status` runs no payload;
/// ordinary git work in the same repository still exits 0.
#[test]
fn rt5_f1_git_redirections_do_not_survive() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        let sub = w.work.join(".git/modules/libs/foo");
        fake_gitdir(&sub);
        prep(&w, who);
        let config = std::fs::read(w.work.join(".git/config")).unwrap();
        let sub_config = std::fs::read(sub.join("config")).unwrap();
        let canary = w.base.join("pwned");
        let payload = format!("touch {}", canary.display());
        let fsmon = format!("printf '[core]\\n\\tfsmonitor = {payload}\\n'");
        let evil = format!(
            "mkdir -p evil/objects evil/refs evil/hooks && {fsmon} > evil/config && cp .git/HEAD evil/HEAD && "
        );
        let hook = format!("printf '#!/bin/sh\\n{payload}\\n'");
        let abs_evil = w.work.join("evil");
        for (what, script) in [
            ("commondir", format!("{evil}echo ../evil > .git/commondir")),
            (
                "commondir, absolute",
                format!("{evil}echo {} > .git/commondir", abs_evil.display()),
            ),
            (
                "commondir by cp",
                format!("{evil}echo ../evil > x.txt && cp x.txt .git/commondir && rm x.txt"),
            ),
            (
                "commondir by rename",
                format!("{evil}echo ../evil > .git/y && mv .git/y .git/commondir"),
            ),
            ("config.worktree", format!("{fsmon} > .git/config.worktree")),
            (
                "submodule config",
                format!("{fsmon} >> .git/modules/libs/foo/config"),
            ),
            (
                "submodule commondir",
                format!("{evil}echo {} > .git/modules/libs/foo/commondir", abs_evil.display()),
            ),
            (
                "submodule hook",
                format!(
                    "{hook} > .git/modules/libs/foo/hooks/post-checkout && chmod +x .git/modules/libs/foo/hooks/post-checkout || true"
                ),
            ),
            (
                "new submodule git dir",
                format!("mkdir -p .git/modules/x/hooks && {fsmon} > .git/modules/x/config && {hook} > .git/modules/x/hooks/pre-commit"),
            ),
            (
                "submodule named like a skipped directory",
                format!("mkdir -p .git/modules/target/hooks && {hook} > .git/modules/target/hooks/pre-commit"),
            ),
            (
                "linked worktree",
                "mkdir -p .git/worktrees/w && echo ../../../evil > .git/worktrees/w/commondir && echo /tmp/x/.git > .git/worktrees/w/gitdir".to_string(),
            ),
        ] {
            let out = run_script(&w, who, &script);
            assert_restored(&out, who, what);
            assert_eq!(
                std::fs::read(w.work.join(".git/config")).unwrap(),
                config,
                "{who:?}: {what}"
            );
            assert_eq!(
                std::fs::read(sub.join("config")).unwrap(),
                sub_config,
                "{who:?}: {what}"
            );
            for gone in [
                ".git/commondir",
                ".git/config.worktree",
                ".git/modules/libs/foo/commondir",
                ".git/modules/libs/foo/hooks/post-checkout",
                ".git/modules/x/config",
                ".git/modules/x/hooks",
                ".git/modules/target/hooks",
                ".git/worktrees/w/commondir",
                ".git/worktrees/w/gitdir",
            ] {
                assert!(
                    std::fs::symlink_metadata(w.work.join(gone)).is_err(),
                    "{who:?}: {what}: {gone} survived"
                );
            }
            let _ = std::fs::remove_dir_all(&abs_evil);
        }
        // `.git` turned into a gitfile: the directory comes back (the
        // moved history is the user's to move back).
        let out = run_script(&w, who, "mv .git gitold && echo 'gitdir: evil' > .git");
        assert_restored(&out, who, "gitfile");
        assert!(
            std::fs::symlink_metadata(w.work.join(".git"))
                .unwrap()
                .is_dir()
        );
        assert_eq!(std::fs::read(w.work.join(".git/config")).unwrap(), config);
        std::fs::remove_dir_all(w.work.join(".git")).unwrap();
        std::fs::rename(w.work.join("gitold"), w.work.join(".git")).unwrap();
        // The user's next plain git commands run no payload.
        git(&w.work, &["status", "--short"]);
        assert!(!canary.exists(), "{who:?}: payload ran");
        // Positive control: ordinary git work exits 0 and keeps its commit.
        let out = run_ok(
            &w,
            who,
            &[
                "-c",
                "git checkout -q -b feature && echo b >> a.txt && git commit -qam two && git log --oneline",
            ],
        );
        assert!(stdout(&out).contains("two"), "{}", stdout(&out));
        assert!(!stderr(&out).contains("protected"), "{}", stderr(&out));
        assert!(!canary.exists(), "{who:?}: payload ran");
    }
}

/// F1 (red team 5), the static policy and the agent's file tool: a visible
/// write of the git redirection files and of the home dotfiles is refused
/// before anything runs; ordinary files beside them are not.
#[test]
fn rt5_f1_visible_writes_of_git_redirections_are_refused() {
    let w = World::new();
    for s in [
        "echo ../evil > .git/commondir",
        "cp x.txt .git/commondir",
        "echo x >> .git/config.worktree",
        "echo x > .git/modules/sub/config",
        "echo x > .git/modules/libs/foo/hooks/pre-commit",
        "echo x > .git/worktrees/w/commondir",
        "echo 'gitdir: evil' > .git",
        "printf x | tee -a .bashrc",
        "cp x .profile",
        "echo x > .local/bin/git",
        "echo x > .config/autostart/e.desktop",
    ] {
        let v = check_json(&w, &["-c", s]);
        assert_eq!(v["decision"], "deny", "{s}: {v}");
    }
    for s in ["echo x > notes.txt", "echo x > .git/description"] {
        let v = check_json(&w, &["-c", s]);
        assert_eq!(v["decision"], "allow", "control {s}: {v}");
    }
    for rel in [
        ".git/commondir",
        ".git/modules/x/config",
        ".git/worktrees/w/commondir",
        ".bashrc",
    ] {
        let (rc, out) = file_tool(
            &w,
            "Write",
            json!({"file_path": w.work.join(rel), "content": "x"}),
        );
        assert!(rc == 2 && out.contains("protected"), "{rel}: {rc} {out}");
    }
    let (rc, out) = file_tool(
        &w,
        "Write",
        json!({"file_path": w.work.join("src/main.rs"), "content": "x"}),
    );
    assert!(rc == 0 && !out.contains("refused"), "control: {rc} {out}");
}

/// Files in `dir`, 10,001 of them, in subdirectory `j`.
fn junk(dir: &Path, j: &str) {
    let d = dir.join(j);
    std::fs::create_dir_all(&d).unwrap();
    for i in 0..10_001 {
        std::fs::write(d.join(i.to_string()), "").unwrap();
    }
}

/// F2 (red team 5): the snapshot's bounds fail closed. Past the tree bound
/// during the run: the whole junk and the planted hook go (single run and
/// the silent two-run variant). Over the bound before the run: the command
/// does not start (126 and a message saying what to do), nothing of the
/// user's is touched. A FIFO at a protected path is a state, not skipped;
/// a venv hidden behind thousands of new root entries is still found.
#[test]
fn rt5_f2_snapshot_bounds_fail_closed() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        std::fs::create_dir_all(w.work.join(".claude")).unwrap();
        std::fs::write(w.work.join(".claude/settings.json"), "{}\n").unwrap();
        prep(&w, who);
        let hooks_before = std::fs::read_dir(w.work.join(".git/hooks"))
            .unwrap()
            .count();
        // One run: the hook and the agent setting, then two directories of
        // 10,001 junk files each in both trees (listed before them on
        // tmpfs, newest first; on ext4 in hash order: the old walk's bound
        // was spent on whichever junk directory came first).
        let out = run_script(
            &w,
            who,
            "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit\n\
             echo '{\"hooks\":{}}' > .claude/settings.local.json\necho mine > notes.txt\n\
             for d in .git/hooks/j30 .git/hooks/j39 .claude/j30 .claude/j39; do mkdir -p $d; i=0; while [ $i -le 10000 ]; do : > $d/$i; i=$((i+1)); done; done\n[ -e .claude/j39/10000 ] || exit 3\n",
        );
        assert_restored(&out, who, "junk and hook");
        for gone in [
            ".git/hooks/pre-commit",
            ".git/hooks/j30",
            ".git/hooks/j39",
            ".claude/j30",
            ".claude/j39",
            ".claude/settings.local.json",
        ] {
            assert!(!w.work.join(gone).exists(), "{who:?}: {gone} survived");
        }
        assert_eq!(
            std::fs::read_dir(w.work.join(".git/hooks"))
                .unwrap()
                .count(),
            hooks_before
        );
        assert_eq!(
            std::fs::read_to_string(w.work.join("notes.txt")).unwrap(),
            "mine\n"
        );
        // Two runs: the first leaves two junk directories (both go), the
        // second writes the setting (it goes, loudly).
        let out = run_script(
            &w,
            who,
            "for d in .claude/j30 .claude/j39; do mkdir -p $d; i=0; while [ $i -le 10000 ]; do : > $d/$i; i=$((i+1)); done; done\n[ -e .claude/j39/10000 ] || exit 3\n",
        );
        assert_restored(&out, who, "two junk directories");
        assert!(stderr(&out).contains(".claude/j39"), "{}", stderr(&out));
        assert!(!w.work.join(".claude/j39").exists(), "{who:?}");
        let out = run_script(
            &w,
            who,
            "echo '{\"hooks\":{}}' > .claude/settings.local.json\n",
        );
        assert_restored(&out, who, "second run");
        assert!(!w.work.join(".claude/settings.local.json").exists());
        // Over the bound before the run (the user's own tree): refused
        // before the command starts, the tree untouched.
        junk(&w.work.join(".vscode"), "cache");
        prep(&w, who);
        let out = run_script(&w, who, "echo ran > ran.txt\n");
        assert_eq!(code(&out), 126, "{who:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(".vscode")
                && stderr(&out).contains("remove the entries it does not need"),
            "{who:?}: {}",
            stderr(&out)
        );
        assert!(!w.work.join("ran.txt").exists(), "{who:?}: the command ran");
        assert_eq!(
            std::fs::read_dir(w.work.join(".vscode/cache"))
                .unwrap()
                .count(),
            10_001
        );
        std::fs::remove_dir_all(w.work.join(".vscode")).unwrap();
        // Positive control: the same command now runs and keeps its file.
        let out = run_script(&w, who, "echo ran > ran.txt\n");
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert!(w.work.join("ran.txt").exists());
        // A FIFO at a protected path replaced by a file: put back.
        nix::unistd::mkfifo(
            &w.work.join(".envrc"),
            nix::sys::stat::Mode::from_bits_truncate(0o644),
        )
        .unwrap();
        prep(&w, who);
        let out = run_script(&w, who, "rm -f .envrc && echo 'touch pwned' > .envrc\n");
        assert_restored(&out, who, "fifo");
        assert!(
            std::fs::symlink_metadata(w.work.join(".envrc"))
                .unwrap()
                .file_type()
                .is_fifo()
        );
        std::fs::remove_file(w.work.join(".envrc")).unwrap();
        // A directory the command made unreadable (mode 000, made outside
        // the protected paths, where chmod is allowed) and renamed over
        // `.git/hooks` (same parent: no cross-directory rename needed):
        // unprivileged, it cannot be listed after the run; it goes whole
        // and the snapshot's hooks come back.
        let hooks = w.work.join(".git/hooks");
        let mode_before = std::fs::metadata(&hooks).unwrap().permissions().mode() & 0o7777;
        let out = run_script(
            &w,
            who,
            "mkdir .git/x && printf '#!/bin/sh\\ntouch pwned\\n' > .git/x/pre-commit && chmod 755 .git/x/pre-commit && chmod 000 .git/x && rm -rf .git/hooks && mv .git/x .git/hooks\n",
        );
        assert_restored(&out, who, "unreadable directory");
        let m = std::fs::symlink_metadata(&hooks).unwrap();
        assert!(m.is_dir(), "{who:?}");
        assert_eq!(m.permissions().mode() & 0o7777, mode_before, "{who:?}");
        assert!(
            !hooks.join("pre-commit").exists(),
            "{who:?}: {}",
            stderr(&out)
        );
        assert_eq!(std::fs::read_dir(&hooks).unwrap().count(), hooks_before);
        if who == Who::Nobody {
            assert!(
                stderr(&out).contains("could not be listed after the run; removed whole"),
                "{}",
                stderr(&out)
            );
        }
        // A venv two levels down behind 4,001 new root entries.
        let sp = w.work.join("tools/env/lib/python3.11/site-packages");
        std::fs::create_dir_all(&sp).unwrap();
        std::fs::write(w.work.join("tools/env/pyvenv.cfg"), "home = /usr\n").unwrap();
        prep(&w, who);
        let out = run_script(
            &w,
            who,
            "i=0; while [ $i -le 4000 ]; do : > f$i; i=$((i+1)); done\n",
        );
        assert!(w.work.join("f4000").exists(), "{who:?}: {}", stderr(&out));
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        let out = run_script(
            &w,
            who,
            "echo 'import os' > tools/env/lib/python3.11/site-packages/evil.pth\n",
        );
        assert_restored(&out, who, "hidden venv");
        assert!(!sp.join("evil.pth").exists(), "{who:?}");
        assert!(!w.base.join("pwned").exists() && !w.work.join("pwned").exists());
    }
}

/// F3 (red team 5): a concurrent confined command keeps symlinks to a file
/// outside the roots at the restore's old fixed temporary name and at every
/// `.safe-exec` entry it sees in `.git`, while other runs change
/// `.git/config` and are restored, for a bounded time. The outside file is
/// never written or chmod-ed, and `.git/config` ends a regular file with
/// its bytes and mode. Deterministic in its assertion: the outcome is
/// checked after every round, whichever interleaving happened.
#[test]
fn rt5_f3_restore_races_never_reach_outside() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        std::fs::set_permissions(
            w.work.join(".git/config"),
            std::fs::Permissions::from_mode(0o640),
        )
        .unwrap();
        let target = w.outside.join("target");
        std::fs::write(&target, "USER DATA\n").unwrap();
        prep(&w, who);
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        if who == Who::Nobody {
            std::os::unix::fs::lchown(&target, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        let config = std::fs::read(w.work.join(".git/config")).unwrap();
        let planter = w.script(
            "planter.sh",
            &format!(
                ": > planter-started\n\
                 end=$(( $(date +%s) + 8 ))\n\
                 while [ $(date +%s) -lt $end ]; do\n\
                   ln -sf {t} .git/.config.safe-exec-restore 2>/dev/null\n\
                   for f in .git/.config.safe-exec*; do\n\
                     [ -e \"$f\" ] && [ ! -L \"$f\" ] && rm -f \"$f\" && ln -s {t} \"$f\" 2>/dev/null\n\
                   done\n\
                 done\n\
                 rm -f .git/.config.safe-exec*\n",
                t = target.display()
            ),
        );
        let profile = w.profile_file();
        std::fs::set_permissions(&profile, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut bg = match who {
            Who::Caller => {
                let mut c = w.safe_exec();
                c.arg("--profile").arg(&profile).args(["--", &planter]);
                c
            }
            Who::Nobody => {
                let b = open_world(&w);
                let mut c = test_user_command(&w);
                c.arg(&b)
                    .arg("--profile")
                    .arg(&profile)
                    .args(["--", &planter]);
                c
            }
        }
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        // A script file: the policy cannot see the write, the restore acts.
        let victim = w.script("victim.sh", "echo >> .git/config\n");
        prep(&w, who);
        // The planter's command runs before the victims start, so that
        // its symlinks are in place for every victim's restore. (Before
        // the runs shared one baseline, this wait also kept a victim's
        // change out of the planter's snapshot: docs/threat-model.md,
        // "Protected files: concurrent runs".)
        let started = w.work.join("planter-started");
        let wait = std::time::Instant::now();
        while !started.exists() {
            assert!(
                wait.elapsed() < Duration::from_secs(30),
                "{who:?}: the planter did not start"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let start = std::time::Instant::now();
        let mut rounds = 0;
        while start.elapsed() < Duration::from_secs(7) {
            let out = run_as(&w, who, &["--", &victim]);
            // 126: the victim's change was put back. Under heavy load the
            // planter can win every try of an earlier restore, leaving
            // `.git/config` its symlink to the outside file until a later
            // restore: the victim's write through it is then refused by
            // Landlock (the target is outside the roots) and its own
            // restore puts the file back. Either way nothing outside is
            // written (checked below).
            let err = stderr(&out);
            assert!(
                code(&out) == 126
                    || (code(&out) == 1
                        && err.contains(".git/config: Permission denied")
                        && err.contains("put back")),
                "{who:?}: exit {}: {err}",
                code(&out)
            );
            rounds += 1;
            assert_eq!(
                std::fs::read(&target).unwrap(),
                b"USER DATA\n",
                "{who:?}: round {rounds}"
            );
            assert_eq!(
                std::fs::metadata(&target).unwrap().permissions().mode() & 0o7777,
                0o600,
                "{who:?}: round {rounds}"
            );
        }
        let st = bg.wait().unwrap();
        assert!(rounds > 3, "{who:?}: only {rounds} rounds");
        // The planter's own run ends with its own restore.
        assert!(st.code().is_some(), "{who:?}");
        let m = std::fs::symlink_metadata(w.work.join(".git/config")).unwrap();
        assert!(
            m.file_type().is_file(),
            "{who:?}: .git/config is not a file"
        );
        assert_eq!(m.permissions().mode() & 0o7777, 0o640, "{who:?}");
        assert_eq!(std::fs::read(w.work.join(".git/config")).unwrap(), config);
        assert_eq!(std::fs::read(&target).unwrap(), b"USER DATA\n");
        // Positive control: a run that changes nothing protected exits 0.
        let out = run_as(&w, who, &["--", "/bin/sh", "-c", "echo mine > mine.txt"]);
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert!(w.work.join("mine.txt").exists());
    }
}

/// Runs git with `args` in `dir` (hermetic, file transport allowed for
/// the local submodule clones), returning stdout.
fn git_out(dir: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "safe.directory=*", "-c", "protocol.file.allow=always"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", home)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.org")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.org")
        .output()
        .expect("git must be installed");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The project as a superproject: `sub`, a submodule cloned from
/// `outside/src` (two commits; the superproject records the second), its
/// git directory in `.git/modules/sub`. Returns a git directory outside
/// the roots whose `core.fsmonitor` leaves `canary`.
fn superproject(w: &World, canary: &Path) -> PathBuf {
    let home = w.base.join("git-home");
    std::fs::create_dir_all(&home).unwrap();
    let src = w.outside.join("src");
    std::fs::create_dir_all(&src).unwrap();
    git_out(&src, &home, &["init", "-q", "-b", "main"]);
    for f in ["one", "two"] {
        std::fs::write(src.join(f), f).unwrap();
        git_out(&src, &home, &["add", f]);
        git_out(&src, &home, &["commit", "-qm", f]);
    }
    repo(w);
    git_out(
        &w.work,
        &home,
        &["submodule", "add", "-q", src.to_str().unwrap(), "sub"],
    );
    git_out(&w.work, &home, &["commit", "-qm", "sub"]);
    let evil = w.outside.join("evil");
    std::fs::create_dir_all(&evil).unwrap();
    git_out(&evil, &home, &["init", "-q"]);
    std::fs::write(evil.join("e"), "e").unwrap();
    git_out(&evil, &home, &["add", "e"]);
    git_out(&evil, &home, &["commit", "-qm", "e"]);
    let hook = format!("touch {}; false", canary.display());
    git_out(&evil, &home, &["config", "core.fsmonitor", &hook]);
    evil.join(".git")
}

/// Whether the user's plain `git status` in the superproject leaves the
/// canary (runs a submodule's fsmonitor).
fn status_runs(w: &World, canary: &Path) -> bool {
    let _ = std::fs::remove_file(canary);
    git_out(&w.work, &w.base.join("git-home"), &["status", "--short"]);
    let ran = canary.exists();
    let _ = std::fs::remove_file(canary);
    ran
}

/// Submodules (threat model, "Nested repositories and new submodules"):
/// an existing submodule's gitfile redirected to a git directory whose
/// `core.fsmonitor` runs a payload, and new gitlinks to repositories the
/// command controls, make the user's next plain `git status` run it (shown
/// by hand first). Confined, the gitfile is put back and a new
/// submodule's `.git` moved aside (exit 126, reported); afterwards `git
/// status` runs nothing. Ordinary work with a submodule (add, commit,
/// `git submodule update`) exits 0 unreported.
#[test]
fn submodule_git_entries_and_new_gitlinks_do_not_survive() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        let canary = w.base.join("pwned");
        let evil = superproject(&w, &canary);
        let gitfile = std::fs::read(w.work.join("sub/.git")).unwrap();
        assert_eq!(gitfile, b"gitdir: ../.git/modules/sub\n");
        // Control: the attack is live in this world without safe-exec.
        std::fs::write(
            w.work.join("sub/.git"),
            format!("gitdir: {}\n", evil.display()),
        )
        .unwrap();
        assert!(status_runs(&w, &canary), "{who:?}: control");
        std::fs::write(w.work.join("sub/.git"), &gitfile).unwrap();
        assert!(!status_runs(&w, &canary), "{who:?}: control");
        prep(&w, who);
        let sha = git_out(
            &w.work.join("sub"),
            &w.base.join("git-home"),
            &["rev-parse", "HEAD"],
        );
        let sha = sha.trim();
        // 1. The existing submodule's gitfile, by `sh -c` as in the brief.
        let script = format!("printf 'gitdir: {}\\n' > sub/.git", evil.display());
        let out = run_as(&w, who, &["--", "sh", "-c", &script]);
        assert_restored(&out, who, "gitfile");
        assert!(
            stderr(&out).contains(&format!("{} (restored)", w.work.join("sub/.git").display())),
            "{who:?}: {}",
            stderr(&out)
        );
        assert_eq!(std::fs::read(w.work.join("sub/.git")).unwrap(), gitfile);
        assert!(!status_runs(&w, &canary), "{who:?}: gitfile");
        // 2. New gitlinks: a gitfile outside, an embedded repository.
        for (what, script, dir) in [
            (
                "update-index --cacheinfo",
                format!(
                    "git update-index --add --cacheinfo 160000,{sha},n1 && mkdir n1 && printf 'gitdir: {}\\n' > n1/.git",
                    evil.display()
                ),
                "n1",
            ),
            (
                "git add of an embedded repository",
                format!(
                    "git init -q n2 && cd n2 && echo f > f && git add f && git -c user.name=t -c user.email=t@t commit -qm f && git config core.fsmonitor 'touch {}; false' && cd .. && git add n2 2>/dev/null",
                    canary.display()
                ),
                "n2",
            ),
        ] {
            let out = run_script(&w, who, &script);
            assert_eq!(code(&out), 126, "{who:?}: {what}: {}", stderr(&out));
            assert!(
                stderr(&out).contains(&format!(
                    "{} (a new submodule's git entry: moved to {}",
                    w.work.join(dir).join(".git").display(),
                    w.work
                        .join(dir)
                        .join(".git.quarantined-by-safe-exec")
                        .display()
                )),
                "{who:?}: {what}: {}",
                stderr(&out)
            );
            assert!(!w.work.join(dir).join(".git").exists(), "{who:?}: {what}");
            assert!(!status_runs(&w, &canary), "{who:?}: {what}");
            git_out(
                &w.work,
                &w.base.join("git-home"),
                &["rm", "-qf", "--cached", dir],
            );
        }
        // Positive controls: ordinary work exits 0, unreported.
        let out = run_ok(
            &w,
            who,
            &[
                "-c",
                "echo b >> a.txt && git add a.txt && git commit -qm two && git status --short && git log --oneline",
            ],
        );
        assert!(stdout(&out).contains("two"), "{}", stdout(&out));
        assert!(
            !stderr(&out).contains("protected"),
            "{who:?}: {}",
            stderr(&out)
        );
        git_out(
            &w.work.join("sub"),
            &w.base.join("git-home"),
            &["checkout", "-q", "HEAD~1"],
        );
        // (in a script: the policy asks for `git submodule update`, which
        // may fetch; the commit is already here, so it runs offline)
        let out = run_script(&w, who, "git submodule update -q");
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert!(
            !stderr(&out).contains("protected"),
            "{who:?}: {}",
            stderr(&out)
        );
        let now = git_out(
            &w.work.join("sub"),
            &w.base.join("git-home"),
            &["rev-parse", "HEAD"],
        );
        assert_eq!(now.trim(), sha, "{who:?}: submodule update");
        assert!(!status_runs(&w, &canary), "{who:?}: end");
    }
}

/// The agent's file tools are never confined: a write into a nested
/// repository's git entry is refused whatever the mode; the files beside
/// it are not.
#[test]
fn file_tool_writes_into_a_nested_git_entry_are_refused() {
    let w = World::new();
    for tool in ["Write", "Edit"] {
        for rel in [
            "sub/.git",
            "vendor/x/.git/config",
            "n/.git/hooks/pre-commit",
        ] {
            let (rc, out) = file_tool(
                &w,
                tool,
                json!({"file_path": w.work.join(rel), "content": "gitdir: /tmp/evil",
                    "old_string": "a", "new_string": "b"}),
            );
            assert!(
                rc == 2 && out.contains("a nested repository's git entry"),
                "{tool} {rel}: {rc} {out}"
            );
        }
    }
    for rel in ["sub/.gitignore", "sub/src/main.rs", ".git/description"] {
        let (rc, out) = file_tool(
            &w,
            "Write",
            json!({"file_path": w.work.join(rel), "content": "x"}),
        );
        assert!(
            rc == 0 && !out.contains("refused"),
            "control {rel}: {rc} {out}"
        );
    }
}

/// Red team 9, F4b/F5/F6: configuration other tools read at every start
/// (agents' MCP servers and hooks, mise, rustup's toolchain file, Maven's
/// and Gradle's wrapper and JVM options, hook managers): a confined change
/// is put back (exit 126) however it is spelled; an ordinary file beside
/// each is kept.
const RT9_PROTECTED: [&str; 29] = [
    ".gemini/settings.json",
    ".gemini/commands/x.toml",
    "opencode.json",
    ".opencode/plugin/x.js",
    ".roo/mcp.json",
    ".amazonq/mcp.json",
    ".windsurf/hooks.json",
    ".zed/settings.json",
    ".devcontainer/devcontainer.json",
    "mise.toml",
    ".mise/config.toml",
    "mise/config.toml",
    "mise.local.toml",
    ".mise.local.toml",
    ".config/mise.toml",
    ".config/mise/config.toml",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook-local.yml",
    "lefthook.toml",
    ".config/lefthook.yml",
    ".lefthook/pre-commit/x.sh",
    ".husky/pre-commit",
    "rust-toolchain",
    "rust-toolchain.toml",
    ".mvn/jvm.config",
    ".mvn/wrapper/maven-wrapper.properties",
    "gradle/wrapper/gradle-wrapper.properties",
];

#[test]
fn rt9_tool_configs_do_not_survive_any_spelling() {
    if !require_landlock() {
        return;
    }
    // (spelling, whether the files exist before, the script for one file
    // `$f`; `$e` is a scratch name in the root, never protected)
    let spellings = [
        (
            "create",
            false,
            "mkdir -p \"$(dirname \"$f\")\" && printf evil > \"$f\"",
        ),
        ("modify", true, "printf evil >> \"$f\""),
        (
            "rename over",
            true,
            "printf evil > \"$e\" && mv -f \"$e\" \"$f\"",
        ),
        (
            "symlink swap",
            true,
            "printf evil > \"$e\" && rm -f \"$f\" && ln -s \"$PWD/$e\" \"$f\"",
        ),
    ];
    for who in who() {
        for (spelling, exists, body) in spellings {
            let w = World::new();
            if exists {
                for f in RT9_PROTECTED {
                    let p = w.work.join(f);
                    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                    std::fs::write(&p, "orig\n").unwrap();
                }
            }
            let mut script = String::new();
            for (i, f) in RT9_PROTECTED.iter().enumerate() {
                script.push_str(&format!("f='{f}'; e='scratch-{i}'\n{body}\n"));
            }
            // Positive controls beside the protected names.
            script.push_str(
                "mkdir -p gradle mise-notes && echo ordinary > notes.txt && echo ok > gradle/build-notes.txt && echo ok > mise.toml.md && echo ok > .mvn.txt\n",
            );
            let out = run_script(&w, who, &script);
            assert_restored(&out, who, spelling);
            for f in RT9_PROTECTED {
                let p = w.work.join(f);
                if exists {
                    let m = std::fs::symlink_metadata(&p)
                        .unwrap_or_else(|e| panic!("{who:?} {spelling}: {f}: {e}"));
                    assert!(m.is_file(), "{who:?} {spelling}: {f} is not a file");
                    assert_eq!(
                        std::fs::read_to_string(&p).unwrap(),
                        "orig\n",
                        "{who:?} {spelling}: {f}"
                    );
                } else {
                    assert!(
                        std::fs::symlink_metadata(&p).is_err(),
                        "{who:?} {spelling}: {f} survived"
                    );
                }
            }
            for (f, c) in [
                ("notes.txt", "ordinary\n"),
                ("gradle/build-notes.txt", "ok\n"),
                ("mise.toml.md", "ok\n"),
                (".mvn.txt", "ok\n"),
            ] {
                assert_eq!(
                    std::fs::read_to_string(w.work.join(f)).unwrap(),
                    c,
                    "{who:?} {spelling}: control {f}"
                );
            }
        }
        // A protected directory swapped whole for a symlink to a copy.
        let w = World::new();
        for f in [
            ".mvn/jvm.config",
            ".husky/pre-commit",
            "gradle/wrapper/gradle-wrapper.properties",
        ] {
            let p = w.work.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "orig\n").unwrap();
        }
        let out = run_script(
            &w,
            who,
            "for d in .mvn .husky gradle/wrapper; do cp -r $d $d.2 && rm -rf $d && ln -s \"$PWD/$d.2\" $d; done\n\
             echo '-XX:OnOutOfMemoryError=./e.sh' > .mvn.2/jvm.config\n",
        );
        assert_restored(&out, who, "directory swap");
        for f in [
            ".mvn/jvm.config",
            ".husky/pre-commit",
            "gradle/wrapper/gradle-wrapper.properties",
        ] {
            let p = w.work.join(f);
            assert!(
                !std::fs::symlink_metadata(p.parent().unwrap())
                    .unwrap()
                    .file_type()
                    .is_symlink(),
                "{who:?}: {f}'s directory is still a symlink"
            );
            assert_eq!(
                std::fs::read_to_string(&p).unwrap(),
                "orig\n",
                "{who:?}: {f}"
            );
        }
        // Positive control alone: exit 0.
        let w = World::new();
        run_ok(
            &w,
            who,
            &[
                "-c",
                "mkdir -p gradle && echo ok > gradle/notes.txt && echo ok > notes.txt",
            ],
        );
    }
}

/// Red team 9, F1: a venv (with no `.pth` of its own) or its `lib` swapped
/// for a symlink to a copy holding a new `.pth`, or `lib` made a file:
/// exit 126, the directory is a real directory again and the `.pth` is not
/// reachable through the venv. F2: its sitecustomize.py, pyvenv.cfg and
/// activate script are put back; what pip writes (a package, a console
/// script) and a venv the command makes itself stay (exit 0).
#[test]
fn rt9_venv_swaps_and_startup_files_do_not_survive() {
    if !require_landlock() {
        return;
    }
    let sp = ".venv/lib/python3.12/site-packages";
    let attacks = [
        (
            ".venv -> .venv2",
            "cp -r .venv .venv2 && echo 'import os' > .venv2/lib/python3.12/site-packages/zz.pth && rm -rf .venv && ln -s .venv2 .venv",
            ".venv",
        ),
        (
            ".venv/lib -> lib2",
            "cp -r .venv/lib .venv/lib2 && echo 'import os' > .venv/lib2/python3.12/site-packages/zz.pth && rm -rf .venv/lib && ln -s lib2 .venv/lib",
            ".venv/lib",
        ),
        (
            "a file in place of lib",
            "rm -rf .venv/lib && echo x > .venv/lib",
            ".venv/lib",
        ),
        (
            "start-up files",
            "echo 'import os' > .venv/lib/python3.12/site-packages/sitecustomize.py && echo 'home = /tmp' > .venv/pyvenv.cfg && echo 'touch pwned' >> .venv/bin/activate",
            ".venv/lib/python3.12/site-packages",
        ),
    ];
    for who in who() {
        for (what, attack, dir) in attacks {
            let w = World::new();
            std::fs::create_dir_all(w.work.join(sp)).unwrap();
            std::fs::create_dir_all(w.work.join(".venv/bin")).unwrap();
            std::fs::write(w.work.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
            std::fs::write(w.work.join(".venv/bin/activate"), "# activate\n").unwrap();
            let out = run_script(&w, who, &format!("{attack}\necho ordinary > notes.txt\n"));
            assert_restored(&out, who, what);
            let m = std::fs::symlink_metadata(w.work.join(dir)).unwrap();
            assert!(m.is_dir(), "{who:?} {what}: {dir} is not a directory");
            for f in ["zz.pth", "sitecustomize.py"] {
                assert!(
                    !w.work.join(sp).join(f).exists(),
                    "{who:?} {what}: {f} reachable"
                );
            }
            assert_eq!(
                std::fs::read_to_string(w.work.join(".venv/pyvenv.cfg")).unwrap(),
                "home = /usr/bin\n",
                "{who:?} {what}"
            );
            assert_eq!(
                std::fs::read_to_string(w.work.join(".venv/bin/activate")).unwrap(),
                "# activate\n",
                "{who:?} {what}"
            );
            assert_eq!(
                std::fs::read_to_string(w.work.join("notes.txt")).unwrap(),
                "ordinary\n"
            );
        }
        // Positive control: pip's writes into the existing venv, and a
        // venv the command makes (with the activate scripts' modes copied).
        let w = World::new();
        std::fs::create_dir_all(w.work.join(sp)).unwrap();
        std::fs::create_dir_all(w.work.join(".venv/bin")).unwrap();
        std::fs::write(w.work.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        let mut pip = format!(
            "mkdir -p {sp}/pkg {sp}/pkg-1.0.dist-info && echo > {sp}/pkg/__init__.py && echo > {sp}/pkg-1.0.dist-info/RECORD && printf '#!/usr/bin/env python\\n' > .venv/bin/pkg && chmod 755 .venv/bin/pkg\n\
             mkdir -p new/bin && echo 'home = /usr/bin' > new/pyvenv.cfg && echo '# a' > new/bin/activate && chmod 644 new/bin/activate && touch -d @0 new/pyvenv.cfg\n"
        );
        if have("python3") {
            pip.push_str("python3 -m venv --without-pip made\n");
        }
        prep(&w, who);
        let s = w.script("pip.sh", &pip);
        let out = run_as(&w, who, &["--", &s]);
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert!(w.work.join(sp).join("pkg/__init__.py").exists());
        assert!(w.work.join(".venv/bin/pkg").exists());
        assert!(w.work.join("new/bin/activate").exists());
    }
}

/// Debian's and Ubuntu's python: a venv made from `/usr/bin/python3` reads
/// `.pth` files and `sitecustomize.py` from `dist-packages` too
/// (`lib/python3.X/`, `lib/python3/`, `local/lib/python3.X/`): writes there
/// are put back (exit 126), `local` swapped for a symlink is a directory
/// again, and an ordinary file beside them (a package's module) is kept.
#[test]
fn debian_venv_dist_packages_do_not_survive() {
    if !require_landlock() {
        return;
    }
    let dirs = [
        ".venv/lib/python3.12/dist-packages",
        ".venv/lib/python3/dist-packages",
        ".venv/local/lib/python3.12/dist-packages",
    ];
    for who in who() {
        for d in dirs {
            let w = World::new();
            std::fs::create_dir_all(w.work.join(d)).unwrap();
            std::fs::write(
                w.work.join(".venv/pyvenv.cfg"),
                "home = /usr/bin
",
            )
            .unwrap();
            std::fs::write(w.work.join(d).join("keep.pth"), "keep\n").unwrap();
            let out = run_script(
                &w,
                who,
                &format!(
                    "echo 'import os' > {d}/evil.pth && echo 'import os' > {d}/sitecustomize.py && echo 'import os' > {d}/usercustomize.py && echo evil > {d}/keep.pth\n\
                     echo 'x = 1' > {d}/ordinary.py\n"
                ),
            );
            assert_restored(&out, who, d);
            for f in ["evil.pth", "sitecustomize.py", "usercustomize.py"] {
                assert!(!w.work.join(d).join(f).exists(), "{who:?} {d}: {f} kept");
            }
            assert_eq!(
                std::fs::read_to_string(w.work.join(d).join("keep.pth")).unwrap(),
                "keep\n",
                "{who:?} {d}"
            );
            // Control: an ordinary module beside them stays.
            assert!(w.work.join(d).join("ordinary.py").exists(), "{who:?} {d}");
        }
        // `local` swapped for a symlink to a copy holding a new `.pth`.
        let w = World::new();
        let d = ".venv/local/lib/python3.12/dist-packages";
        std::fs::create_dir_all(w.work.join(d)).unwrap();
        std::fs::write(
            w.work.join(".venv/pyvenv.cfg"),
            "home = /usr/bin
",
        )
        .unwrap();
        let out = run_script(
            &w,
            who,
            "cp -r .venv/local .venv/local2 && echo 'import os' > .venv/local2/lib/python3.12/dist-packages/zz.pth && rm -rf .venv/local && ln -s local2 .venv/local\n",
        );
        assert_restored(&out, who, "local -> local2");
        let m = std::fs::symlink_metadata(w.work.join(".venv/local")).unwrap();
        assert!(m.is_dir(), "{who:?}: .venv/local is not a directory");
        assert!(!w.work.join(d).join("zz.pth").exists(), "{who:?}");
    }
}

/// Red team 9, F4a: hooks under `core.hooksPath` (husky v9's `.husky/_`,
/// or any directory the repository's configuration names) are put back.
#[test]
fn rt9_hooks_under_core_hookspath_do_not_survive() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        repo(&w);
        git(&w.work, &["config", "core.hooksPath", "tools/githooks"]);
        std::fs::create_dir_all(w.work.join("tools/githooks")).unwrap();
        std::fs::write(w.work.join("tools/githooks/pre-commit"), "#!/bin/sh\n").unwrap();
        let out = run_script(
            &w,
            who,
            "printf '#!/bin/sh\\ntouch pwned\\n' > tools/githooks/pre-commit && printf '#!/bin/sh\\n' > tools/githooks/pre-push\necho ok > tools/notes.txt\n",
        );
        assert_restored(&out, who, "hooksPath");
        assert_eq!(
            std::fs::read_to_string(w.work.join("tools/githooks/pre-commit")).unwrap(),
            "#!/bin/sh\n"
        );
        assert!(!w.work.join("tools/githooks/pre-push").exists());
        assert!(w.work.join("tools/notes.txt").exists());
    }
}

/// Red team 10, F11: a hook installed as a symbolic link to a script of the
/// project (`ln -s ../../scripts/pre-commit.sh .git/hooks/pre-commit`, the
/// usual install recipe) makes the script a hook: a change to it, through
/// any spelling, is put back; other scripts beside it stay the command's.
#[test]
fn rt10_a_hooks_symlink_target_is_protected_like_the_hook() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        for (script, how) in [
            (
                "printf 'touch pwned\\n' >> scripts/pre-commit.sh\necho ok > scripts/notes.txt\n",
                "append",
            ),
            (
                "printf '#!/bin/sh\\ntouch pwned\\n' > s2 && mv s2 scripts/pre-commit.sh\necho ok > scripts/notes.txt\n",
                "rename over",
            ),
            (
                "rm scripts/pre-commit.sh && printf '#!/bin/sh\\ntouch pwned\\n' > scripts/pre-commit.sh\necho ok > scripts/notes.txt\n",
                "remove and write",
            ),
            (
                "sed -i 's/echo ok/touch pwned/' lib/real.sh\necho ok > scripts/notes.txt\n",
                "through a second link",
            ),
        ] {
            let w = World::new();
            repo(&w);
            std::fs::create_dir_all(w.work.join("scripts")).unwrap();
            std::fs::create_dir_all(w.work.join("lib")).unwrap();
            std::fs::write(w.work.join("lib/real.sh"), "#!/bin/sh\necho ok\n").unwrap();
            std::os::unix::fs::symlink("../lib/real.sh", w.work.join("scripts/pre-push.sh"))
                .unwrap();
            std::fs::write(w.work.join("scripts/pre-commit.sh"), "#!/bin/sh\necho ok\n").unwrap();
            let hooks = w.work.join(".git/hooks");
            std::os::unix::fs::symlink("../../scripts/pre-commit.sh", hooks.join("pre-commit"))
                .unwrap();
            std::os::unix::fs::symlink("../../scripts/pre-push.sh", hooks.join("pre-push"))
                .unwrap();
            let out = run_script(&w, who, script);
            assert_restored(&out, who, how);
            assert_eq!(
                std::fs::read_to_string(w.work.join("scripts/pre-commit.sh")).unwrap(),
                "#!/bin/sh\necho ok\n",
                "{who:?}: {how}"
            );
            assert_eq!(
                std::fs::read_to_string(w.work.join("lib/real.sh")).unwrap(),
                "#!/bin/sh\necho ok\n",
                "{who:?}: {how}"
            );
            // The positive control: the other file written by the same run.
            assert!(w.work.join("scripts/notes.txt").exists(), "{who:?}: {how}");
        }
        // A run that changes only ordinary files beside the hook's target
        // ends normally.
        let w = World::new();
        repo(&w);
        std::fs::create_dir_all(w.work.join("scripts")).unwrap();
        std::fs::write(w.work.join("scripts/pre-commit.sh"), "#!/bin/sh\n").unwrap();
        std::os::unix::fs::symlink(
            "../../scripts/pre-commit.sh",
            w.work.join(".git/hooks/pre-commit"),
        )
        .unwrap();
        let out = run_script(&w, who, "echo ok > scripts/lint.sh\n");
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert!(w.work.join("scripts/lint.sh").exists());
    }
}

/// Red team 10 F10: a monorepo's venv three levels down (`apps/web/.venv`,
/// `services/api/venv`, `backend/src/env`) is found by its name: a `.pth`,
/// `sitecustomize.py` or `bin/activate` change planted there by a script
/// (the policy does not see the path) does not survive (exit 126).
/// Positive controls: an ordinary file beside the venv stays, and so does a
/// `.pth` in a directory three levels down that is no venv (no
/// `pyvenv.cfg`).
#[test]
fn rt10_monorepo_venvs_three_levels_down_are_protected() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        let venvs = ["apps/web/.venv", "services/api/venv", "backend/src/env"];
        for v in venvs {
            let sp = w.work.join(v).join("lib/python3.12/site-packages");
            std::fs::create_dir_all(&sp).unwrap();
            std::fs::create_dir_all(w.work.join(v).join("bin")).unwrap();
            std::fs::write(w.work.join(v).join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
            std::fs::write(w.work.join(v).join("bin/activate"), "# activate\n").unwrap();
        }
        // Not a venv: no pyvenv.cfg.
        let plain = w.work.join("apps/docs/.venv/lib/python3.12/site-packages");
        std::fs::create_dir_all(&plain).unwrap();
        for v in venvs {
            let sp = format!("{v}/lib/python3.12/site-packages");
            for (what, script) in [
                ("pth", format!("echo 'import os' > {sp}/zz.pth")),
                (
                    "sitecustomize",
                    format!("echo 'import os' > {sp}/sitecustomize.py"),
                ),
                (
                    "activate",
                    format!("echo 'touch pwned' >> {v}/bin/activate"),
                ),
            ] {
                let out = run_script(&w, who, &script);
                assert_restored(&out, who, &format!("{v} {what}"));
            }
            assert!(!w.work.join(&sp).join("zz.pth").exists(), "{who:?}: {v}");
            assert!(
                !w.work.join(&sp).join("sitecustomize.py").exists(),
                "{who:?}: {v}"
            );
            assert_eq!(
                std::fs::read_to_string(w.work.join(v).join("bin/activate")).unwrap(),
                "# activate\n",
                "{who:?}: {v}"
            );
        }
        // Controls: an ordinary file beside a venv, and a `.pth` in a
        // directory that is not a venv, stay (exit 0).
        let out = run_script(
            &w,
            who,
            "echo ok > apps/web/notes.txt && echo x > apps/docs/.venv/lib/python3.12/site-packages/own.pth",
        );
        assert_eq!(code(&out), 0, "{who:?}: {}", stderr(&out));
        assert!(w.work.join("apps/web/notes.txt").exists());
        assert!(plain.join("own.pth").exists());
    }
}

/// Red team 10 F3/F4: credential stores and local services' tokens are
/// unreadable confined (the kernel's answer: a script the policy cannot
/// see into), as root and as an unprivileged user. Positive controls: the
/// Maven and Gradle user files every build reads stay readable, as does an
/// ordinary dotfile beside them.
#[test]
fn rt10_credential_stores_are_unreadable_confined() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        let secrets = [
            ".pgpass",
            ".my.cnf",
            ".s3cfg",
            ".boto",
            ".claude.json",
            ".terraform.d/credentials.tfrc.json",
            ".gem/credentials",
            ".config/rclone/rclone.conf",
            ".config/hub",
            ".config/sops/age/keys.txt",
            ".mozilla/firefox/p.default/logins.json",
            ".config/google-chrome/Default/Cookies",
            ".local/share/fish/fish_history",
            ".local/share/jupyter/runtime/jpserver-1.json",
            ".claude/ide/1234.lock",
            ".claude/history.jsonl",
        ];
        let readable = [".m2/settings.xml", ".gradle/gradle.properties", ".inputrc"];
        for f in secrets.iter().chain(readable.iter()) {
            let p = w.home.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "harmless-test-value\n").unwrap();
        }
        prep(&w, who);
        for f in secrets {
            let out = run_script(&w, who, &format!("cat \"$HOME/{f}\""));
            assert_ne!(code(&out), 0, "{who:?}: {f} readable");
            assert!(
                stderr(&out).contains("Permission denied"),
                "{who:?}: {f}: {}",
                stderr(&out)
            );
            assert!(
                !stdout(&out).contains("harmless-test-value"),
                "{who:?}: {f}"
            );
        }
        for f in readable {
            let out = run_script(&w, who, &format!("cat \"$HOME/{f}\""));
            assert_eq!(code(&out), 0, "{who:?}: {f}: {}", stderr(&out));
            assert!(stdout(&out).contains("harmless-test-value"), "{who:?}: {f}");
        }
    }
}

/// Red team 10 F7: more files that make a tool run code later are put back
/// after a confined run (exit 126): Yarn's `yarnPath`/`yarn-path`, the root
/// dev container, JetBrains' `.idea/`, agents' settings, aider's, the git
/// sequencer. Positive control: an ordinary file the same run wrote stays.
#[test]
fn rt10_more_tool_configs_do_not_survive() {
    if !require_landlock() {
        return;
    }
    for who in who() {
        let w = World::new();
        std::fs::create_dir_all(w.work.join(".git")).unwrap();
        prep(&w, who);
        let files = [
            ".yarnrc.yml",
            ".yarnrc",
            ".devcontainer.json",
            ".idea/workspace.xml",
            ".qwen/settings.json",
            ".kiro/hooks/h.json",
            ".continue/mcpServers/m.yaml",
            ".kilocode/mcp.json",
            ".aider.conf.yml",
            ".git/sequencer/todo",
        ];
        let mut script = String::new();
        for f in files {
            script.push_str(&format!("mkdir -p \"$(dirname {f})\" && echo x >> {f}\n"));
        }
        script.push_str("echo ordinary > notes.txt\n");
        let out = run_script(&w, who, &script);
        assert_restored(&out, who, "rt10 configs");
        for f in files {
            assert!(!w.work.join(f).exists(), "{who:?}: {f} survived");
        }
        assert_eq!(
            std::fs::read_to_string(w.work.join("notes.txt")).unwrap(),
            "ordinary\n"
        );
    }
}
