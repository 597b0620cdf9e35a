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
            protected: with_dynamic(&p.protected, &write, &ph.cwd, ph.git_root.as_deref()),
            protected_split: std::sync::OnceLock::new(),
            protected_links: std::sync::OnceLock::new(),
            links_unscanned: std::sync::OnceLock::new(),
            secret_names: p.secret_names.clone(),
            refused: self.refused_roots(ph).iter().map(|r| r.warning()).collect(),
            anchors: self.anchors(ph),
        }
    }
}

/// `[paths] protected` and the dynamic protected paths of the repositories
/// the writable roots belong to (red team 10, F9): the `core.hooksPath`
/// directory and the files `.git/config` includes, found by the parser
/// the supervisor's snapshot uses ([`crate::sys::hookspath`], bounded),
/// once per situation. (The user's global configuration is read by the
/// supervisor only.) A root below its repository's top (`cd tools`, review
/// 10 R7) is read from the repository above it, whose relative hooks path
/// is relative to that top: the cwd's is `{git_root}` (found already), any
/// other root's is looked for upward ([`hookspath::discover`]); each
/// repository is read once. Each pattern is relative to its root; added to
/// the list every root shares, it protects that path in the other roots
/// too, which only errs towards protecting.
fn with_dynamic(
    protected: &[String],
    write: &[PathBuf],
    cwd: &std::path::Path,
    git_root: Option<&std::path::Path>,
) -> Vec<String> {
    use crate::sys::hookspath;
    let mut out = protected.to_vec();
    let mut tops: Vec<PathBuf> = Vec::new();
    for root in write {
        let top = match git_root {
            None if root == cwd => None,
            // The nearest repository above the cwd: found already.
            Some(g) if root == cwd => Some(g.to_path_buf()),
            _ => hookspath::discover(root),
        };
        let Some(top) = top else { continue };
        if tops.contains(&top) {
            continue;
        }
        let configs = hookspath::repo_configs(&top, &mut Vec::new());
        tops.push(top);
        let Some(top) = tops.last() else { continue };
        if configs.is_empty() {
            continue;
        }
        let found = hookspath::find_in(top, write, configs);
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
