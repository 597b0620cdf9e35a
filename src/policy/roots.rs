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
        Roots {
            read: self.expand_list(ph, &p.read),
            write: self.writable_roots(ph),
            deny_read: self.expand_list(ph, &p.deny_read),
            broad,
            home: ph.home.clone(),
            protected: p.protected.clone(),
            protected_split: std::sync::OnceLock::new(),
            secret_names: p.secret_names.clone(),
            refused: self.refused_roots(ph).iter().map(|r| r.warning()).collect(),
        }
    }
}
