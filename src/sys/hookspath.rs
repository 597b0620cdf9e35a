//! `core.hooksPath` (red team 9, F4): git runs the hooks of the directory
//! it names instead of `.git/hooks/` (husky v9 sets `.husky/_`), so that
//! directory, when it lies inside a writable root, is protected like
//! `.git/hooks/`. Read at the snapshot from the repository's configuration
//! as it is before the run (`.git/config` and `.git/config.worktree`, both
//! protected), and from the files they include (`include.path`,
//! `includeIf.*.path`, conditions not evaluated: every one is read), which
//! are protected too when they lie inside a writable root (a change to one
//! would set `core.hooksPath` or anything else for the user's next git).
//!
//! A linked worktree's (`.git` a gitfile) is read through the gitfile and
//! `commondir` ([`gitfile_configs`]); where a root is a repository, the
//! user's global and the system configuration too ([`global_configs`]:
//! read-only, trusted, outside the roots). The hooks path is resolved on
//! the filesystem inside its root ([`land`]): symlinks on the way are
//! followed while they stay in the root, and protected themselves. A root
//! below its repository's top (`cd tools`) is read from the repository
//! git discovers above it ([`discover`], review 10 R7). Every bound (size,
//! include depth, count) leaves a note, never a silent gap.
//!
//! Shared (red team 10, F9): the supervisor's snapshot, and the static
//! policy and the file tools (`policy::roots`), which add what it finds to
//! `[paths] protected`.

use std::path::{Component, Path, PathBuf};

/// Most bytes of one configuration file read.
const MAX_FILE: u64 = 4 * 1024 * 1024;
/// Deepest include chain followed (git's own limit is 10).
const MAX_DEPTH: usize = 10;
/// Most included files read.
const MAX_FILES: usize = 64;

/// The hooks git runs from `core.hooksPath` (when it names the root itself
/// these names are protected instead of the whole tree).
const HOOKS: [&str; 28] = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

/// What the snapshot protects in addition, for one root.
#[derive(Debug, Default)]
pub struct Found {
    /// Patterns relative to the root.
    pub protect: Vec<String>,
    /// For the report: what could not be read.
    pub notes: Vec<String>,
    /// Real directories on the way to a hooks directory reached through a
    /// symlink, with their root: recorded as ways (one swapped for a
    /// symlink after the run is put back as a directory).
    pub ways: Vec<(PathBuf, PathBuf)>,
    /// Patterns under another writable root than the repository's (an
    /// include file, a hooks directory there), with that root: protected
    /// under it.
    pub elsewhere: Vec<(PathBuf, String)>,
}

/// Where a hooks path lands on the real filesystem, inside its root.
#[derive(Debug, Default, PartialEq)]
struct Landed {
    /// The path, relative to the root, with every symlink on the way
    /// followed (what is missing is taken as spelled).
    real: PathBuf,
    /// The symlinks followed, relative to the root (protected themselves:
    /// one pointed elsewhere is a change).
    links: Vec<PathBuf>,
    /// The real directories on the way, relative to the root.
    dirs: Vec<PathBuf>,
    /// Whether the path leads out of the root (through `..` or a symlink
    /// to elsewhere, or past [`MAX_LINKS`]): not followed further.
    outside: bool,
}

/// Most symlinks followed resolving one hooks path (the kernel's limit).
const MAX_LINKS: usize = 40;

