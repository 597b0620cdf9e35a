//! Optional checks for the agent's file tools (`[policy] hook_file_tools`):
//! the same allowed roots and secret paths the shell policy uses, applied to
//! `file_path`, so an agent cannot edit outside the project or read a key
//! file through its editor tool when the shell would refuse the same thing.

use std::path::Path;

use crate::policy::paths::{self, PathProblem, Roots};

/// Which access a file tool needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `Read`.
    Read,
    /// `Write`, `Edit`, `MultiEdit`.
    Write,
}

/// The access a tool needs, or `None` for tools this check does not cover.
pub fn access_of(tool: &str) -> Option<Access> {
    match tool {
        "Read" => Some(Access::Read),
        "Write" | "Edit" | "MultiEdit" => Some(Access::Write),
        _ => None,
    }
}

/// Checks one path; `Err` is the refusal reason with a safer way.
pub fn check(
    roots: &Roots,
    cwd: &Path,
    tool: &str,
    access: Access,
    file: &str,
) -> Result<(), String> {
    let path = paths::resolve(cwd, file);
    let result = match access {
        Access::Read => roots.check_read(&path),
        Access::Write => roots.check_write(&path, false),
    };
    result.map_err(|p| match p {
        PathProblem::Secret(d) => format!(
            "`{tool}` of {} is refused: it is inside the secret path {}; work with files of the project instead",
            path.display(),
            d.display()
        ),
        PathProblem::NotWritable => format!(
            "`{tool}` of {} is refused: it is outside the writable roots ({}); write inside the project or the temp dir",
            path.display(),
            join(&roots.write)
        ),
        PathProblem::NotReadable => format!(
            "`{tool}` of {} is refused: it is outside the readable roots ({}); read files inside the project",
            path.display(),
            join(&roots.read)
        ),
        PathProblem::Broad => format!(
            "`{tool}` of {} is refused: the target is too broad; name a file inside the project",
            path.display()
        ),
        PathProblem::Protected(d) => format!(
            "`{tool}` of {} is refused: it changes the protected file {}, which runs later outside any sandbox; ask the user to make this change",
            path.display(),
            d.display()
        ),
    })
}

fn join(v: &[std::path::PathBuf]) -> String {
    v.iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn roots() -> Roots {
        Roots {
            read: vec![PathBuf::from("/")],
            write: vec![PathBuf::from("/nonexistent-proj")],
            deny_read: vec![PathBuf::from("/nonexistent-home/.ssh")],
            broad: vec![],
            home: PathBuf::from("/nonexistent-home"),
            ..Default::default()
        }
    }

    #[test]
    fn write_inside_and_outside() {
        let cwd = Path::new("/nonexistent-proj");
        assert!(check(&roots(), cwd, "Write", Access::Write, "src/a.rs").is_ok());
        let e = check(&roots(), cwd, "Edit", Access::Write, "/etc/passwd").unwrap_err();
        assert!(e.contains("outside the writable roots"), "{e}");
        let e = check(
            &roots(),
            cwd,
            "Read",
            Access::Read,
            "/nonexistent-home/.ssh/id_rsa",
        )
        .unwrap_err();
        assert!(e.contains("secret"), "{e}");
        assert!(check(&roots(), cwd, "Read", Access::Read, "/etc/hostname").is_ok());
        assert_eq!(access_of("NotebookEdit"), None);
    }
}
