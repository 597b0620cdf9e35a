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

/// The caller's `PATH` (unconfined decisions only), read lazily: the
/// entries as bash searches them (an empty entry is the cwd, a relative one
/// is relative to it), joined without touching the filesystem; each entry
/// is resolved through its symlinks only when a program is found in it or
/// when a write needs [`CallerPath::in_roots`].
#[derive(Debug, Clone, Default)]
pub struct CallerPath {
    entries: Vec<std::path::PathBuf>,
    in_roots: std::cell::OnceCell<Vec<std::path::PathBuf>>,
    /// The entries as written, when one of them is empty or relative
    /// (they are relative to the directory a command runs in, which a
    /// `cd` of the string changes: review 11, F5), and the directory
    /// `entries` were joined with.
    relative: Option<(Vec<std::path::PathBuf>, std::path::PathBuf)>,
}

impl CallerPath {
    /// The entries of `path` against `cwd`; nothing when `path` is unset.
    /// An entry that starts with `~` or `~/` is under `home`: bash expands
    /// it when it searches (`export PATH="~/bin:$PATH"`, quoted, works in
    /// bash; review 12, F12).
    pub fn new(path: Option<&std::ffi::OsStr>, cwd: &Path, home: &Path) -> Self {
        let raw: Vec<std::path::PathBuf> = path
            .map(|p| std::env::split_paths(p).map(|d| tilde(d, home)).collect())
            .unwrap_or_default();
        let relative = raw
            .iter()
            .any(|d| !d.is_absolute())
            .then(|| (raw.clone(), cwd.to_path_buf()));
        CallerPath {
            entries: join_entries(&raw, cwd),
            in_roots: std::cell::OnceCell::new(),
            relative,
        }
    }

    /// The entries as bash searches them from `cwd` (the directory the
    /// command runs in).
    fn entries_from(&self, cwd: &Path) -> std::borrow::Cow<'_, [std::path::PathBuf]> {
        match &self.relative {
            Some((raw, base)) if base != cwd => std::borrow::Cow::Owned(join_entries(raw, cwd)),
            _ => std::borrow::Cow::Borrowed(&self.entries),
        }
    }

    /// The entries, resolved through their symlinks, up to the last one
    /// inside a writable root; empty when no entry is inside a root.
    pub fn in_roots(&self, roots: &super::paths::Roots) -> &[std::path::PathBuf] {
        self.in_roots.get_or_init(|| {
            let dirs: Vec<std::path::PathBuf> =
                self.entries.iter().map(|d| resolve_entry(d)).collect();
            let last = dirs
                .iter()
                .rposition(|d| roots.write.iter().any(|r| d.starts_with(r)));
            match last {
                Some(i) => dirs[..=i].to_vec(),
                None => Vec::new(),
            }
        })
    }
}

/// A `PATH` entry `~` or `~/REST` as bash searches it: `home` or
/// `home/REST`. (`~NAME/...` names another user's home: left as written,
/// relative, which no root holds.)
fn tilde(d: std::path::PathBuf, home: &Path) -> std::path::PathBuf {
    match d.strip_prefix("~") {
        Ok(rest)
            if d.as_os_str()
                .as_encoded_bytes()
                .get(1)
                .is_none_or(|b| *b == b'/') =>
        {
            home.join(rest)
        }
        _ => d,
    }
}

/// `PATH`'s entries against `cwd`: an empty entry is `cwd`, a relative one
/// is relative to it; a later copy of an entry adds nothing (bash finds a
/// name in the first entry that has it).
fn join_entries(raw: &[std::path::PathBuf], cwd: &Path) -> Vec<std::path::PathBuf> {
    let mut seen: Vec<std::path::PathBuf> = Vec::new();
    for d in raw {
        let d = if d.as_os_str().is_empty() {
            cwd.to_path_buf()
        } else {
            cwd.join(d)
        };
        if !seen.contains(&d) {
            seen.push(d);
        }
    }
    seen
}