/// Resolves `rel` under `root` component by component on the real
/// filesystem, following symlinks only while they stay inside `root`
/// ([`Landed::outside`] when one leads out of it, through `..` or an
/// absolute target elsewhere, or past [`MAX_LINKS`]): nothing outside the
/// root is looked at.
fn land(root: &Path, rel: &Path) -> Landed {
    use std::collections::VecDeque;
    use std::ffi::OsString;
    fn comps(p: &Path) -> impl Iterator<Item = OsString> + '_ {
        p.components().filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
    }
    let mut out = Landed::default();
    let Some(root) = normal(root) else {
        out.outside = true;
        return out;
    };
    let mut cur = PathBuf::new(); // relative to the root, real so far
    let mut todo: VecDeque<OsString> = comps(rel).collect();
    let mut hops = 0usize;
    while let Some(c) = todo.pop_front() {
        if c == ".." {
            if !cur.pop() {
                out.outside = true; // above the root
                return out;
            }
            continue;
        }
        let next = cur.join(&c);
        let abs = root.join(&next);
        match std::fs::symlink_metadata(&abs) {
            Ok(m) if m.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_LINKS {
                    out.outside = true;
                    return out;
                }
                out.links.push(next);
                let Ok(t) = std::fs::read_link(&abs) else {
                    out.outside = true;
                    return out;
                };
                let mut front: Vec<OsString> = if t.is_absolute() {
                    let Some(r) =
                        normal(&t).and_then(|t| t.strip_prefix(&root).ok().map(Path::to_path_buf))
                    else {
                        out.outside = true; // elsewhere: not followed
                        return out;
                    };
                    cur = PathBuf::new();
                    comps(&r).collect()
                } else {
                    comps(&t).collect()
                };
                front.extend(todo.drain(..));
                todo = front.into();
            }
            Ok(m) if m.is_dir() => {
                out.dirs.push(next.clone());
                cur = next;
            }
            _ => {
                // Missing (or not a directory): the rest as spelled.
                cur = next;
                while let Some(c) = todo.pop_front() {
                    if c == ".." {
                        if !cur.pop() {
                            out.outside = true;
                            return out;
                        }
                    } else {
                        cur.push(c);
                    }
                }
            }
        }
    }
    out.real = cur;
    out
}

/// One `section[.subsection].key = value` of a configuration file (section
/// and key lowercased, as git compares them).
#[derive(Debug, PartialEq)]
struct Entry {
    section: String,
    key: String,
    value: Option<String>,
}

/// Parses git's configuration syntax: `[section]`, `[section "sub"]`,
/// `[section.sub]`, `key = value` (also on the header's line), `key` alone
/// (true), `#`/`;` comments, double quotes with `\"`, `\\`, `\n`, `\t`,
/// `\b`, a trailing `\` joining the next line. What cannot be parsed is
/// skipped line by line (git refuses such a file, so nothing there is in
/// effect).
fn parse(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let mut rest = line.trim_start();
        if rest.starts_with('[') {
            let Some(end) = header_end(rest) else {
                continue;
            };
            section = header(&rest[1..end]);
            rest = rest[end + 1..].trim_start();
        }
        if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            continue;
        }
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(rest.len());
        if name_len == 0 {
            continue;
        }
        let key = rest[..name_len].to_ascii_lowercase();
        let after = rest[name_len..].trim_start();
        let value = if let Some(v) = after.strip_prefix('=') {
            let mut v = v.to_string();
            // A trailing backslash outside quotes continues the value.
            while ends_continued(&v) {
                v.pop();
                match lines.next() {
                    Some(next) => v.push_str(next),
                    None => break,
                }
            }
            Some(value(&v))
        } else {
            None
        };
        out.push(Entry {
            section: section.clone(),
            key,
            value,
        });
    }
    out
}

/// Where a header's `]` is (outside the subsection's quotes).
fn header_end(s: &str) -> Option<usize> {
    let mut quoted = false;
    let mut esc = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if esc => esc = false,
            '\\' if quoted => esc = true,
            '"' => quoted = !quoted,
            ']' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

/// `core`, `includeIf "gitdir:x"` -> `core`, `includeif.gitdir:x`.
fn header(inner: &str) -> String {
    let inner = inner.trim();
    match inner.find(char::is_whitespace) {
        Some(i) => {
            let name = inner[..i].to_ascii_lowercase();
            let sub = inner[i..].trim().trim_matches('"').replace("\\\"", "\"");
            format!("{name}.{sub}")
        }
        None => match inner.split_once('.') {
            // The old `[section.sub]` form: the subsection is lowercased.
            Some((a, b)) => format!("{}.{}", a.to_ascii_lowercase(), b.to_ascii_lowercase()),
            None => inner.to_ascii_lowercase(),
        },
    }
}

/// Whether a raw value line ends in a continuing backslash (an odd run of
/// them, outside comments). Inside double quotes too: git's `parse_value`
/// reads `\` and a newline as nothing wherever it is outside a comment
/// (`"to\<NL>ols"` is `tools`).
fn ends_continued(v: &str) -> bool {
    let mut quoted = false;
    let mut esc = false;
    let mut last_esc = false;
    for c in v.chars() {
        last_esc = false;
        match c {
            _ if esc => esc = false,
            '\\' => {
                esc = true;
                last_esc = true;
            }
            '"' => quoted = !quoted,
            '#' | ';' if !quoted => return false,
            _ => {}
        }
    }
    last_esc && esc
}

/// A raw value as git reads it: quotes removed, escapes applied, comments
/// cut, outer whitespace trimmed (inner whitespace kept).
fn value(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = raw.chars();
    let mut pending_ws = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => {
                let e = match chars.next() {
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('b') => '\u{8}',
                    Some(other) => other,
                    None => break,
                };
                out.push_str(&pending_ws);
                pending_ws.clear();
                out.push(e);
            }
            '#' | ';' if !quoted => break,
            c if c.is_whitespace() && !quoted => {
                if !out.is_empty() {
                    pending_ws.push(c);
                }
            }
            c => {
                out.push_str(&pending_ws);
                pending_ws.clear();
                out.push(c);
            }
        }
    }
    out
}

