//! Checks for the agent's file tools (`[policy] hook_file_tools`, on by
//! default): the same allowed roots, secret paths, secret file names and
//! protected files the shell policy uses, applied to Claude Code's
//! `Write`/`Edit`/`MultiEdit`/`NotebookEdit`/`Read` and to every path of
//! Codex's `apply_patch`, so an agent cannot edit outside the project, plant
//! configuration that runs later (`.git/hooks/`, `.codex/hooks.json`) or read
//! a key file through its editor tool when the shell would refuse the same.

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
        "Read" | "Grep" | "Glob" | "LS" => Some(Access::Read),
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "apply_patch" => Some(Access::Write),
        _ => None,
    }
}

/// What besides the roots a file tool is checked against.
#[derive(Debug, Clone, Default)]
pub struct Extra {
    /// `[paths] protected`, relative to each writable root.
    pub protected: Vec<String>,
    /// `[paths] secret_names` (`!` excepts).
    pub secret_names: Vec<String>,
}

/// Checks one path; `Err` is the refusal reason with a safer way.
pub fn check(
    roots: &Roots,
    extra: &Extra,
    cwd: &Path,
    tool: &str,
    access: Access,
    file: &str,
) -> Result<(), String> {
    let path = match tilde(&roots.home, file) {
        Tilde::None => paths::resolve(cwd, file),
        Tilde::Home(p) => paths::resolve(cwd, &p),
        Tilde::Ambiguous => {
            return Err(format!(
                "`{tool}` of {file} is refused: a path starting with `~NAME` is ambiguous (another user's home directory, or a file of that name); give the absolute path, or `./{file}` for a file in the working directory"
            ));
        }
    };
    if let Some(name) = path.file_name().and_then(|n| n.to_str())
        && secret_name(&extra.secret_names, name)
    {
        return Err(format!(
            "`{tool}` of {} is refused: `{name}` is a secret file (`[paths] secret_names`); use the example file (`.env.example`) or ask the user",
            path.display()
        ));
    }
    if access == Access::Write
        && let Some(pattern) = protected(roots, &extra.protected, &path)
    {
        return Err(format!(
            "`{tool}` of {} is refused: it is a protected file (`{pattern}` in `[paths] protected`): configuration that runs later outside any sandbox; ask the user to make this change",
            path.display()
        ));
    }
    // A file tool's write is never confined: a nested repository's git
    // entry (`sub/.git`, `vendor/x/.git/config`) would stay.
    if access == Access::Write
        && let Some(entry) = roots.nested_git_hit(&path)
    {
        return Err(format!(
            "`{tool}` of {} is refused: it changes {}, a nested repository's git entry: git runs what its configuration names (`core.fsmonitor`, hooks) when the superproject's `git status` enters it, outside any sandbox; ask the user to make this change",
            path.display(),
            entry.display()
        ));
    }
    let result = match access {
        Access::Read => roots.check_read(&path),
        Access::Write => {
            roots
                .check_write(&path, false)
                .and_then(|()| match roots.links_unscanned() {
                    Some(d) if !path.starts_with(d) => Err(PathProblem::Unscanned(d.to_path_buf())),
                    _ => Ok(()),
                })
        }
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
        PathProblem::Unscanned(d) => format!(
            "`{tool}` of {} is refused: the protected tree {} holds more entries than are looked through for links, so this write may change what a link there leads to; remove what that directory does not need",
            path.display(),
            d.display()
        ),
        PathProblem::Protected(d) | PathProblem::NestedGit(d) => format!(
            "`{tool}` of {} is refused: it changes the protected file {}, which runs later outside any sandbox; ask the user to make this change",
            path.display(),
            d.display()
        ),
    })
}

/// What a leading `~` of a file tool's path means.
#[derive(Debug, PartialEq, Eq)]
enum Tilde {
    /// No leading `~`: relative to the working directory, or absolute.
    None,
    /// `~` or `~/...`: the home directory, as the agents' file tools (and
    /// the shell) expand it; the path with the home directory spelled out.
    Home(String),
    /// `~NAME...` (`~root/x`, `~+`, `~-`): the shell would read another
    /// user's home or a directory stack entry, a file tool may take it
    /// literally; refused rather than guessed.
    Ambiguous,
}

