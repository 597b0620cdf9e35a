//! Environment hygiene: what the command inherits from the caller.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How the command's environment is built (`[env]` in a profile).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct EnvPolicy {
    /// `inherit`: the caller's environment minus the removals (behaves like
    /// bash as a configured shell). `allowlist`: only the names in `allow`.
    pub mode: EnvMode,
    /// Names (or `*` globs) kept in `allowlist` mode.
    pub allow: Vec<String>,
    /// Extra names (or `*` globs) removed in either mode, on top of the
    /// built-in secret and injection lists, which are always removed.
    pub remove: Vec<String>,
    /// Variables set for the command after scrubbing.
    pub set: BTreeMap<String, String>,
}

/// See [`EnvPolicy::mode`].
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EnvMode {
    /// Caller's environment minus secrets and injection variables.
    #[default]
    Inherit,
    /// Only allowlisted names survive.
    Allowlist,
}

impl Default for EnvPolicy {
    fn default() -> Self {
        Self {
            mode: EnvMode::Inherit,
            allow: Vec::new(),
            remove: Vec::new(),
            set: BTreeMap::new(),
        }
    }
}
