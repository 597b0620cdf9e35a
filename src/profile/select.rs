//! Which profile applies: `--profile`, then `SAFE_EXEC_PROFILE`, then the
//! user config, then the system config, then the built-in `default`. A system
//! config with `pin = true` makes every other choice prove it is at least as
//! strict; files inside the working tree never configure safe-exec.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Profile, ProfileError, load_cached};

/// `config.toml` (user or system).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConfigFile {
    /// Profile name or path.
    pub profile: Option<String>,
    /// System file only: other selections may only be stricter.
    pub pin: bool,
    /// Directory of global hook files (`hooks.d`).
    pub hooks_dir: Option<String>,
    /// Where session state and the audit log live.
    pub state_dir: Option<String>,
}

/// Where the selection inputs come from (injected for tests).
#[derive(Debug, Clone, Default)]
pub struct SelectionInputs {
    /// `--profile`.
    pub cli: Option<String>,
    /// `SAFE_EXEC_PROFILE`.
    pub env: Option<String>,
    /// User config file path.
    pub user_config: Option<PathBuf>,
    /// System config file path.
    pub system_config: PathBuf,
    /// The working directory (files below it are ignored by discovery).
    pub cwd: PathBuf,
    /// safe-exec's cache directory, where a profile file whose examples held
    /// is remembered (by content) so they are not re-checked at every start;
    /// `None`: check them at every load.
    pub cache_dir: Option<PathBuf>,
    /// safe-exec's state directory (`{state}`), where a loaded profile file
    /// is cached (`profiles/`, see [`super::cache`]); the system
    /// configuration's `state_dir` wins. `None`: no cache.
    pub state_dir: Option<PathBuf>,
}

/// safe-exec's state directory (`{state}`): `$SAFE_EXEC_STATE_DIR`, else
/// `$XDG_STATE_HOME/safe-exec`, else `~/.local/state/safe-exec` (the system
/// configuration's `state_dir` wins over all of them, see `select`).
pub fn state_dir(home: &Path) -> PathBuf {
    if let Some(d) = std::env::var_os("SAFE_EXEC_STATE_DIR") {
        return PathBuf::from(d);
    }
    match std::env::var_os("XDG_STATE_HOME") {
        Some(x) if Path::new(&x).is_absolute() => PathBuf::from(x).join("safe-exec"),
        _ => home.join(".local/state/safe-exec"),
    }
}

impl SelectionInputs {
    /// The standard locations, from the process environment.
    pub fn from_env(cli: Option<String>, cwd: PathBuf) -> Self {
        let user_config = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
            .map(|d| d.join("safe-exec/config.toml"));
        // The system path can be moved only when no real system file exists
        // (tests and unprivileged installs); it can then only add pinning.
        let real = PathBuf::from("/etc/safe-exec/config.toml");
        let system_config = match std::env::var_os("SAFE_EXEC_SYSTEM_CONFIG") {
            Some(p) if !real.exists() => PathBuf::from(p),
            _ => real,
        };
        Self {
            cli,
            env: std::env::var("SAFE_EXEC_PROFILE")
                .ok()
                .filter(|s| !s.is_empty()),
            user_config,
            system_config,
            cwd,
            // `$XDG_CACHE_HOME/safe-exec`, else `~/.cache/safe-exec`: a cache,
            // not state (nothing is lost when it goes).
            cache_dir: std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .filter(|d| d.is_absolute())
                .or_else(|| {
                    std::env::var_os("HOME")
                        .map(PathBuf::from)
                        .filter(|h| h.is_absolute())
                        .map(|h| h.join(".cache"))
                })
                .map(|d| d.join("safe-exec")),
            state_dir: std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|h| h.is_absolute())
                .map(|h| state_dir(&h))
                .filter(|d| d.is_absolute()),
        }
    }
}

/// The chosen profile and the configuration that led to it.
#[derive(Debug)]
pub struct Selection {
    /// The profile.
    pub profile: Profile,
    /// The system configuration, if any.
    pub system: ConfigFile,
    /// The user configuration, if any (and not inside the working tree).
    pub user: ConfigFile,
    /// Why this profile: `--profile`, `SAFE_EXEC_PROFILE`, ...
    pub origin: String,
}

fn read_config(path: &Path) -> Result<Option<ConfigFile>, ProfileError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ProfileError::Config {
                file: path.display().to_string(),
                message: format!("cannot read: {e}"),
            });
        }
    };
    toml::from_str(&text)
        .map(Some)
        .map_err(|e: toml::de::Error| super::at(&path.display().to_string(), &text, &e))
}

fn inside(p: &Path, dir: &Path) -> bool {
    let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    real.starts_with(dir)
}