/// The reading of a leading `~` in `file` (see [`Tilde`]).
fn tilde(home: &Path, file: &str) -> Tilde {
    let Some(rest) = file.strip_prefix('~') else {
        return Tilde::None;
    };
    if rest.is_empty() || rest.starts_with('/') {
        Tilde::Home(format!("{}{rest}", home.display()))
    } else {
        Tilde::Ambiguous
    }
}

/// Whether `name` matches the secret names (the last matching `!NAME`
/// excepts).
pub fn secret_name(patterns: &[String], name: &str) -> bool {
    let hit = patterns
        .iter()
        .filter(|p| !p.starts_with('!'))
        .any(|p| crate::sandbox::env::glob_match(p, name, false));
    hit && !patterns
        .iter()
        .filter_map(|p| p.strip_prefix('!'))
        .any(|p| crate::sandbox::env::glob_match(p, name, false))
}

/// The protected pattern `path` falls under, relative to any writable root.
pub fn protected(roots: &Roots, patterns: &[String], path: &Path) -> Option<String> {
    for root in &roots.write {
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let comps: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
        if let Some(p) = patterns.iter().find(|p| pattern_matches(p, &comps)) {
            return Some(p.clone());
        }
    }
    None
}

/// `a/b`, `dir/` (the tree), `*` within a component, `**` any components.
fn pattern_matches(pattern: &str, comps: &[&str]) -> bool {
    let tree = pattern.ends_with('/');
    let parts: Vec<&str> = pattern
        .trim_end_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    fn go(parts: &[&str], comps: &[&str], tree: bool) -> bool {
        match parts.first() {
            None => comps.is_empty() || tree,
            Some(&"**") => (0..=comps.len()).any(|i| go(&parts[1..], &comps[i..], tree)),
            Some(p) => {
                !comps.is_empty()
                    && crate::sandbox::env::glob_match(p, comps[0], false)
                    && go(&parts[1..], &comps[1..], tree)
            }
        }
    }
    !parts.is_empty() && go(&parts, comps, tree)
}

