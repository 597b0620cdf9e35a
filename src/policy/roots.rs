//! The profile's roots for the path checks ([`Roots`]), with placeholders
//! resolved.

use std::path::PathBuf;
use std::sync::Arc;

use super::paths::Roots;
use crate::config::{Placeholders, Profile};

impl Profile {
    /// [`Profile::roots`], computed once per situation and shared: a
    /// decision needs them, and they do not change between decisions.
    pub fn roots_shared(&self, ph: &Placeholders) -> Arc<Roots> {
        self.roots_cached(ph, || self.roots(ph))
    }

    /// The roots with placeholders resolved.
    pub fn roots(&self, ph: &Placeholders) -> Roots {
        let p = &self.doc.paths;
        let mut broad = self.expand_list(ph, &p.broad);
        broad.extend(
            [
                "/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/opt", "/proc", "/root",
                "/sbin", "/srv", "/sys", "/usr", "/var", "/home", "/mnt", "/media", "/run",
            ]
            .iter()
            .map(PathBuf::from),
        );
        let write = self.writable_roots(ph);
        Roots {
            read: self.expand_list(ph, &p.read),
            write: write.clone(),
            deny_read: self.expand_list(ph, &p.deny_read),
            broad,
            home: ph.home.clone(),
            protected: with_dynamic(&p.protected, &write),
            protected_split: std::sync::OnceLock::new(),
            secret_names: p.secret_names.clone(),
            refused: self.refused_roots(ph).iter().map(|r| r.warning()).collect(),
            anchors: self.anchors(ph),
        }
    }
}

/// `[paths] protected` and the dynamic protected paths of the writable
/// roots that are repositories (red team 10, F9): the `core.hooksPath`
/// directory and the files `.git/config` includes, found by the parser
/// the supervisor's snapshot uses ([`crate::sys::hookspath`], bounded),
/// once per situation. (The user's global configuration is read by the
/// supervisor only.) Each pattern is relative to its root; added to the
/// list every root shares, it protects that path in the other roots too,
/// which only errs towards protecting.
fn with_dynamic(protected: &[String], write: &[PathBuf]) -> Vec<String> {
    use crate::sys::hookspath;
    let mut out = protected.to_vec();
    for root in write {
        let gitdir = root.join(".git");
        let mut configs: Vec<(Vec<u8>, PathBuf)> = Vec::new();
        match std::fs::symlink_metadata(&gitdir) {
            Ok(m) if m.is_dir() => {
                for f in ["config", "config.worktree"] {
                    if let Ok(Some(t)) = hookspath::read_bounded(&gitdir.join(f)) {
                        configs.push((t.into_bytes(), gitdir.clone()));
                    }
                }
            }
            Ok(m) if m.is_file() => {
                if let Ok(Some(t)) = hookspath::read_bounded(&gitdir) {
                    configs.extend(hookspath::gitfile_configs(
                        root,
                        t.as_bytes(),
                        &mut Vec::new(),
                    ));
                }
            }
            _ => continue,
        }
        let found = hookspath::find_in(root, write, configs);
        for p in found
            .protect
            .into_iter()
            .chain(found.elsewhere.into_iter().map(|(_, p)| p))
        {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}