/// Chooses and loads the profile.
pub fn select(inputs: &SelectionInputs) -> Result<Selection, ProfileError> {
    let system = read_config(&inputs.system_config)?.unwrap_or_default();
    // A user configuration that is not there reads as none whether or not
    // it would be inside the working tree: one `stat` instead of resolving
    // both paths (glibc's realpath: a `readlink` per component).
    let absent = |p: &Path| matches!(std::fs::metadata(p), Err(e) if e.kind() == std::io::ErrorKind::NotFound);
    let user = match &inputs.user_config {
        Some(p) if !absent(p) && !inside(p, &inputs.cwd) => read_config(p)?.unwrap_or_default(),
        _ => ConfigFile::default(),
    };
    let user_profile = user
        .profile
        .clone()
        .filter(|p| !(p.contains('/') && inside(Path::new(p), &inputs.cwd)));
    let (choice, origin) = if let Some(p) = &inputs.cli {
        (p.clone(), "--profile")
    } else if let Some(p) = &inputs.env {
        (p.clone(), "SAFE_EXEC_PROFILE")
    } else if let Some(p) = user_profile {
        (p, "user config")
    } else if let Some(p) = &system.profile {
        (p.clone(), "system config")
    } else {
        ("default".to_string(), "built-in default")
    };
    let checked = inputs
        .cache_dir
        .as_ref()
        .map(|d| d.join("profiles-checked"));
    // Where the run's `{state}` is (cli/situation.rs: the system file's
    // `state_dir` wins), so the cache has the state directory's protection.
    // Under a pin, only a state directory the system file names: one chosen
    // by the environment (`SAFE_EXEC_STATE_DIR`, `XDG_STATE_HOME`, `HOME`)
    // is the agent's to choose, and an entry it forged there would stand in
    // for the pinned profile itself. Without a pin the environment already
    // chooses the profile (`SAFE_EXEC_PROFILE`), so the cache adds nothing
    // it could not do.
    let system_state = system
        .state_dir
        .as_deref()
        .filter(|d| d.starts_with('/'))
        .map(PathBuf::from);
    let cache = if system.pin {
        system_state
    } else {
        system_state.or_else(|| inputs.state_dir.clone())
    }
    .map(|d| d.join("profiles"));
    let profile = load_cached(&choice, checked.as_deref(), cache.as_deref())?;
    if system.pin {
        let pinned_name = system.profile.clone().unwrap_or_else(|| "default".into());
        let pinned = load_cached(&pinned_name, checked.as_deref(), cache.as_deref())?;
        if profile.source != pinned.source {
            let what = profile.loosens(&pinned);
            if !what.is_empty() {
                return Err(ProfileError::Loosens {
                    candidate: profile.name.clone(),
                    pinned: pinned.name.clone(),
                    what: what.join(", "),
                });
            }
        }
    }
    Ok(Selection {
        profile,
        system,
        user,
        origin: origin.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(user: &Path, cwd: &Path, none: &Path) -> SelectionInputs {
        SelectionInputs {
            user_config: Some(user.to_path_buf()),
            system_config: none.to_path_buf(),
            cwd: cwd.to_path_buf(),
            ..SelectionInputs::default()
        }
    }

    #[test]
    fn user_configuration_is_read_unless_absent_or_inside_the_working_tree() {
        let d = tempfile::tempdir().expect("tmp");
        let home = d.path().join("home");
        let project = d.path().join("project");
        let cfg_dir = home.join(".config/safe-exec");
        std::fs::create_dir_all(&cfg_dir).expect("dirs");
        std::fs::create_dir_all(&project).expect("dirs");
        let cfg = cfg_dir.join("config.toml");
        let none = d.path().join("none.toml");
        // Absent: the built-in default.
        let s = select(&inputs(&cfg, &project, &none)).expect("select");
        assert_eq!(
            (s.profile.name.as_str(), s.origin.as_str()),
            ("default", "built-in default")
        );
        // Present, outside the working tree: used.
        std::fs::write(&cfg, "profile = \"strict\"\n").expect("write");
        let s = select(&inputs(&cfg, &project, &none)).expect("select");
        assert_eq!(
            (s.profile.name.as_str(), s.origin.as_str()),
            ("strict", "user config")
        );
        // Inside the working tree (the agent could have written it): ignored,
        // through a symlink too.
        let s = select(&inputs(&cfg, &home, &none)).expect("select");
        assert_eq!(s.origin, "built-in default");
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&home, &link).expect("symlink");
        let s = select(&inputs(
            &link.join(".config/safe-exec/config.toml"),
            &home,
            &none,
        ))
        .expect("select");
        assert_eq!(s.origin, "built-in default");
        // Broken: an error, not silently the default.
        std::fs::write(&cfg, "profile = [\n").expect("write");
        assert!(select(&inputs(&cfg, &project, &none)).is_err());
        // Not readable as a file (a directory): an error, not "absent".
        std::fs::remove_file(&cfg).expect("rm");
        std::fs::create_dir(&cfg).expect("dir");
        assert!(select(&inputs(&cfg, &project, &none)).is_err());
    }
}