/// `p` without `.` and `..` (lexically; `..` above the start is kept out:
/// `None`).
fn normal(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::RootDir => out.push("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(s) => out.push(s),
            Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
}

/// A path value of the configuration: `~/x` from HOME, relative ones from
/// `base`.
fn resolve(v: &str, base: &Path) -> Option<PathBuf> {
    normal(&expand(v, base)?)
}

/// A path value as written: `~/x` from HOME, relative ones from `base`.
fn expand(v: &str, base: &Path) -> Option<PathBuf> {
    Some(if let Some(rest) = v.strip_prefix("~/") {
        home()?.join(rest)
    } else if v == "~" {
        home()?
    } else {
        base.join(v)
    })
}

/// Where a path value of the configuration really leads: through its
/// links, dangling ones too, a `..` after a link read as the kernel reads
/// it, the missing rest as written ([`crate::sys::path::by_link_text`]). A
/// link to a hooks directory not made yet (`hl -> tools/hooks`) leads where
/// the directory will be (review 12, F5); `canonicalize` answered nothing.
fn real_path(v: &str, base: &Path) -> Option<PathBuf> {
    Some(crate::sys::path::by_link_text(&expand(v, base)?).0)
}

/// The root `abs` lies in, and its path relative to it (the innermost
/// root when roots nest).
fn in_roots<'a>(abs: &Path, roots: &'a [PathBuf]) -> Option<(&'a Path, PathBuf)> {
    roots
        .iter()
        .filter_map(|r| {
            let r = normal(r)?;
            abs.strip_prefix(&r)
                .ok()
                .map(|rel| (r.clone(), rel.to_path_buf()))
        })
        .max_by_key(|(r, _)| r.as_os_str().len())
        .and_then(|(r, rel)| {
            roots
                .iter()
                .find(|x| normal(x).as_deref() == Some(r.as_path()))
                .map(|x| (x.as_path(), rel))
        })
}

