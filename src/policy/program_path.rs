//! Programs run by path (`./rm`, `/tmp/cat`): checked as the program they
//! name, but never trusted on the name alone.

use std::path::Path;

use super::ReasonId;
use super::mode::decision_of;
use super::paths;
use super::{Decision, Layer, PolicyContext, Verdict, confined};
use crate::parse::Segment;

/// Directories whose programs are the system's own; a program run by path
/// from anywhere else (`./rm`, `/tmp/cat`) is not the registry's program.
pub(super) const SYSTEM_BIN_DIRS: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr/bin",
    "/usr/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
];

/// The `PATH` entries (`path`, as the caller has it) in order, up to the
/// last one inside a writable root, resolved against `cwd` (an empty entry
/// is the cwd, a relative one is relative to it, as bash searches them);
/// empty when no entry is inside a root. Unconfined decisions only: a
/// bare name found in such an entry is a program of the project.
pub fn path_dirs(
    path: Option<&std::ffi::OsStr>,
    cwd: &Path,
    roots: &super::paths::Roots,
) -> Vec<std::path::PathBuf> {
    let Some(path) = path else {
        return Vec::new();
    };
    let dirs: Vec<std::path::PathBuf> = std::env::split_paths(path)
        .map(|d| {
            if d.as_os_str().is_empty() {
                cwd.to_path_buf()
            } else if SYSTEM_BIN_DIRS.iter().any(|s| d.as_os_str() == *s) {
                // (No root is a system directory: no resolving needed.)
                d
            } else {
                paths::resolve(cwd, &d.to_string_lossy())
            }
        })
        .collect();
    let last = dirs
        .iter()
        .rposition(|d| roots.write.iter().any(|r| d.starts_with(r)));
    match last {
        Some(i) => dirs[..=i].to_vec(),
        None => Vec::new(),
    }
}

/// Names bash finds before searching `PATH` (builtins and keywords the
/// registry knows): never a program of the project.
const BASH_BUILTINS: &[&str] = &[
    "cd",
    "echo",
    "printf",
    "pwd",
    "test",
    "[",
    "[[",
    "true",
    "false",
    ":",
    "export",
    "set",
    "shopt",
    "unset",
    "exit",
    "wait",
    "pushd",
    "popd",
    "type",
    "command",
    "exec",
    "source",
    ".",
    "eval",
    "read",
    "let",
    "local",
    "declare",
    "typeset",
    "readonly",
    "return",
    "shift",
    "trap",
    "umask",
    "ulimit",
    "alias",
    "unalias",
    "hash",
    "history",
    "jobs",
    "kill",
    "times",
    "builtin",
    "enable",
    "getopts",
    "mapfile",
    "readarray",
    "dirs",
    "disown",
    "fg",
    "bg",
    "suspend",
    "caller",
    "compgen",
    "complete",
    "compopt",
    "logout",
    "help",
    "bind",
    "break",
    "continue",
];

/// Unconfined: a bare program name (`git`) that `PATH` resolves, first
/// match as bash without a hash table does, into a directory inside a
/// writable root (an activated venv's `bin/`, `node_modules/.bin`, a
/// relative or empty entry), or that this same string writes there before
/// a later entry has it: a program of the project, which asks like
/// `./git` ([`confined::project_program`]). One `stat` per entry, only
/// when the caller's `PATH` has such an entry.
pub(super) fn path_program(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    let name = seg.words[0].value.as_str();
    if ctx.confined
        || ctx.path_dirs.is_empty()
        || name.is_empty()
        || name.contains('/')
        || BASH_BUILTINS.contains(&name)
    {
        return;
    }
    for dir in &ctx.path_dirs {
        let p = dir.join(name);
        let here = ctx.roots.write.iter().any(|r| dir.starts_with(r));
        let written = here && (ctx.written.contains(&p) || ctx.writes_seen.borrow().contains(&p));
        let exists = std::fs::metadata(&p).is_ok_and(|m| m.is_file());
        if written || (exists && here) {
            confined::project_program(seg, ctx, v, dir);
            return;
        }
        if exists {
            return;
        }
    }
}

/// `./rm -rf x` is checked as `rm` (so `./rm -rf ~` is still refused), but
/// the file is whatever the working tree holds: never allowed on the name alone.
pub(super) fn untrusted_program_path(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    let written = &seg.words[0].value;
    let p = paths::resolve(&seg.cwd, written);
    let dir = Path::new(written)
        .parent()
        .map(|d| paths::resolve(&seg.cwd, &d.to_string_lossy()));
    let trusted = SYSTEM_BIN_DIRS.iter().any(|d| {
        let d = Path::new(d);
        p.parent() == Some(d)
            || dir.as_deref() == Some(d)
            || std::fs::canonicalize(d).ok().as_deref() == p.parent()
    });
    // Such a program is an unknown command, whatever its name: the sandbox
    // contains it when confined.
    let d = decision_of(ctx.profile.doc.policy.unknown_commands);
    if !trusted && d != Decision::Allow {
        let dir = p.parent().map(Path::to_path_buf).unwrap_or_default();
        if d == Decision::Deny {
            v.add(
                Layer::Policy,
                ReasonId::RegistryUntrustedPath,
                d,
                format!("`{written}` is a program from `{}`, not a system program, and this profile refuses programs it does not know", dir.display()),
                Some("use a registered program, or a profile that allows unknown programs".into()),
            );
        } else {
            confined::project_program(seg, ctx, v, &dir);
        }
    }
}