/// The paths a Codex `apply_patch` envelope touches (`*** Add File:`,
/// `*** Update File:`, `*** Delete File:`, `*** Move to:`). A text that is
/// not such an envelope, or names no file, is an error: what cannot be read
/// is refused.
pub fn patch_paths(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut begun = false;
    for line in text.lines() {
        let l = line.trim_end_matches('\r');
        if l.trim() == "*** Begin Patch" {
            begun = true;
            continue;
        }
        for marker in [
            "*** Add File:",
            "*** Update File:",
            "*** Delete File:",
            "*** Move to:",
        ] {
            if let Some(rest) = l.strip_prefix(marker) {
                let p = rest.trim();
                if p.is_empty() {
                    return Err(format!("`{marker}` names no file"));
                }
                out.push(p.to_string());
            }
        }
    }
    if !begun {
        return Err("the patch has no `*** Begin Patch` envelope".into());
    }
    if out.is_empty() {
        return Err("the patch names no file".into());
    }
    Ok(out)
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

    fn extra() -> Extra {
        Extra {
            protected: vec![
                ".git/hooks/".into(),
                ".git/config".into(),
                ".codex/".into(),
                ".cargo/config*".into(),
                "**/*.pth".into(),
            ],
            secret_names: vec![".env".into(), ".env.*".into(), "!.env.example".into()],
        }
    }

    #[test]
    fn protected_and_secret_names() {
        let cwd = Path::new("/nonexistent-proj");
        for p in [
            ".git/hooks/pre-commit",
            ".git/config",
            ".codex/hooks.json",
            "/nonexistent-proj/.cargo/config.toml",
            "venv/lib/site.pth",
        ] {
            let e = check(&roots(), &extra(), cwd, "Write", Access::Write, p).unwrap_err();
            assert!(e.contains("protected"), "{p}: {e}");
        }
        assert!(
            check(
                &roots(),
                &extra(),
                cwd,
                "Write",
                Access::Write,
                ".git/HEAD2"
            )
            .is_ok()
        );
        assert!(check(&roots(), &extra(), cwd, "Read", Access::Read, ".git/config").is_ok());
        for p in [".env", "sub/.env.local"] {
            let e = check(&roots(), &extra(), cwd, "Read", Access::Read, p).unwrap_err();
            assert!(e.contains("secret"), "{p}: {e}");
        }
        assert!(
            check(
                &roots(),
                &extra(),
                cwd,
                "Read",
                Access::Read,
                ".env.example"
            )
            .is_ok()
        );
    }

    #[test]
    fn patch_envelope() {
        let p = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: src/b.rs\n*** Move to: src/c.rs\n@@\n-x\n+y\n*** Delete File: d\n*** End Patch\n";
        assert_eq!(
            patch_paths(p).unwrap(),
            ["a.txt", "src/b.rs", "src/c.rs", "d"]
        );
        assert!(patch_paths("hello").is_err());
        assert!(patch_paths("*** Begin Patch\n*** End Patch\n").is_err());
    }

    #[test]
    fn write_inside_and_outside() {
        let cwd = Path::new("/nonexistent-proj");
        let x = Extra::default();
        assert!(check(&roots(), &x, cwd, "Write", Access::Write, "src/a.rs").is_ok());
        let e = check(&roots(), &x, cwd, "Edit", Access::Write, "/etc/passwd").unwrap_err();
        assert!(e.contains("outside the writable roots"), "{e}");
        let e = check(
            &roots(),
            &x,
            cwd,
            "Read",
            Access::Read,
            "/nonexistent-home/.ssh/id_rsa",
        )
        .unwrap_err();
        assert!(e.contains("secret"), "{e}");
        assert!(check(&roots(), &x, cwd, "Read", Access::Read, "/etc/hostname").is_ok());
        assert_eq!(access_of("NotebookEdit"), Some(Access::Write));
        assert_eq!(access_of("WebFetch"), None);
    }

    #[test]
    fn a_leading_tilde_is_the_home_directory_or_refused() {
        let cwd = Path::new("/nonexistent-proj");
        let x = Extra::default();
        let home = Path::new("/nonexistent-home");
        assert_eq!(tilde(home, "~"), Tilde::Home("/nonexistent-home".into()));
        assert_eq!(
            tilde(home, "~/.bashrc"),
            Tilde::Home("/nonexistent-home/.bashrc".into())
        );
        assert_eq!(tilde(home, "a/~/b"), Tilde::None);
        for f in ["~/.bashrc", "~//.profile", "~", "~/proj/../.bashrc"] {
            let e = check(&roots(), &x, cwd, "Write", Access::Write, f).unwrap_err();
            assert!(e.contains("outside the writable roots"), "{f}: {e}");
            assert!(e.contains("/nonexistent-home"), "{f}: {e}");
        }
        let e = check(&roots(), &x, cwd, "Read", Access::Read, "~/.ssh/id_rsa").unwrap_err();
        assert!(e.contains("secret"), "{e}");
        for f in ["~root/.bashrc", "~+/x", "~-/x", "~x"] {
            let e = check(&roots(), &x, cwd, "Write", Access::Write, f).unwrap_err();
            assert!(e.contains("is ambiguous"), "{f}: {e}");
        }
        // Positive controls: a `~` elsewhere is an ordinary name.
        assert!(check(&roots(), &x, cwd, "Write", Access::Write, "a~/b").is_ok());
        assert!(check(&roots(), &x, cwd, "Write", Access::Write, "./~x").is_ok());
        assert!(check(&roots(), &x, cwd, "Read", Access::Read, "~/notes.txt").is_ok());
    }
}