/// A configuration file's text, at most 4 MiB (`None`: it does not
/// exist).
pub fn read_bounded(p: &Path) -> std::io::Result<Option<String>> {
    use std::io::Read;
    let f = match std::fs::File::open(p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut buf = Vec::new();
    f.take(MAX_FILE + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_FILE {
        return Err(std::io::Error::other("larger than 4 MiB"));
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

/// The patterns to protect under `root` for its repository's
/// `core.hooksPath`, from the contents of `.git/config` and
/// `.git/config.worktree` before the run (`None`: not a file).
#[cfg(test)]
pub fn find(
    root: &Path,
    roots: &[PathBuf],
    config: Option<Vec<u8>>,
    worktree: Option<Vec<u8>>,
) -> Found {
    let gitdir = root.join(".git");
    let configs = [config, worktree]
        .into_iter()
        .flatten()
        .map(|c| (c, gitdir.clone()))
        .collect();
    find_in(root, roots, configs)
}

/// The configuration files git reads for the repository whose working
/// tree is `root` and whose `.git` is a gitfile with `content` (a linked
/// worktree, or a submodule's checkout): the common directory's `config`
/// (through `commondir`) and the worktree's own `config.worktree`, each
/// with the directory its relative includes are read from. They lie
/// outside the roots as a rule (read-only here, as the user's git reads
/// them); what cannot be read leaves a note.
pub fn gitfile_configs(
    root: &Path,
    content: &[u8],
    notes: &mut Vec<String>,
) -> Vec<(Vec<u8>, PathBuf)> {
    let text = String::from_utf8_lossy(content);
    let Some(gitdir) = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("gitdir:"))
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .and_then(|g| normal(&root.join(g)))
    else {
        return Vec::new();
    };
    let read = |p: &Path, notes: &mut Vec<String>| match read_bounded(p) {
        Ok(t) => t,
        Err(e) => {
            notes.push(format!(
                "git configuration {} could not be read ({e}): a core.hooksPath set there is not protected",
                p.display()
            ));
            None
        }
    };
    let common = match read(&gitdir.join("commondir"), notes) {
        Some(c) => match normal(&gitdir.join(c.trim_end_matches(['\n', '\r']))) {
            Some(c) => c,
            None => return Vec::new(),
        },
        None => gitdir.clone(),
    };
    let mut out = Vec::new();
    if let Some(t) = read(&common.join("config"), notes) {
        out.push((t.into_bytes(), common.clone()));
    }
    if common != gitdir
        && let Some(t) = read(&gitdir.join("config.worktree"), notes)
    {
        out.push((t.into_bytes(), gitdir));
    }
    out
}

/// The top of the working tree `dir` belongs to, as git discovers it
/// (review 10, R7): `dir` itself or the nearest ancestor that holds a
/// `.git` (a directory, a gitfile, or a symlink to either). A root below
/// the repository's top (`cd tools`) belongs to the repository above it,
/// whose `core.hooksPath` is relative to that top. One `stat` per level
/// until one is found. (A bare repository above `dir` is not a working
/// tree: a root inside one is refused, see `config::refuse`.)
pub fn discover(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| std::fs::metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

/// The configuration files of the repository whose working tree's top is
/// `top`, read now: `.git/config` and `.git/config.worktree` when `.git` is
/// a directory (or a symlink to one), through the gitfile and `commondir`
/// when it is a file ([`gitfile_configs`]); each with the directory its
/// relative includes are read from. Nothing when `top` has no `.git`.
pub fn repo_configs(top: &Path, notes: &mut Vec<String>) -> Vec<(Vec<u8>, PathBuf)> {
    let gitdir = top.join(".git");
    let mut out = Vec::new();
    match std::fs::metadata(&gitdir) {
        Ok(m) if m.is_dir() => {
            for f in ["config", "config.worktree"] {
                match read_bounded(&gitdir.join(f)) {
                    Ok(Some(t)) => out.push((t.into_bytes(), gitdir.clone())),
                    Ok(None) => {}
                    Err(e) => notes.push(format!(
                        "git configuration {} could not be read ({e}): a core.hooksPath set there is not protected",
                        gitdir.join(f).display()
                    )),
                }
            }
        }
        Ok(m) if m.is_file() => {
            if let Ok(Some(t)) = read_bounded(&gitdir) {
                out.extend(gitfile_configs(top, t.as_bytes(), notes));
            }
        }
        _ => {}
    }
    out
}

/// The user's global and the system configuration, as git finds them:
/// `$GIT_CONFIG_GLOBAL`, or `~/.gitconfig` and `$XDG_CONFIG_HOME/git/config`
/// (`~/.config/git/config`); `$GIT_CONFIG_SYSTEM` or `/etc/gitconfig`
/// unless `$GIT_CONFIG_NOSYSTEM`. Read-only and trusted (outside the
/// roots, written by the user): a `core.hooksPath` there applies in every
/// repository, a relative one inside each repository's working tree.
/// `env`: how variables are looked up.
pub fn global_configs(env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<(Vec<u8>, PathBuf)> {
    let home = env("HOME").map(PathBuf::from).filter(|h| h.is_absolute());
    let mut files: Vec<PathBuf> = Vec::new();
    let nosystem =
        env("GIT_CONFIG_NOSYSTEM").is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
    if !nosystem {
        files.push(
            env("GIT_CONFIG_SYSTEM").map_or_else(|| PathBuf::from("/etc/gitconfig"), PathBuf::from),
        );
    }
    match env("GIT_CONFIG_GLOBAL") {
        Some(g) => files.push(PathBuf::from(g)),
        None => {
            let xdg = env("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .filter(|x| x.is_absolute())
                .or_else(|| home.as_ref().map(|h| h.join(".config")));
            if let Some(x) = xdg {
                files.push(x.join("git/config"));
            }
            if let Some(h) = &home {
                files.push(h.join(".gitconfig"));
            }
        }
    }
    files
        .into_iter()
        .filter(|f| f.is_absolute())
        .filter_map(|f| {
            let t = read_bounded(&f).ok()??;
            let base = f.parent().map(Path::to_path_buf)?;
            Some((t.into_bytes(), base))
        })
        .collect()
}

/// The patterns to protect under `root` (and under other roots) for its
/// repository's `core.hooksPath`, from `configs`: each configuration
/// file's contents before the run and the directory its relative includes
/// are read from.
pub fn find_in(root: &Path, roots: &[PathBuf], configs: Vec<(Vec<u8>, PathBuf)>) -> Found {
    let mut found = Found::default();
    let Some(worktree_root) = normal(root) else {
        return found;
    };
    // (text, directory its relative includes are read from, depth)
    let mut queue: Vec<(String, PathBuf, usize)> = configs
        .into_iter()
        .filter_map(|(c, base)| Some((String::from_utf8_lossy(&c).into_owned(), normal(&base)?, 0)))
        .collect();
    let mut hooks: Vec<String> = Vec::new();
    let mut files = 0usize;
    while let Some((text, base, depth)) = queue.pop() {
        for e in parse(&text) {
            let Some(v) = e.value.as_deref() else {
                continue;
            };
            if e.section == "core" && e.key == "hookspath" {
                hooks.push(v.to_string());
            } else if e.key == "path"
                && (e.section == "include" || e.section.starts_with("includeif."))
            {
                let Some(inc) = resolve(v, &base) else {
                    found.notes.push(format!(
                        "git configuration include `{v}` not followed (its path cannot be resolved): a core.hooksPath set there is not protected"
                    ));
                    continue;
                };
                // An included file inside a root is protected itself.
                // In another writable root: protected under that root.
                // As spelled and where it really is (a link can lead into
                // a root from outside it).
                let real = real_path(v, &base).filter(|r| *r != inc);
                for p in std::iter::once(&inc).chain(real.as_ref()) {
                    if let Some((r, rel)) = in_roots(p, roots)
                        && !rel.as_os_str().is_empty()
                    {
                        found.add(root, r, rel.to_string_lossy().into_owned());
                    }
                }
                if depth + 1 > MAX_DEPTH || files >= MAX_FILES {
                    found.notes.push(format!(
                        "git configuration include {} not followed (more than {MAX_DEPTH} levels or {MAX_FILES} files): a core.hooksPath set there is not protected",
                        inc.display()
                    ));
                    continue;
                }
                files += 1;
                match read_bounded(&inc) {
                    Ok(Some(t)) => {
                        let dir = inc.parent().map_or_else(|| base.clone(), Path::to_path_buf);
                        queue.push((t, dir, depth + 1));
                    }
                    Ok(None) => {}
                    Err(err) => found.notes.push(format!(
                        "git configuration include {} could not be read ({err}): a core.hooksPath set there is not protected",
                        inc.display()
                    )),
                }
            }
        }
    }
    // Relative to the working tree's root (where git runs hooks); and,
    // when it exists, where it really is: a link outside every root (at
    // the repository's top, above a root that is a subdirectory) can lead
    // into one (review 11, F10).
    let mut targets: Vec<PathBuf> = Vec::new();
    for h in hooks {
        let Some(abs) = resolve(&h, &worktree_root) else {
            continue;
        };
        if let Some(real) = real_path(&h, &worktree_root)
            && real != abs
        {
            targets.push(real);
        }
        targets.push(abs);
    }
    for abs in targets {
        let Some((r, rel)) = in_roots(&abs, roots) else {
            continue; // outside every writable root: the command cannot write it
        };
        // As spelled, and where it lands on the filesystem: a symlinked
        // directory on the way (`lnk/hooks`, `lnk -> scripts`) is
        // followed while it stays in the root; the symlinks themselves are
        // protected (one pointed elsewhere is a change) and the real
        // directories on the way recorded as ways.
        let mut dirs = vec![rel.clone()];
        let l = land(r, &rel);
        for p in &l.links {
            found.add(root, r, p.to_string_lossy().into_owned());
        }
        if l.outside {
            found.notes.push(format!(
                "core.hooksPath {} leads out of its writable root ({}) through a symlink: the symlinks inside the root are protected, not where they lead",
                abs.display(),
                r.display()
            ));
        } else {
            if l.real != rel {
                dirs.push(l.real.clone());
            }
            if !l.links.is_empty() {
                found
                    .ways
                    .extend(l.dirs.into_iter().map(|d| (r.to_path_buf(), d)));
            }
        }
        for rel in dirs {
            if rel.as_os_str().is_empty() {
                for h in HOOKS {
                    found.add(root, r, h.to_string());
                }
            } else {
                found.add(root, r, format!("{}/", rel.to_string_lossy()));
            }
        }
    }
    found.ways.sort();
    found.ways.dedup();
    found.protect.sort();
    found.protect.dedup();
    found.elsewhere.sort();
    found.elsewhere.dedup();
    found
}

impl Found {
    /// `pattern` under `r`: the repository's root's own list, or
    /// [`Found::elsewhere`].
    fn add(&mut self, root: &Path, r: &Path, pattern: String) {
        if r == root {
            self.protect.push(pattern);
        } else {
            self.elsewhere.push((r.to_path_buf(), pattern));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks_of(text: &str) -> Vec<Option<String>> {
        parse(text)
            .into_iter()
            .filter(|e| e.section == "core" && e.key == "hookspath")
            .map(|e| e.value)
            .collect()
    }

    #[test]
    fn hookspath_spellings_are_read() {
        assert_eq!(
            hooks_of("[core]\n\thooksPath = .husky/_\n"),
            [Some(".husky/_".into())]
        );
        assert_eq!(
            hooks_of("[CORE]\nHOOKSPATH=\"a b\" # c\n"),
            [Some("a b".into())]
        );
        assert_eq!(hooks_of("[core] hookspath = x\n"), [Some("x".into())]);
        assert_eq!(
            hooks_of("[core]\nhookspath = a\\\nb\n"),
            [Some("ab".into())]
        );
        assert_eq!(
            hooks_of("[core]\nhookspath = \"x\\\"y\"\n"),
            [Some("x\"y".into())]
        );
        assert_eq!(
            hooks_of("[core \"x\"]\nhookspath = no\n"),
            Vec::<Option<String>>::new()
        );
        assert_eq!(
            hooks_of("[user]\nhookspath = no\n; [core]\n"),
            Vec::<Option<String>>::new()
        );
        assert_eq!(hooks_of("[core]\nhookspath\n"), [None]);
        // Garbage does not panic.
        for t in [
            "[",
            "[core",
            "=",
            "[core]\n=x",
            "[\"]\n",
            "\\",
            "[core]\nhookspath=\"\\",
        ] {
            let _ = parse(t);
        }
    }

    /// What the parser reads as `core.hooksPath` is what `git config
    /// --get` reads (the last value), for many spellings.
    #[test]
    fn hookspath_reads_as_git_reads_it() {
        let Ok(v) = std::process::Command::new("git").arg("--version").output() else {
            return; // no git here
        };
        assert!(v.status.success());
        let cases = [
            "[core]\n\thooksPath = .husky/_\n",
            "[CORE]\nHOOKSPATH=\"a b\" # c\n",
            "[Core] HooksPath = x\n",
            "[core]\nhookspath = a\\\nb\n",
            "[core]\nhooksPath = \"to\\\nols/hooks\"\n",
            "[core]\nhooksPath = \"to\\\n ols\\\n/hooks\" ; tail\n",
            "[core]\nhookspath = \"x\\\"y\"\n",
            "[core]\nhooksPath = \"a;b#c\" ; comment\n",
            "[core]\nhooksPath = a\\tb\n",
            "[core]\n  hooksPath   =   spaced  out   # trailing\n",
            "[core]\nhooksPath = \"  lead\"\n",
            "[core]\nhookspath = first\nhookspath = second\n",
            "[core]\nhooksPath = a\\\n  b\n",
            "[core]\r\nhooksPath = crlf\r\n",
            "[core]\n# hooksPath = no \\\nhooksPath = yes\n",
            "[core]\nhooksPath = x # c \\\nhooksPath = y\n",
            "[core]\nhooksPath = x\\\\\n",
            "[core]\nhooksPath = mid\"dle\"quoted\n",
            "[core \"sub\"]\nhooksPath = no\n[core]\nhooksPath = yes\n",
        ];
        let d = tempfile::tempdir().expect("tmp");
        let f = d.path().join("config");
        for text in cases {
            std::fs::write(&f, text).expect("w");
            let out = std::process::Command::new("git")
                .args(["config", "--file"])
                .arg(&f)
                .args(["--get", "core.hookspath"])
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", d.path())
                .output()
                .expect("git");
            assert!(out.status.success(), "{text:?}: git refused it");
            let git = String::from_utf8(out.stdout).expect("utf8");
            let git = git.strip_suffix('\n').unwrap_or(&git);
            let ours = hooks_of(text).pop().flatten();
            assert_eq!(ours.as_deref(), Some(git), "{text:?}");
        }
    }

    #[test]
    fn hookspath_inside_the_root_is_protected_and_includes_followed() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        let roots = vec![root.clone()];
        let f = find(
            &root,
            &roots,
            Some(b"[core]\n\thooksPath = .husky/_\n".to_vec()),
            None,
        );
        assert_eq!(f.protect, [".husky/_/"]);
        let abs = format!("[core]\nhooksPath = {}/hooks/./x/..\n", root.display());
        let f = find(&root, &roots, Some(abs.into_bytes()), None);
        assert_eq!(f.protect, ["hooks/"]);
        // Outside the roots, or above them: nothing.
        for v in ["/elsewhere/hooks", "../up", "../../../../.."] {
            let f = find(
                &root,
                &roots,
                Some(format!("[core]\nhooksPath={v}\n").into_bytes()),
                None,
            );
            assert!(f.protect.is_empty(), "{v}: {:?}", f.protect);
        }
        // The root itself: the hook names.
        let f = find(
            &root,
            &roots,
            Some(b"[core]\nhooksPath = .\n".to_vec()),
            None,
        );
        assert!(f.protect.contains(&"pre-commit".to_string()));
        // config.worktree, and an include inside the root (protected too),
        // relative to `.git/`.
        std::fs::create_dir_all(root.join(".git")).expect("mk");
        std::fs::write(
            root.join("proj.gitconfig"),
            "[core]\nhooksPath = tools/hooks\n",
        )
        .expect("w");
        let f = find(
            &root,
            &roots,
            Some(b"[include]\npath = ../proj.gitconfig\n".to_vec()),
            Some(b"[core]\nhooksPath = wt-hooks\n".to_vec()),
        );
        assert_eq!(f.protect, ["proj.gitconfig", "tools/hooks/", "wt-hooks/"]);
        // An include that cannot be read leaves a note.
        std::fs::create_dir_all(root.join("dir.gitconfig")).expect("mk");
        let f = find(
            &root,
            &roots,
            Some(b"[includeIf \"gitdir:x\"]\npath = ../dir.gitconfig\n".to_vec()),
            None,
        );
        assert!(!f.notes.is_empty(), "{f:?}");
    }

    /// Review F: the global and system configuration, found as git finds
    /// them; a relative `core.hooksPath` there applies inside the
    /// repository's working tree.
    #[test]
    fn global_configuration_is_read_as_git_finds_it() {
        let d = tempfile::tempdir().expect("tmp");
        let home = d.path().join("home");
        let root = d.path().join("proj");
        std::fs::create_dir_all(home.join(".config/git")).expect("mk");
        std::fs::create_dir_all(&root).expect("mk");
        std::fs::write(home.join(".gitconfig"), "[core]\n\thooksPath = .githooks\n").expect("w");
        std::fs::write(
            home.join(".config/git/config"),
            format!("[core]\n\thooksPath = {}/abs-hooks\n", root.display()),
        )
        .expect("w");
        let sys = d.path().join("system");
        std::fs::write(&sys, "[core]\n\thooksPath = sys-hooks\n").expect("w");
        let env = |k: &str| match k {
            "HOME" => Some(home.clone().into_os_string()),
            "GIT_CONFIG_SYSTEM" => Some(sys.clone().into_os_string()),
            _ => None,
        };
        let configs = global_configs(&env);
        assert_eq!(configs.len(), 3, "{configs:?}");
        let f = find_in(&root, std::slice::from_ref(&root), configs);
        assert_eq!(f.protect, [".githooks/", "abs-hooks/", "sys-hooks/"]);
        // GIT_CONFIG_GLOBAL replaces both user files; NOSYSTEM drops the
        // system one.
        let env = |k: &str| match k {
            "HOME" => Some(home.clone().into_os_string()),
            "GIT_CONFIG_GLOBAL" => Some(sys.clone().into_os_string()),
            "GIT_CONFIG_NOSYSTEM" => Some("1".into()),
            _ => None,
        };
        assert_eq!(global_configs(&env).len(), 1);
    }
}
