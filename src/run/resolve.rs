//! Finds the program before the sandbox is applied, on the PATH of the
//! command's own environment (not safe-exec's), so "not found" (127) and
//! "not executable" (126) are told apart from sandbox denials.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::RunError;

/// `PATH` used when the command's environment has none (glibc's default).
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn executable(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: access reads a NUL-terminated string we own.
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

/// Why `path` cannot be run, or `None` if it can.
fn check(path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Err(e) => Err(e.to_string()),
        Ok(m) if m.is_dir() => Err("is a directory".into()),
        Ok(_) if !executable(path) => Err("permission denied (not executable)".into()),
        Ok(_) => Ok(()),
    }
}

/// Resolves `program` like `execvp` would, using `PATH` from `env` and
/// relative paths against `cwd`.
pub fn resolve(
    program: &OsStr,
    env: &[(OsString, OsString)],
    cwd: &Path,
) -> Result<PathBuf, RunError> {
    let name = program.to_string_lossy().into_owned();
    if program.is_empty() {
        return Err(RunError::NotFound {
            program: name,
            path: String::new(),
        });
    }
    if program.as_bytes().contains(&b'/') {
        let path = cwd.join(program);
        return match check(&path) {
            Ok(()) => Ok(path),
            Err(_) if !path.exists() => Err(RunError::NotFound {
                program: name,
                path: "(a path, PATH not searched)".into(),
            }),
            Err(reason) => Err(RunError::NotExecutable {
                program: name,
                reason,
            }),
        };
    }
    let path_var = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| DEFAULT_PATH.into());
    let mut not_executable = None;
    for dir in path_var.as_bytes().split(|b| *b == b':') {
        let dir = if dir.is_empty() {
            cwd.to_path_buf()
        } else {
            cwd.join(OsStr::from_bytes(dir))
        };
        let candidate = dir.join(program);
        match check(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(reason) if candidate.exists() && !candidate.is_dir() => {
                not_executable.get_or_insert((candidate, reason));
            }
            Err(_) => {}
        }
    }
    match not_executable {
        Some((p, reason)) => Err(RunError::NotExecutable {
            program: p.display().to_string(),
            reason,
        }),
        None => Err(RunError::NotFound {
            program: name,
            path: path_var.to_string_lossy().into_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn uses_the_commands_path_and_tells_126_from_127() {
        let t = tempfile::tempdir().expect("tempdir");
        let bin = t.path().join("bin");
        std::fs::create_dir(&bin).expect("mkdir");
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let plain = bin.join("plain");
        std::fs::write(&plain, "x").expect("write");
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let env = vec![(OsString::from("PATH"), bin.clone().into_os_string())];
        assert_eq!(
            resolve(OsStr::new("tool"), &env, t.path()).expect("found"),
            tool
        );
        assert!(matches!(
            resolve(OsStr::new("nope"), &env, t.path()),
            Err(RunError::NotFound { .. })
        ));
        assert!(matches!(
            resolve(OsStr::new("./bin/nope"), &env, t.path()),
            Err(RunError::NotFound { .. })
        ));
        assert!(matches!(
            resolve(OsStr::new("./bin"), &env, t.path()),
            Err(RunError::NotExecutable { .. })
        ));
        assert_eq!(
            resolve(OsStr::new("bin/tool"), &env, t.path()).expect("relative"),
            t.path().join("bin/tool")
        );
        // Root can execute 0644 files through access(2) only if some x bit is
        // set, so this holds for every uid.
        assert!(matches!(
            resolve(OsStr::new("plain"), &env, t.path()),
            Err(RunError::NotExecutable { .. })
        ));
        assert!(
            resolve(OsStr::new("sh"), &[], t.path()).is_ok(),
            "default PATH"
        );
    }
}