/// One `PATH` entry resolved through its symlinks (a system bin directory
/// is taken as it is: no root is one).
fn resolve_entry(d: &Path) -> std::path::PathBuf {
    if SYSTEM_BIN_DIRS.iter().any(|s| d.as_os_str() == *s) {
        d.to_path_buf()
    } else {
        paths::resolve(Path::new("/"), &d.to_string_lossy())
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
///
/// The wrappers in front of the program (`nice`, `env`, `timeout`,
/// `xargs`, `busybox`) are programs found through `PATH` too, and a name
/// bash runs as a builtin (`echo`, `true`, `test`) is a program when a
/// wrapper, `xargs` or `find -exec` runs it (`execvp`): review 12, F4.
pub(super) fn path_program(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    if ctx.confined || path_wrappers(seg, ctx, v) {
        return;
    }
    if seg.words[0].value.contains('/') {
        return;
    }
    let name = seg.words[0].value.as_str();
    let execed = seg.origin == crate::parse::Origin::ExecTemplate
        || seg
            .wrappers
            .iter()
            .any(|w| w != "command" && w != "builtin" && w != "time");
    if name.is_empty() || name.contains('/') || (!execed && BASH_BUILTINS.contains(&name)) {
        return;
    }
    lookup(name, seg, ctx, v);
}

/// [`path_program`] of the wrappers in front of the program (whatever
/// the program's spelling: `nice /bin/ls` runs the `nice` `PATH` finds);
/// whether one is a project program. Bash's own `command`, `builtin`,
/// `exec`, `eval` and the `time` keyword are not programs.
fn path_wrappers(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) -> bool {
    let shell_own = |w: &str| matches!(w, "command" | "builtin" | "time" | "exec" | "eval");
    seg.wrappers
        .iter()
        .any(|w| !shell_own(w) && !BASH_BUILTINS.contains(&w.as_str()) && lookup(w, seg, ctx, v))
}

/// [`path_program`]'s search of one name; whether it found the program in
/// a project directory (the verdict then says so).
fn lookup(name: &str, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) -> bool {
    // Whether this string writes a file of that name somewhere: only then
    // can an entry without the program yet be the one that will have it.
    let named = |w: &std::path::PathBuf| w.file_name().is_some_and(|f| f == name);
    let maybe_written = ctx.written.iter().any(named) || ctx.writes_seen.borrow().iter().any(named);
    let inside = |dir: &Path| ctx.roots.write.iter().any(|r| dir.starts_with(r));
    for entry in ctx.path_dirs.entries_from(&seg.cwd).iter() {
        let exists = std::fs::metadata(entry.join(name)).is_ok_and(|m| m.is_file());
        if !exists && !maybe_written {
            continue;
        }
        let dir = resolve_entry(entry);
        let here = inside(&dir);
        let p = dir.join(name);
        let written = here && (ctx.written.contains(&p) || ctx.writes_seen.borrow().contains(&p));
        if written || (exists && here) {
            confined::project_program_named(name, ctx, v, &dir);
            return true;
        }
        if exists {
            env_interpreter(seg, ctx, v, &entry.join(name));
            return false;
        }
    }
    false
}

/// Unconfined: a program run by path from a system directory
/// (`/usr/bin/npm`) whose interpreter is found through `PATH`
/// ([`env_interpreter`]).
pub(super) fn slash_program(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    if ctx.confined || !project_path(ctx) {
        return;
    }
    // As spelled (`/usr/bin/npm`, often a link into the package) and as
    // resolved.
    let written = crate::sys::path::join_clean(&seg.cwd, &seg.words[0].value);
    let p = paths::resolve_anchored(&ctx.roots.anchors, &seg.cwd, &seg.words[0].value);
    let system = |f: &Path| {
        f.parent()
            .is_some_and(|d| SYSTEM_BIN_DIRS.iter().any(|s| d == Path::new(s)))
    };
    if system(&written) || system(&p) {
        env_interpreter(seg, ctx, v, &written);
    }
}

/// Whether the caller's `PATH` can find a program inside a writable root:
/// an entry there, or an empty or relative one.
fn project_path(ctx: &PolicyContext) -> bool {
    ctx.path_dirs.relative.is_some() || !ctx.path_dirs.in_roots(ctx.roots).is_empty()
}

/// The program `NAME` of a script's `#!/usr/bin/env [-S] [OPTIONS]
/// [VAR=VALUE...] NAME` line (`/usr/bin/npm`: `node`; pyenv's shims:
/// `bash`), from its first bytes; `None` for any other file.
fn env_shebang(file: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut head = [0u8; 256];
    // Not blocking on a FIFO; only a regular file is read.
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(file)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let n = f.read(&mut head).ok()?;
    let head = head.get(..n)?;
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|b| *b == b'\n')?];
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_ascii_whitespace();
    let interp = words.next()?;
    if Path::new(interp).file_name()? != "env" {
        return None;
    }
    // The kernel passes the rest as one argument; `env -S` splits it, and
    // without `-S` a single name is the usual line. Either way the first
    // word that is neither an option nor an assignment is the program.
    let mut skip_value = false;
    for w in words {
        if skip_value {
            skip_value = false;
            continue;
        }
        if w == "--" || w == "-" {
            continue;
        }
        if let Some(o) = w.strip_prefix('-') {
            // Options taking a value as the next word (`-u NAME`,
            // `-C DIR`), unless joined (`-uNAME`); `-S` takes the rest.
            let o = o.trim_start_matches(['i', 'v', '0']);
            // `-Snode --flag`: the program is joined to `-S`.
            if let Some(rest) = o.strip_prefix('S')
                && !rest.is_empty()
                && !rest.contains('=')
            {
                return Some(rest.to_string());
            }
            let o = o.trim_start_matches('S');
            if matches!(o, "u" | "C" | "-unset" | "-chdir" | "P") {
                skip_value = true;
            }
            continue;
        }
        if w.contains('=') {
            continue;
        }
        return Some(w.to_string());
    }
    None
}

