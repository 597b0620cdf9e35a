//! Works out where the command runs: cwd, home, temp dir, git root, state
//! directory, and whether a person is at a terminal.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use super::shell_args::CommonOptions;
use crate::decide::Situation;
use crate::profile::Placeholders;

/// Builds the situation from options and the process environment.
pub fn build(
    common: &CommonOptions,
    cwd_override: Option<&str>,
    hook_mode: bool,
) -> Result<Situation, String> {
    let over = cwd_override.or(common.cwd.as_deref());
    // A deleted working directory of safe-exec itself does not matter when
    // the directory to judge in is given as an absolute path.
    let base = match std::env::current_dir() {
        Ok(b) => b,
        Err(_) if over.is_some_and(|c| c.starts_with('/')) => PathBuf::from("/"),
        Err(e) => {
            return Err(format!(
                "cannot read the current directory: {e}; pass --cwd DIR"
            ));
        }
    };
    let cwd = match over {
        Some(c) => base.join(c),
        None => base,
    };
    let cwd = crate::policy::paths::canonicalize(&cwd)
        .map_err(|e| format!("--cwd {}: {e}; pass an existing directory", cwd.display()))?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .or_else(home_from_passwd)
        .unwrap_or_else(|| PathBuf::from("/"));
    let home = crate::policy::paths::canonicalize(&home).unwrap_or(home);
    let tmpdir_env = std::env::var("TMPDIR").ok().filter(|t| t.starts_with('/'));
    let tmp = PathBuf::from(tmpdir_env.clone().unwrap_or_else(|| "/tmp".into()));
    let tmp = crate::policy::paths::canonicalize(&tmp).unwrap_or(tmp);
    let state = state_dir(&home);
    let interactive = !hook_mode
        && common.agent.is_none()
        && std::env::var_os("SAFE_EXEC_AGENT").is_none()
        && std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal();
    // One walk up from the cwd answers `{git_root}` and, later, whether a
    // root that follows the cwd lies inside a git directory.
    let walked = crate::sys::ancestry::GitAncestry::walk(&cwd);
    Ok(Situation {
        places: Placeholders {
            git_root: walked.git_root(),
            cwd,
            home,
            tmp,
            state,
            walked: Some(std::sync::Arc::new(walked)),
        },
        tmpdir_env,
        interactive,
        // Run mode and `check` decide for the sandboxed run; the hook sets
        // this from `--rewrite`, `check --unconfined` clears it.
        confined: !hook_mode,
    })
}

/// The system configuration's `state_dir`, when set, wins over the
/// environment: the guard's counts and the audit log must not be movable by
/// the agent (`SAFE_EXEC_STATE_DIR=/tmp/fresh` would reset its session).
pub fn apply_system_state(sit: &mut Situation, system: &crate::profile::select::ConfigFile) {
    if let Some(dir) = system.state_dir.as_deref().filter(|d| d.starts_with('/')) {
        sit.places.state = PathBuf::from(dir);
    }
}

/// `$SAFE_EXEC_STATE_DIR`, else `$XDG_STATE_HOME/safe-exec`, else
/// `~/.local/state/safe-exec`.
/// (One definition, in the profile loader, which caches loaded profile
/// files there.)
pub fn state_dir(home: &Path) -> PathBuf {
    crate::profile::select::state_dir(home)
}

/// The caller's home directory from `/etc/passwd` when `HOME` is unset
/// (cron, systemd units, `env -i`), so `{home}` secrets stay denied. Read
/// directly (no NSS: the binary is static). `None` when the file cannot be
/// read or has no entry for the uid; then `{home}` is `/`.
fn home_from_passwd() -> Option<PathBuf> {
    let uid = nix::unistd::getuid().to_string();
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() >= 7 && f[2] == uid)
        .map(|f| PathBuf::from(f[5]))
        .filter(|h| h.is_absolute())
}
