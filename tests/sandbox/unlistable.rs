//! Issue 16: the deny-read carving must not fail when a directory on the
//! way to a secret cannot be listed (mode 711 or 751 above HOME, HOME 700
//! owned by the user), and the other places where set-up could fail on an
//! ordinary system explain themselves. Run as an unprivileged user (nobody),
//! with positive controls.
use crate::common::sandbox as common;
use common::*;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const UID: u32 = TEST_USER;

fn chown(p: &Path, uid: u32) {
    std::os::unix::fs::chown(p, Some(uid), Some(uid)).expect("chown");
}

fn mode(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).expect("chmod");
}

/// A host whose `homes` directory (mode `homes_mode`, root's) holds the
/// user's HOME (700, the user's) and another user's directory.
struct Host {
    w: World,
    homes: PathBuf,
    home: PathBuf,
    sibling_file: PathBuf,
    /// safe-exec and the probe copied for the user.
    u: AsUser,
}

impl Host {
    fn new(homes_mode: u32) -> Host {
        let w = World::new();
        for d in [&w.base, &w.work, &w.tmp, &w.state] {
            mode(d, 0o777);
        }
        let homes = w.base.join("homes");
        let home = homes.join("u");
        let other = homes.join("other");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY\n").unwrap();
        std::fs::write(home.join(".bashrc"), "# bashrc\n").unwrap();
        let sibling_file = other.join("notes.txt");
        std::fs::write(&sibling_file, "sibling\n").unwrap();
        mode(&sibling_file, 0o644);
        mode(&other, 0o755);
        for p in [
            &home,
            &home.join(".ssh"),
            &home.join(".ssh/id_rsa"),
            &home.join(".bashrc"),
        ] {
            chown(p, UID);
        }
        mode(&home, 0o700);
        mode(&homes, homes_mode);
        let u = AsUser::copies(&w);
        Host {
            w,
            homes,
            home,
            sibling_file,
            u,
        }
    }

    /// A command as the user, with the user's HOME under `homes`.
    fn user(&self) -> Command {
        let mut cmd = test_user_command(&self.w);
        cmd.env("HOME", &self.home);
        cmd
    }

    fn sandboxed(&self, args: &[&str]) -> Output {
        self.u
            .run_in(self.user(), &probe_argv(&self.u.probe, args), false)
    }

    fn probe_rc(&self, args: &[&str]) -> i32 {
        probe_ran(&self.sandboxed(args), args)
    }

    fn unsandboxed(&self, args: &[&str]) -> i32 {
        code(&self.user().arg(&self.u.probe).args(args).output().unwrap())
    }
}

fn carving_through_an_unlistable_directory(homes_mode: u32) {
    if !require_landlock() {
        return;
    }
    assert!(
        is_root(),
        "the test creates a root-owned directory and runs as nobody"
    );
    assert!(have("setpriv"), "setpriv is needed");
    let h = Host::new(homes_mode);
    let bashrc = h.home.join(".bashrc").display().to_string();
    let key = h.home.join(".ssh/id_rsa").display().to_string();
    let sibling = h.sibling_file.display().to_string();
    // Positive controls: the user reaches all three outside the sandbox
    // (the sibling by its known name through the unlistable directory),
    // and cannot list that directory.
    assert_eq!(h.unsandboxed(&["open-read", &bashrc]), 0);
    assert_eq!(h.unsandboxed(&["open-read", &key]), 0);
    assert_eq!(h.unsandboxed(&["open-read", &sibling]), 0);
    let ls = h
        .user()
        .args(["ls", &h.homes.display().to_string()])
        .output()
        .unwrap();
    assert_ne!(
        code(&ls),
        0,
        "the directory really is unlistable for the user"
    );
    // Ordinary commands run (this was exit 125 before).
    let out = h.sandboxed(&["print-nnp"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(h.probe_rc(&["open-read", &bashrc]), 0, "HOME stays usable");
    assert_eq!(
        h.probe_rc(&["open-read", &key]),
        EACCES,
        "secret stays denied"
    );
    assert_eq!(
        h.probe_rc(&["open-read", &sibling]),
        EACCES,
        "siblings of the unlistable directory are not granted"
    );
    // doctor names the directory and what it did instead.
    let doc = h
        .user()
        .arg(&h.u.bin)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&doc.stdout).expect("doctor json");
    let unlisted = v["unlisted_directories"].as_array().expect("array").clone();
    let entry = unlisted
        .iter()
        .find(|u| u["path"] == h.homes.display().to_string())
        .unwrap_or_else(|| panic!("doctor does not name {}: {v}", h.homes.display()));
    assert_eq!(entry["granted"], serde_json::json!([h.home]), "{entry}");
    let text = h.user().arg(&h.u.bin).arg("doctor").output().unwrap();
    assert!(
        stdout(&text).contains(&format!("could not list {}", h.homes.display())),
        "{}",
        stdout(&text)
    );
}

#[test]
fn home_below_a_711_directory() {
    carving_through_an_unlistable_directory(0o711);
}

#[test]
fn home_below_a_751_directory() {
    carving_through_an_unlistable_directory(0o751);
}

#[test]
fn a_missing_temporary_directory_is_explained() {
    let Some(w) = landlock_world() else {
        return;
    };
    let gone = w.base.join("no-such-tmp");
    let out = w.command(&["true"]).env("TMPDIR", &gone).output().unwrap();
    assert_eq!(code(&out), 125);
    let err = stderr(&out);
    assert!(
        err.contains("TMPDIR") && err.contains(&gone.display().to_string()),
        "{err}"
    );
    // Control: an existing TMPDIR runs.
    let out = w.command(&["true"]).output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn a_missing_home_or_unset_home_still_runs() {
    let Some(w) = landlock_world() else {
        return;
    };
    let out = w
        .command(&["true"])
        .env("HOME", w.base.join("no-such-home"))
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "missing HOME: {}", stderr(&out));
    let out = w.command(&["true"]).env_remove("HOME").output().unwrap();
    assert_eq!(code(&out), 0, "unset HOME: {}", stderr(&out));
}