/// Unconfined: `file`, reached through `PATH` or a system directory, is a
/// script whose `#!/usr/bin/env NAME` line makes the kernel's `env` look
/// `NAME` up through the same `PATH` (review 11, F8: `npm list` with a
/// project's `node_modules/.bin/node` first in `PATH` ran it). When that
/// finds `NAME` first in a directory inside a writable root, the command
/// asks, naming it; an interpreter that is itself such a script is
/// followed (four deep). One read of the file's first bytes, only when
/// `PATH` can find a program of the project at all.
fn env_interpreter(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict, file: &Path) {
    if ctx.confined || !project_path(ctx) {
        return;
    }
    let inside = |dir: &Path| ctx.roots.write.iter().any(|r| dir.starts_with(r));
    let entries = ctx.path_dirs.entries_from(&seg.cwd);
    let mut file = file.to_path_buf();
    for _ in 0..4 {
        let Some(name) = env_shebang(&file) else {
            return;
        };
        if name.contains('/') {
            return;
        }
        let Some(entry) = entries
            .iter()
            .find(|d| std::fs::metadata(d.join(&name)).is_ok_and(|m| m.is_file()))
        else {
            return;
        };
        let dir = resolve_entry(entry);
        if inside(&dir) {
            let d = decision_of(ctx.profile.doc.policy.unknown_commands).max(Decision::Ask);
            let prog = &seg.words[0].value;
            v.add(
                Layer::Policy,
                ReasonId::RegistryUntrustedPath,
                d,
                format!(
                    "`{prog}` is a script run by `env {name}`, which looks `{name}` up through PATH, and PATH finds `{name}` first in {}, a directory inside the writable roots: a program of the project would run outside any sandbox",
                    dir.display()
                ),
                Some(format!(
                    "{}; or take {} out of PATH",
                    confined::RUN_CONFINED,
                    dir.display()
                )),
            );
            return;
        }
        file = entry.join(&name);
    }
}

/// Unconfined: the helpers the command runs by a bare name through `PATH`
/// (`path_helpers` of its registry entry: git's `ssh` for a network
/// remote, `gpg` to sign, the editor; review 10 R6). When the caller's
/// `PATH` finds one first in a directory inside a writable root (an
/// activated venv's `bin/` where a confined run or `pip install` put an
/// `ssh`), that program of the project would run outside any sandbox under
/// an allowed command: the command asks, naming it. Costs nothing unless
/// the entry lists helpers; then the `PATH` entries are resolved (once per
/// decision) and each entry inside a root is listed once.
pub(super) fn path_helpers(name: &str, helpers: &[String], ctx: &PolicyContext, v: &mut Verdict) {
    if ctx.confined || helpers.is_empty() {
        return;
    }
    let project: Vec<std::path::PathBuf> = ctx
        .path_dirs
        .in_roots(ctx.roots)
        .iter()
        .filter(|d| ctx.roots.write.iter().any(|r| d.starts_with(r)))
        .cloned()
        .collect();
    if project.is_empty() {
        return;
    }
    // The names: `$VAR` is the first word of that variable's value when it
    // is a bare name (`GIT_SSH_COMMAND="ssh -i k"` runs `ssh`).
    let mut pats: Vec<String> = Vec::new();
    for h in helpers {
        if let Some(var) = h.strip_prefix('$') {
            let Some(val) = std::env::var_os(var) else {
                continue;
            };
            let val = val.to_string_lossy().into_owned();
            if let Some(first) = val.split_whitespace().next()
                && !first.contains('/')
                && !first.is_empty()
            {
                pats.push(first.trim_matches(['\'', '"']).to_string());
            }
        } else {
            pats.push(h.clone());
        }
    }
    for dir in &project {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in rd.flatten().take(4096) {
            let file = e.file_name();
            let f = file.to_string_lossy();
            if !pats
                .iter()
                .any(|p| paths::fnmatch(p.as_bytes(), f.as_bytes()))
            {
                continue;
            }
            // The first entry of `PATH` that has it.
            let first = ctx
                .path_dirs
                .entries
                .iter()
                .find(|d| std::fs::metadata(d.join(&*f)).is_ok_and(|m| m.is_file()));
            let Some(first) = first else { continue };
            let first = resolve_entry(first);
            if &first != dir {
                continue;
            }
            let d = decision_of(ctx.profile.doc.policy.unknown_commands).max(Decision::Ask);
            v.add(
                Layer::Policy,
                ReasonId::RegistryUntrustedPath,
                d,
                format!(
                    "`{name}` runs `{f}` through PATH, and PATH finds `{f}` first in {}, a directory inside the writable roots: a program of the project would run outside any sandbox",
                    dir.display()
                ),
                Some(format!(
                    "{}; or take {} out of PATH",
                    confined::RUN_CONFINED,
                    dir.display()
                )),
            );
            return;
        }
    }
}

/// `./rm -rf x` is checked as `rm` (so `./rm -rf ~` is still refused), but
/// the file is whatever the working tree holds: never allowed on the name alone.
pub(super) fn untrusted_program_path(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    let written = &seg.words[0].value;
    let p = paths::resolve_anchored(&ctx.roots.anchors, &seg.cwd, written);
    let dir = Path::new(written)
        .parent()
        .map(|d| paths::resolve_anchored(&ctx.roots.anchors, &seg.cwd, &d.to_string_lossy()));
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
