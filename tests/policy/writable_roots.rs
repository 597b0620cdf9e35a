//! Which directories can be writable roots (red team 5, F6): `{cwd}`
//! follows the agent's `cd` (carried over by `hook --rewrite --cwd-out`,
//! or kept by the harness), so the home directory, its ancestors, its
//! hidden directories, `~/bin` and everything inside the system directories
//! (`/etc/cron.d`, `/usr/local/bin`, `/var/lib`) are refused as roots,
//! whatever the entry: the decision says so in a warning, visible writes
//! there are refused, and the sandbox grants nothing there (see
//! `sandbox::fs::home_and_its_dot_directories_as_cwd_are_not_writable`).
//! Decisions only: nothing here writes outside the test's temp world.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::policy::World;

/// `check --json [--unconfined] --cwd DIR -c S`.
fn check_in(w: &World, dir: &Path, unconfined: bool, s: &str) -> Value {
    let dir = dir.display().to_string();
    let mut args = vec!["--cwd", dir.as_str()];
    if unconfined {
        args.push("--unconfined");
    }
    args.extend(["-c", s]);
    w.check_json_args(&args).1
}

fn writes(v: &Value) -> Vec<String> {
    v["sandbox"]["write"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn warnings(v: &Value) -> String {
    v["warnings"].to_string()
}

/// The exact warning for a refused working directory `dir`.
fn cwd_warning(dir: &Path, why: &str) -> String {
    format!(
        "the working directory {} is not writable: {why}; commands cannot write there. Run the agent in a project directory (e.g. ~/src/NAME or /tmp/NAME), or `cd` into one",
        dir.display()
    )
}

/// Asserts that `dir` as the working directory is refused with `why`: not
/// a writable root, the warning given, a write there denied as outside the
/// roots, in confined and unconfined decisions alike.
fn assert_refused(w: &World, dir: &Path, why: &str, write: &str) {
    let real = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let want = cwd_warning(&real, why);
    for unconfined in [false, true] {
        let v = check_in(w, dir, unconfined, write);
        let reasons = v["reasons"].to_string();
        assert_eq!(
            v["decision"],
            "deny",
            "{} {write:?}: {reasons}",
            dir.display()
        );
        // `~/.ssh` is a secret path before it is outside the roots.
        assert!(
            reasons.contains("outside the writable roots")
                || (dir.ends_with(".ssh") && reasons.contains("inside the protected path")),
            "{}: {reasons}",
            dir.display()
        );
        assert!(
            v["warnings"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == &Value::String(want.clone()))),
            "{}: want warning {want:?}, got {}",
            dir.display(),
            warnings(&v)
        );
    }
    // A command that writes nothing still runs; the warning says why the
    // directory is not writable.
    let v = check_in(w, dir, false, "true");
    assert_eq!(
        v["decision"],
        "allow",
        "{}: {}",
        dir.display(),
        v["reasons"]
    );
    assert!(warnings(&v).contains("is not writable"), "{}", warnings(&v));
    assert!(
        !writes(&v).iter().any(|p| Path::new(p) == real),
        "{}: {}",
        dir.display(),
        v["sandbox"]["write"]
    );
}

/// Asserts that `dir` as the working directory is a writable root: a
/// write there is allowed, no warning.
fn assert_writable(w: &World, dir: &Path) {
    let real = dir.canonicalize().expect("exists");
    let v = check_in(
        w,
        dir,
        false,
        "cp /bin/true zz && printf x | tee -a notes.txt",
    );
    assert_eq!(
        v["decision"],
        "allow",
        "{}: {}",
        dir.display(),
        v["reasons"]
    );
    assert!(
        writes(&v).iter().any(|p| Path::new(p) == real),
        "{}",
        v["sandbox"]["write"]
    );
    assert!(
        !warnings(&v).contains("is not writable"),
        "{}",
        warnings(&v)
    );
}

#[test]
fn the_home_directory_and_above_are_not_writable_roots() {
    let w = World::new();
    let home = &w.home;
    std::fs::create_dir_all(home.join("proj/sub")).expect("mkdir");
    let why_home = "it is the home directory, whose dotfiles run at the next login";
    let parent = home.parent().expect("parent").to_path_buf();
    let why_above = format!("it contains the home directory {}", home.display());
    // The spellings an agent gets there with: `cd ~`, `cd ..` from a
    // project directly in HOME, `cd ~/..`, `cd ~/proj/../..`.
    for (dir, why) in [
        (home.clone(), why_home.to_string()),
        (home.join("proj/.."), why_home.to_string()),
        (home.join("proj/sub/../.."), why_home.to_string()),
        (parent.clone(), why_above.clone()),
        (home.join(".."), why_above.clone()),
        (home.join("proj/../.."), why_above.clone()),
    ] {
        for write in [
            "printf 'x\\n' | tee -a .bashrc",
            "cp /etc/hostname .profile",
            "mkdir -p .config/autostart && cp x.desktop .config/autostart/e.desktop",
            "echo x > .gitconfig",
        ] {
            assert_refused(&w, &dir, &why, write);
        }
    }
    // `/`.
    assert_refused(
        &w,
        Path::new("/"),
        "it is `/`, the whole machine",
        "cp /bin/true zz",
    );
    // Positive controls: a project in HOME, `cd sub` inside it, the temp
    // dir's own project directories.
    assert_writable(&w, &home.join("proj"));
    assert_writable(&w, &home.join("proj/sub"));
    assert_writable(&w, &w.cwd);
}

#[test]
fn hidden_directories_of_the_home_and_bin_are_not_working_roots() {
    let w = World::new();
    for rel in [
        ".config",
        ".config/systemd/user",
        ".local/bin",
        ".ssh",
        ".cargo/bin",
        "bin",
    ] {
        let dir = w.home.join(rel);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let first = rel.split('/').next().expect("first");
        let why = format!(
            "it is inside {}, which holds configuration or programs that run later outside any sandbox",
            w.home.join(first).display()
        );
        assert_refused(&w, &dir, &why, "cp /bin/true git");
    }
    // Positive controls: names that only look alike.
    for rel in ["binaries", "src/.hidden-inside-a-project", "proj.config"] {
        let dir = w.home.join(rel);
        std::fs::create_dir_all(&dir).expect("mkdir");
        assert_writable(&w, &dir);
    }
}

#[test]
fn system_directories_and_what_is_inside_them_are_not_writable_roots() {
    let w = World::new();
    let system = |t: &str| {
        format!(
            "it is inside {t}, a system directory of programs and configuration that run outside any sandbox"
        )
    };
    let var = "it is inside /var, which holds system state run by others (`/var/lib`, `/var/spool` with cron jobs, `/var/log`); only `/var/tmp` and project places (`/var/www/NAME`) can be".to_string();
    let shared = |p: &str| {
        format!(
            "it is {p} itself, shared by the projects and programs installed in it; a directory inside it can be"
        )
    };
    let mut seen = 0;
    for (dir, why) in [
        ("/usr/local/bin", system("/usr")),
        ("/usr/local", system("/usr")),
        ("/usr/bin", system("/usr")),
        ("/usr/lib/systemd/system", system("/usr")),
        ("/usr", system("/usr")),
        ("/etc", system("/etc")),
        ("/etc/cron.d", system("/etc")),
        ("/etc/ssh", system("/etc")),
        ("/etc/profile.d", system("/etc")),
        ("/boot", system("/boot")),
        ("/dev", system("/dev")),
        ("/proc/self", system("/proc")),
        ("/sys", system("/sys")),
        ("/run", system("/run")),
        ("/var", var.clone()),
        ("/var/lib", var.clone()),
        ("/var/spool", var.clone()),
        ("/var/log", var.clone()),
        ("/var/cache", var.clone()),
        (
            "/root",
            "it is inside /root, the home directory of root (not the caller's home)".into(),
        ),
        ("/opt", shared("/opt")),
        ("/srv", shared("/srv")),
        ("/mnt", shared("/mnt")),
        (
            "/home",
            "it is /home, the directory of home directories".into(),
        ),
    ] {
        let p = Path::new(dir);
        let Ok(real) = p.canonicalize() else {
            continue;
        };
        // `/bin` on a merged-/usr system is `/usr/bin`: the reason names
        // the real place, whichever the spelling.
        if real != p {
            continue;
        }
        seen += 1;
        assert_refused(&w, p, &why, "cp /bin/true zz_planted");
    }
    assert!(
        seen >= 10,
        "only {seen} of the system directories exist here"
    );
    // Spellings through symlinks and `..` reach the same refusal.
    for dir in [
        "/bin",
        "/usr/local/../local/bin",
        "/tmp/../etc/cron.d",
        "/./etc//ssh",
    ] {
        let p = Path::new(dir);
        if !p.exists() {
            continue;
        }
        let v = check_in(&w, p, false, "cp /bin/true zz_planted");
        assert_eq!(v["decision"], "deny", "{dir}: {}", v["warnings"]);
        assert!(
            warnings(&v).contains("is not writable"),
            "{dir}: {}",
            v["warnings"]
        );
    }
}

#[test]
fn project_places_stay_writable_roots() {
    let w = World::new();
    // /tmp/x and /var/tmp/x (own temp dirs, removed at the end), HOME's
    // projects (above), another user's project under /home is covered by
    // the unit tests (no other home here to use).
    for base in ["/tmp", "/var/tmp"] {
        if !Path::new(base).is_dir() {
            continue;
        }
        let d = tempfile::Builder::new()
            .prefix("safe-exec-proj-")
            .tempdir_in(base)
            .expect("tempdir");
        let proj: PathBuf = d.path().join("x");
        std::fs::create_dir_all(proj.join("sub")).expect("mkdir");
        assert_writable(&w, &proj);
        assert_writable(&w, &proj.join("sub"));
    }
}

#[test]
fn other_entries_are_refused_the_same_way() {
    let w = World::new();
    // `{tmp}` = HOME (TMPDIR=$HOME): refused, with the TMPDIR hint.
    let out = w
        .cmd()
        .env("TMPDIR", &w.home)
        .args(["check", "--json", "-c", "ls"])
        .output()
        .expect("run");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let want = format!(
        "the temp directory {} (`{{tmp}}`: $TMPDIR, else /tmp) is not writable: it is the home directory, whose dotfiles run at the next login; set TMPDIR to a temporary directory of your own, apart from the home directory and the system directories",
        w.home.display()
    );
    assert!(
        v["warnings"]
            .as_array()
            .is_some_and(|a| a.contains(&Value::String(want.clone()))),
        "{want}: {}",
        v["warnings"]
    );
    assert_eq!(
        writes(&v),
        vec![w.cwd.display().to_string()],
        "{}",
        v["warnings"]
    );
    // A profile that names `{home}` or `/usr/local/bin`: refused; one that
    // names a cache directory in HOME on purpose keeps it.
    std::fs::create_dir_all(w.home.join(".cache/go-build")).expect("mkdir");
    let prof = w.write_etc(
        "roots.toml",
        "extends = \"default\"\n[paths]\nwrite = [\"{cwd}\", \"{tmp}\", \"{home}\", \"/usr/local/bin\", \"{home}/.cache/go-build\"]\n",
    );
    let prof = prof.display().to_string();
    let (_, v) = w.check_json_args(&["--profile", &prof, "-c", "ls"]);
    let ws = warnings(&v);
    assert!(
        ws.contains(&format!(
            "the writable root `{{home}}` ({})",
            w.home.display()
        )),
        "{}",
        v["warnings"]
    );
    assert!(
        ws.contains("the writable root `/usr/local/bin` (/usr/local/bin) is refused"),
        "{}",
        v["warnings"]
    );
    assert!(
        ws.contains("remove it from `[paths] write`"),
        "{}",
        v["warnings"]
    );
    assert_eq!(
        writes(&v),
        vec![
            w.cwd.display().to_string(),
            w.tmp.display().to_string(),
            w.home.join(".cache/go-build").display().to_string()
        ],
        "{}",
        v["warnings"]
    );
}
