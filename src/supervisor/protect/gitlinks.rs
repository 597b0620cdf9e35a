//! Submodules: the git repositories a superproject's `git status` enters
//! and runs git in, with their own configuration (`core.fsmonitor`,
//! hooks) in effect.
//!
//! Git recurses into every *populated* gitlink of the index (an entry of
//! mode `0o160000` whose working-tree directory holds a `.git`), whether
//! `.gitmodules` names it or not, and into their gitlinks in turn. So:
//!
//! - before a confined run, the submodules git knows ([`Before::take`]:
//!   `.gitmodules` `path =` values and the index's gitlinks, each
//!   submodule's own recursively) become extra protected paths: `P/.git`
//!   (a gitfile or a directory), and the files through which git finds
//!   its configuration and hooks in that git directory when it is a
//!   directory inside the root but outside the root's `.git` (which the
//!   profile protects already);
//! - after the run ([`Before::after`]), an index that changed is read
//!   again: a populated gitlink that was not known before and whose git
//!   directory is not inside the root's own `.git` (where the profile's
//!   `.git/modules/**` patterns undo a new `config` or `hooks/`) has its
//!   `P/.git` moved aside (`P/.git.quarantined-by-safe-exec`): unpopulated,
//!   git does not enter it. The index itself is never written.
//!
//! Everything read here is the command's to write: sizes and counts are
//! bounded, paths with `..`, `.`, `.git` or an absolute start are never
//! used as paths. Without a `.gitmodules` in a root, the snapshot costs a
//! failed `lstat` and one `stat` of the index (whose identity tells, after
//! the run, whether it must be read).

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Largest `.gitmodules` read.
pub const MAX_GITMODULES: u64 = 1024 * 1024;
/// Largest index read (git's own indexes of large monorepos are tens of
/// MiB; past this the index is not read, and the report says so).
pub const MAX_INDEX: u64 = 256 * 1024 * 1024;
/// Most entries an index may declare.
const MAX_ENTRIES: u32 = 16 * 1024 * 1024;
/// Longest path of an entry (Linux's `PATH_MAX`): a version 4 index
/// builds each path from the previous one, and without a bound a crafted
/// one grows them quadratically.
const MAX_PATH: usize = 4096;
/// Largest total of the gitlinks' paths kept from one index.
const MAX_GITLINK_BYTES: usize = 16 * 1024 * 1024;
/// Most submodules followed per root (all levels).
const MAX_SUBMODULES: usize = 1000;
/// Deepest nesting of submodules followed.
const MAX_NESTING: usize = 8;
/// Largest gitfile read (`gitdir: PATH`).
const MAX_GITFILE: u64 = 4096;
/// The name a new submodule's `.git` is moved to.
pub const QUARANTINE: &str = ".git.quarantined-by-safe-exec";

/// Why an index could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexError {
    /// Larger than [`MAX_INDEX`].
    TooLarge(u64),
    /// Not an index git writes (the reason).
    Malformed(String),
}

impl std::fmt::Display for IndexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IndexError::TooLarge(n) => write!(f, "{n} bytes, more than {MAX_INDEX}"),
            IndexError::Malformed(why) => write!(f, "not a git index: {why}"),
        }
    }
}

/// What an index says about submodules.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Index {
    /// The paths of the gitlinks (mode `0o160000`), as stored.
    pub gitlinks: Vec<Vec<u8>>,
    /// A split index's shared part (`sharedindex.<hex>`), when the index
    /// has a `link` extension.
    pub shared: Option<String>,
}

/// Reads git's index format (`Documentation/gitformat-index.txt`),
/// versions 2, 3 and 4, with SHA-1 or SHA-256 object names: the gitlinks
/// and the split index's shared file. Bounded by the input's length and
/// [`MAX_ENTRIES`].
pub fn parse_index(b: &[u8]) -> Result<Index, IndexError> {
    match parse_index_with(b, 20) {
        Ok(i) => Ok(i),
        Err(e1) => parse_index_with(b, 32).map_err(|_| e1),
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

fn bad(why: &str) -> IndexError {
    IndexError::Malformed(why.to_string())
}

fn parse_index_with(b: &[u8], hash: usize) -> Result<Index, IndexError> {
    if b.get(..4) != Some(b"DIRC") {
        return Err(bad("no DIRC signature"));
    }
    let version = be32(b, 4).ok_or_else(|| bad("short header"))?;
    if !(2..=4).contains(&version) {
        return Err(bad(&format!("version {version}")));
    }
    let count = be32(b, 8).ok_or_else(|| bad("short header"))?;
    if count > MAX_ENTRIES {
        return Err(bad(&format!("{count} entries")));
    }
    let mut out = Index::default();
    let mut at = 12usize;
    let mut prev: Vec<u8> = Vec::new();
    let mut gitlink_bytes = 0usize;
    for _ in 0..count {
        let start = at;
        let mode = be32(b, start + 24).ok_or_else(|| bad("short entry"))?;
        let fl = start + 40 + hash;
        let flags = b
            .get(fl..fl + 2)
            .map(|s| u16::from_be_bytes([s[0], s[1]]))
            .ok_or_else(|| bad("short entry"))?;
        let mut name_at = fl + 2;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return Err(bad("extended flags in version 2"));
            }
            name_at += 2;
        }
        // The entry's path: borrowed (a version 4 path is built in `prev`,
        // copied only for a gitlink, so a crafted index costs linear time).
        let path: &[u8] = if version == 4 {
            let (strip, used) = varint(b.get(name_at..).unwrap_or_default())
                .ok_or_else(|| bad("bad prefix length"))?;
            let strip = usize::try_from(strip).map_err(|_| bad("bad prefix length"))?;
            if strip > prev.len() {
                return Err(bad("prefix longer than the previous path"));
            }
            let s = name_at + used;
            let len = b
                .get(s..)
                .and_then(|r| r.iter().position(|c| *c == 0))
                .ok_or_else(|| bad("unterminated path"))?;
            prev.truncate(prev.len() - strip);
            prev.extend_from_slice(&b[s..s + len]);
            if prev.len() > MAX_PATH {
                return Err(bad("path longer than 4096 bytes"));
            }
            at = s + len + 1;
            &prev
        } else {
            let len = b
                .get(name_at..)
                .and_then(|r| r.iter().position(|c| *c == 0))
                .ok_or_else(|| bad("unterminated path"))?;
            // 1 to 8 NULs: the entry is a multiple of 8 bytes long.
            at = start + ((name_at - start + len + 8) & !7);
            if b.get(name_at + len..at)
                .is_none_or(|pad| pad.iter().any(|c| *c != 0))
            {
                return Err(bad("padding"));
            }
            &b[name_at..name_at + len]
        };
        // What git writes (the checks that also tell a SHA-256 index
        // from a SHA-1 one): a known mode, the name's length in the flags.
        if !matches!(mode, 0o100644 | 0o100755 | 0o120000 | 0o160000 | 0o040000) {
            return Err(bad(&format!("mode {mode:o}")));
        }
        if usize::from(flags & 0xfff) != path.len().min(0xfff) {
            return Err(bad("name length"));
        }
        if mode == 0o160000 {
            gitlink_bytes += path.len();
            if gitlink_bytes > MAX_GITLINK_BYTES {
                return Err(bad("gitlink paths longer than 16 MiB together"));
            }
            out.gitlinks.push(path.to_vec());
        }
    }
    // Extensions, then the trailing hash.
    loop {
        let left = b.len().checked_sub(at).ok_or_else(|| bad("short"))?;
        if left == hash {
            return Ok(out);
        }
        if left < 8 + hash {
            return Err(bad("trailing bytes"));
        }
        let sig = &b[at..at + 4];
        let size = be32(b, at + 4).ok_or_else(|| bad("short extension"))? as usize;
        let data = at + 8;
        let end = data
            .checked_add(size)
            .filter(|e| *e <= b.len() - hash)
            .ok_or_else(|| bad("extension past the end"))?;
        if sig == b"link" && size >= hash {
            let hex: String = b[data..data + hash]
                .iter()
                .map(|c| format!("{c:02x}"))
                .collect();
            out.shared = Some(format!("sharedindex.{hex}"));
        }
        at = end;
    }
}

/// Git's variable-length offset (`varint.c`): 7 bits a byte, each
/// continuation adding one before shifting.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut i = 0;
    let mut c = *b.first()?;
    let mut val = u64::from(c & 127);
    while c & 128 != 0 {
        i += 1;
        c = *b.get(i)?;
        val = val.checked_add(1)?;
        if val > (u64::MAX >> 7) {
            return None;
        }
        val = (val << 7) + u64::from(c & 127);
    }
    Some((val, i + 1))
}

/// The `path` values of the `[submodule "…"]` sections of a `.gitmodules`
/// (git's config syntax: keys case-insensitive, quoted values, `\`
/// escapes and continuations, `;`/`#` comments). Values are returned as
/// written, unchecked (see [`safe_rel`]).
pub fn gitmodules_paths(text: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut in_sub = false;
    let mut lines = text.split(|c| *c == b'\n').peekable();
    while let Some(line) = lines.next() {
        let t = trim(line);
        if t.first() == Some(&b'[') {
            let name: Vec<u8> = t[1..]
                .iter()
                .take_while(|c| !matches!(c, b']' | b' ' | b'\t' | b'"' | b'.'))
                .map(u8::to_ascii_lowercase)
                .collect();
            in_sub = name == b"submodule";
            // `[section] key = value` on the same line.
            let Some(close) = t.iter().position(|c| *c == b']') else {
                continue;
            };
            let rest = trim(&t[close + 1..]);
            if in_sub && let Some(v) = key_value(rest, &mut lines) {
                out.push(v);
            }
            continue;
        }
        if in_sub && let Some(v) = key_value(t, &mut lines) {
            out.push(v);
        }
    }
    out
}

fn trim(s: &[u8]) -> &[u8] {
    let a = s
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(s.len());
    let z = s
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(a, |z| z + 1);
    &s[a..z.max(a)]
}

/// `path = VALUE` (the value decoded as git does), else `None`.
fn key_value<'a>(
    t: &[u8],
    more: &mut std::iter::Peekable<impl Iterator<Item = &'a [u8]>>,
) -> Option<Vec<u8>> {
    let key_end = t
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'-'))
        .unwrap_or(t.len());
    if !t[..key_end].eq_ignore_ascii_case(b"path") {
        return None;
    }
    let rest = trim(&t[key_end..]);
    let rest = rest.strip_prefix(b"=")?;
    let mut out = Vec::new();
    let mut quoted = false;
    let mut line: Vec<u8> = rest.to_vec();
    // Spaces are kept only between non-space characters (git drops
    // leading and trailing unquoted whitespace).
    let mut pending_space = 0usize;
    loop {
        let mut i = 0;
        let mut continued = false;
        while i < line.len() {
            let c = line[i];
            match c {
                b'"' => {
                    quoted = !quoted;
                    out.extend(std::iter::repeat_n(b' ', pending_space));
                    pending_space = 0;
                }
                b';' | b'#' if !quoted => return Some(out),
                b'\\' => {
                    i += 1;
                    match line.get(i) {
                        None => {
                            continued = true;
                            break;
                        }
                        Some(e) => {
                            out.extend(std::iter::repeat_n(b' ', pending_space));
                            pending_space = 0;
                            out.push(match e {
                                b'n' => b'\n',
                                b't' => b'\t',
                                b'b' => 8,
                                other => *other,
                            });
                        }
                    }
                }
                b' ' | b'\t' | b'\r' if !quoted => {
                    if !out.is_empty() {
                        pending_space += 1;
                    }
                }
                _ => {
                    out.extend(std::iter::repeat_n(b' ', pending_space));
                    pending_space = 0;
                    out.push(c);
                }
            }
            i += 1;
        }
        if !continued {
            return Some(out);
        }
        line = more.next()?.to_vec();
    }
}

/// `p` as a path relative to its repository's working tree, when it is one
/// git could check out: not empty, not absolute, no `.`, `..` or empty
/// component, no `.git` component (in any case), no NUL.
pub fn safe_rel(p: &[u8]) -> Option<PathBuf> {
    if p.is_empty() || p[0] == b'/' || p.contains(&0) {
        return None;
    }
    let p = p.strip_suffix(b"/").unwrap_or(p);
    for c in p.split(|c| *c == b'/') {
        if c.is_empty() || c == b"." || c == b".." || c.eq_ignore_ascii_case(b".git") {
            return None;
        }
    }
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(p)))
}

/// The target of a gitfile's content (`gitdir: PATH`), as written.
pub fn gitfile_target(content: &[u8]) -> Option<PathBuf> {
    let t = trim(content);
    let rest = t.strip_prefix(b"gitdir:")?;
    let rest = trim(rest);
    if rest.is_empty() || rest.contains(&0) || rest.contains(&b'\n') {
        return None;
    }
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(rest)))
}

/// `base.join(target)` with `.` and `..` applied to the words (no symlink
/// is followed; a `..` above `/` stays at `/`).
fn lexical(base: &Path, target: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    let joined = if target.is_absolute() {
        target.to_path_buf()
    } else {
        base.join(target)
    };
    for c in joined.components() {
        match c {
            Component::RootDir => out.push("/"),
            Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
        }
    }
    out
}

/// At most `limit` bytes of a regular file, not following a symlink;
/// `Err` with the reason otherwise.
fn read_small(p: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(p)
        .map_err(|e| e.to_string())?;
    let m = f.metadata().map_err(|e| e.to_string())?;
    if !m.is_file() {
        return Err("not a regular file".into());
    }
    if m.len() > limit {
        return Err(format!("{} bytes, more than {limit}", m.len()));
    }
    let mut v = Vec::with_capacity(m.len() as usize);
    f.take(limit + 1)
        .read_to_end(&mut v)
        .map_err(|e| e.to_string())?;
    if v.len() as u64 > limit {
        return Err(format!("more than {limit} bytes"));
    }
    Ok(v)
}

/// The gitlinks of the index at `path` (and of its shared part, for a
/// split index). `Ok(None)`: there is no index.
fn read_index(path: &Path) -> Result<Option<Vec<Vec<u8>>>, String> {
    let b = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
        Ok(m) if m.len() > MAX_INDEX => {
            return Err(IndexError::TooLarge(m.len()).to_string());
        }
        Ok(_) => read_small(path, MAX_INDEX)?,
    };
    let idx = parse_index(&b).map_err(|e| e.to_string())?;
    let mut links = idx.gitlinks;
    if let Some(shared) = idx.shared {
        // The shared part's entries, unioned: an entry the split part
        // deletes still counts (more protection, never less).
        let sp = path.with_file_name(shared);
        let b = read_small(&sp, MAX_INDEX).map_err(|e| format!("{}: {e}", sp.display()))?;
        links.extend(parse_index(&b).map_err(|e| e.to_string())?.gitlinks);
    }
    Ok(Some(links))
}

/// What identifies one version of a file (`None`: missing).
type FileId = Option<(u64, u64, u64, i64, i64, i64, i64)>;

fn file_id(p: &Path) -> FileId {
    let m = fs::symlink_metadata(p).ok()?;
    Some((
        m.dev(),
        m.ino(),
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    ))
}

/// One index git reads for a working tree inside the root.
#[derive(Debug, Clone)]
struct Watched {
    /// The index file.
    index: PathBuf,
    /// Its working tree, relative to the root (empty: the root).
    worktree: PathBuf,
    /// Its identity before the run.
    id: FileId,
}

/// What a root's submodules were before the run.
#[derive(Debug, Default, Clone)]
pub struct Before {
    /// Extra protected patterns, relative to the root (literal paths, and
    /// `dir/` trees).
    pub protect: Vec<String>,
    /// Submodule working trees known before the run (relative to the
    /// root).
    known: BTreeSet<PathBuf>,
    /// The indexes to read again after the run when they changed.
    watched: Vec<Watched>,
    /// The root's git directory (`ROOT/.git` or a gitfile's target).
    root_gitdir: Option<PathBuf>,
    /// Notes for the report.
    pub notes: Vec<String>,
}

/// The git directory of the working tree `wt`: `wt/.git` when it is a
/// directory, a gitfile's target (lexical) when it is one.
fn gitdir_of(wt: &Path) -> Option<(PathBuf, bool)> {
    let dotgit = wt.join(".git");
    let m = fs::symlink_metadata(&dotgit).ok()?;
    if m.is_dir() {
        return Some((dotgit, true));
    }
    if !m.is_file() {
        return None;
    }
    let c = read_small(&dotgit, MAX_GITFILE).ok()?;
    Some((lexical(wt, &gitfile_target(&c)?), false))
}

impl Before {
    /// Reads, before the run, the submodules of the repository at `root`
    /// (when `root` is one): see the module's documentation.
    pub fn take(root: &Path) -> Before {
        let mut b = Before::default();
        // The common case first: `.git` a directory.
        let plain = root.join(".git");
        let index = plain.join("index");
        let (gitdir, id) = match file_id(&index) {
            Some(id) => (plain, Some(id)),
            None => match gitdir_of(root) {
                Some((gd, _)) => {
                    let id = file_id(&gd.join("index"));
                    (gd, id)
                }
                None => return b,
            },
        };
        b.root_gitdir = Some(gitdir.clone());
        b.watched.push(Watched {
            index: gitdir.join("index"),
            worktree: PathBuf::new(),
            id,
        });
        let gm = root.join(".gitmodules");
        if fs::symlink_metadata(&gm).is_err() {
            // No `.gitmodules`: submodules are not looked for (a gitlink
            // without one, an embedded repository `git add`ed, counts as
            // new if the index changes; see `after`).
            return b;
        }
        let mut queue: Vec<(PathBuf, PathBuf, usize)> = vec![(PathBuf::new(), gitdir, 0)];
        let mut seen = 0usize;
        while let Some((wt, gd, depth)) = queue.pop() {
            let mut subs: BTreeSet<PathBuf> = BTreeSet::new();
            match read_small(&join_rel(root, &wt).join(".gitmodules"), MAX_GITMODULES) {
                Ok(t) => subs.extend(gitmodules_paths(&t).iter().filter_map(|p| safe_rel(p))),
                Err(e) if wt.as_os_str().is_empty() => b.notes.push(format!(
                    "{}: not read for submodules ({e})",
                    root.join(".gitmodules").display()
                )),
                Err(_) => {}
            }
            let idx = gd.join("index");
            match read_index(&idx) {
                Ok(Some(links)) => subs.extend(links.iter().filter_map(|p| safe_rel(p))),
                Ok(None) => {}
                Err(e) => b
                    .notes
                    .push(format!("{}: not read for gitlinks ({e})", idx.display())),
            }
            if !wt.as_os_str().is_empty() {
                b.watched.push(Watched {
                    id: file_id(&idx),
                    index: idx,
                    worktree: wt.clone(),
                });
            }
            for s in subs {
                if seen >= MAX_SUBMODULES {
                    b.notes.push(format!(
                        "{}: more than {MAX_SUBMODULES} submodules; the others are not protected",
                        root.display()
                    ));
                    return b;
                }
                seen += 1;
                let rel = wt.join(&s);
                b.known.insert(rel.clone());
                b.protect_gitdir_of(root, &rel);
                if depth + 1 < MAX_NESTING
                    && let Some((sgd, _)) = gitdir_of(&root.join(&rel))
                {
                    queue.push((rel, sgd, depth + 1));
                }
            }
        }
        b
    }

    /// Protects `rel/.git` and, when the git directory it names is inside
    /// the root, the files through which git finds its configuration and
    /// hooks there.
    fn protect_gitdir_of(&mut self, root: &Path, rel: &Path) {
        let Some(dotgit) = rel.join(".git").to_str().map(str::to_string) else {
            self.notes.push(format!(
                "{}: a submodule path that is not UTF-8 is not protected",
                root.join(rel).display()
            ));
            return;
        };
        // A `*` or `?` in the name protects its matches as well: more,
        // never less (the literal name matches itself); a `**` component
        // would walk the tree: not followed.
        if dotgit.split('/').any(|c| c == "**") {
            self.notes.push(format!(
                "{}: a submodule path with a `**` component is not protected",
                root.join(rel).display()
            ));
            return;
        }
        self.protect.push(dotgit);
        let Some((gd, _)) = gitdir_of(&root.join(rel)) else {
            return;
        };
        // Inside the root's own git directory too: the profile protects
        // only `.git/modules/**` there (review F1).
        let Ok(inside) = gd.strip_prefix(root) else {
            return;
        };
        let Some(inside) = inside.to_str() else {
            return;
        };
        for f in ["config", "config.worktree", "commondir", "hooks/"] {
            self.protect.push(format!("{inside}/{f}"));
        }
    }

    /// After the run (and after the protected files were put back): every
    /// watched index that changed is read again, and a populated gitlink
    /// not known before has its `.git` moved aside, wherever its git
    /// directory is. One line per finding, for the report (empty: nothing
    /// to say).
    pub fn after(&self, root: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut seen = 0usize;
        for w in self.watched.iter().filter(|w| file_id(&w.index) != w.id) {
            let (index, worktree) = (&w.index, &w.worktree);
            let links = match read_index(index) {
                Ok(Some(l)) => l,
                Ok(None) => continue,
                Err(e) => {
                    out.push(format!(
                        "{} (changed by the command and could not be read for new submodules: {e})",
                        index.display()
                    ));
                    continue;
                }
            };
            for l in links {
                let Some(s) = safe_rel(&l) else {
                    out.push(format!(
                        "{} (holds a gitlink `{}` that is not a plain path; remove it with `git rm --cached`)",
                        index.display(),
                        String::from_utf8_lossy(&l)
                    ));
                    continue;
                };
                let rel = worktree.join(s);
                if self.known.contains(&rel) {
                    continue;
                }
                seen += 1;
                if seen > MAX_SUBMODULES {
                    out.push(format!(
                        "{} (more than {MAX_SUBMODULES} new gitlinks: not all were checked)",
                        index.display()
                    ));
                    return out;
                }
                match self.check_new(root, &rel) {
                    New::Harmless => {}
                    New::Moved(line) => out.push(line),
                }
            }
        }
        out
    }

    /// A gitlink at `rel` that was not known before: harmless when git
    /// would not enter it (no `.git`, an ancestor that is not a real
    /// directory); otherwise its `.git` is moved aside.
    fn check_new(&self, root: &Path, rel: &Path) -> New {
        let wt = root.join(rel);
        let dotgit = wt.join(".git");
        if !real_dirs(root, rel) {
            return New::Harmless;
        }
        if fs::symlink_metadata(&dotgit).is_err() {
            return New::Harmless;
        }
        // Wherever its gitfile points, even into the repository's own git
        // directory: only `.git/modules/**` is protected there, and a
        // target spelled through a symlink (`x/../../.git/modules/d`)
        // names one place on paper and another for git (review F1).
        New::Moved(match quarantine(root, rel) {
            Ok(to) => format!(
                "{} (a new submodule's git entry: moved to {}; git no longer enters it)",
                dotgit.display(),
                wt.join(to).display()
            ),
            Err(e) => format!(
                "{} (a new submodule's git entry: could not be moved aside: {e})",
                dotgit.display()
            ),
        })
    }
}

/// What a new gitlink was found to be.
enum New {
    /// Git does not enter it.
    Harmless,
    /// Its `.git` was moved aside (or could not be): the report's line.
    Moved(String),
}

/// `root.join(rel)` allocated once.
fn join_rel(root: &Path, rel: &Path) -> PathBuf {
    if rel.as_os_str().is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    }
}

/// Whether `root/rel` and every directory on the way are real
/// directories (no symlink).
fn real_dirs(root: &Path, rel: &Path) -> bool {
    let mut p = root.to_path_buf();
    for c in rel.components() {
        let Component::Normal(s) = c else {
            return false;
        };
        p.push(s);
        if !fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            return false;
        }
    }
    true
}

/// Moves `root/rel/.git` to `root/rel/QUARANTINE[-N]` through descriptors
/// opened from the root without following a symlink; the name it got.
fn quarantine(root: &Path, rel: &Path) -> std::io::Result<String> {
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::Mode;
    use std::os::fd::AsRawFd;
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mut dir = openat(nix::fcntl::AT_FDCWD, root, flags, Mode::empty())?;
    for c in rel.components() {
        let Component::Normal(s) = c else {
            return Err(std::io::Error::other("not a plain relative path"));
        };
        dir = openat(&dir, s, flags, Mode::empty())?;
    }
    for n in 0..100 {
        let to = if n == 0 {
            QUARANTINE.to_string()
        } else {
            format!("{QUARANTINE}-{n}")
        };
        let from = c".git";
        let to_c = std::ffi::CString::new(to.clone()).map_err(std::io::Error::other)?;
        // SAFETY: renameat2 with two descriptors this function owns and two
        // NUL-terminated names; RENAME_NOREPLACE never replaces an entry.
        let r = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                dir.as_raw_fd(),
                from.as_ptr(),
                dir.as_raw_fd(),
                to_c.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if r == 0 {
            return Ok(to);
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(e);
        }
    }
    Err(std::io::Error::other("no free name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real git, in a hermetic environment (own HOME, no system
    /// config); a missing git or a failure fails the test.
    fn git(dir: &Path, home: &Path, args: &[&str]) -> String {
        let out = super::tests_support::run_git(dir, home, args);
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A repository whose index holds ordinary files and gitlinks at
    /// awkward paths.
    fn repo(object_format: &str) -> (tempfile::TempDir, PathBuf, Vec<Vec<u8>>) {
        let t = tempfile::tempdir().expect("tmp");
        let home = t.path().join("home");
        fs::create_dir(&home).expect("mk");
        let r = t.path().join("r");
        fs::create_dir(&r).expect("mk");
        git(
            &r,
            &home,
            &["init", "-q", &format!("--object-format={object_format}")],
        );
        for f in ["a", "b/c d", "b/e\"f", "dir/x/y", "z\u{e9}"] {
            let p = r.join(f);
            fs::create_dir_all(p.parent().expect("parent")).expect("mk");
            fs::write(&p, f).expect("w");
        }
        git(&r, &home, &["add", "."]);
        let sha = git(&r, &home, &["hash-object", "-w", "a"])
            .trim()
            .to_string();
        let links = ["sub", "b/nested sub", "dir/x/\u{e9}t\u{e9}", "zz/q\"uote"];
        for l in links {
            git(
                &r,
                &home,
                &[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    &format!("160000,{sha},{l}"),
                ],
            );
        }
        let mut want: Vec<Vec<u8>> = links.iter().map(|l| l.as_bytes().to_vec()).collect();
        want.sort();
        (t, r, want)
    }

    fn sorted(mut v: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        v.sort();
        v
    }

    #[test]
    fn indexes_git_writes_in_every_version_and_hash() {
        for format in ["sha1", "sha256"] {
            let (t, r, want) = repo(format);
            let home = t.path().join("home");
            for v in ["2", "3", "4"] {
                if v == "3" {
                    // An intent-to-add entry has extended flags (version 3
                    // at least).
                    fs::write(r.join("later"), "x").expect("w");
                    git(&r, &home, &["add", "-N", "later"]);
                }
                git(&r, &home, &["update-index", "--index-version", v]);
                let b = fs::read(r.join(".git/index")).expect("r");
                assert_eq!(b[..4], *b"DIRC");
                assert_eq!(be32(&b, 4), Some(v.parse().expect("n")), "{format}");
                let idx = parse_index(&b).unwrap_or_else(|e| panic!("{format} v{v}: {e}"));
                assert_eq!(sorted(idx.gitlinks), want, "{format} v{v}");
                assert_eq!(idx.shared, None);
                // Every shorter prefix is refused, never read past.
                for cut in 0..b.len() {
                    assert!(parse_index(&b[..cut]).is_err(), "{format} v{v} cut {cut}");
                }
            }
            // A split index: the gitlinks are in the shared part.
            git(&r, &home, &["update-index", "--split-index"]);
            let b = fs::read(r.join(".git/index")).expect("r");
            let idx = parse_index(&b).expect("split");
            let shared = idx.shared.expect("a link extension");
            assert!(r.join(".git").join(&shared).is_file(), "{shared}");
            let links = read_index(&r.join(".git/index"))
                .expect("read")
                .expect("some");
            let mut links = sorted(links);
            links.dedup();
            assert_eq!(links, want, "{format} split");
        }
    }

    /// A version 4 index of `n` gitlinks, each path the previous one plus
    /// `grow` bytes (nothing stripped).
    fn growing_v4(n: u32, grow: usize) -> Vec<u8> {
        let mut b = b"DIRC\0\0\0\x04".to_vec();
        b.extend(n.to_be_bytes());
        let mut len = 0usize;
        for _ in 0..n {
            len += grow;
            b.extend([0u8; 24]);
            b.extend(0o160000u32.to_be_bytes());
            b.extend([0u8; 12 + 20]);
            b.extend(u16::try_from(len.min(0xfff)).unwrap().to_be_bytes());
            b.push(0); // strip nothing
            b.extend(std::iter::repeat_n(b'a', grow));
            b.push(0);
        }
        b.extend([0u8; 20]);
        b
    }

    /// A version 4 index of `n` gitlinks of 4,000 bytes, each replacing
    /// the previous path whole.
    fn replacing_v4(n: u32) -> Vec<u8> {
        let mut b = b"DIRC\0\0\0\x04".to_vec();
        b.extend(n.to_be_bytes());
        for i in 0..n {
            b.extend([0u8; 24]);
            b.extend(0o160000u32.to_be_bytes());
            b.extend([0u8; 12 + 20]);
            b.extend(4000u16.to_be_bytes());
            // git's varint of 4000 (or 0 for the first): 0x9e 0x20.
            if i == 0 {
                b.push(0);
            } else {
                b.extend([0x9e, 0x20]);
            }
            b.extend(std::iter::repeat_n(b'b' + (i % 2) as u8, 4000));
            b.push(0);
        }
        b.extend([0u8; 20]);
        b
    }

    /// Review F3: a crafted version 4 index whose paths grow by a byte an
    /// entry made the parse quadratic (20,000 gitlinks: 10 s and 400 MB).
    /// Paths past 4096 bytes and gitlinks past 16 MiB together are refused,
    /// and an index just inside the bounds is parsed whole.
    #[test]
    fn a_version_4_index_cannot_make_the_parse_quadratic() {
        let t = std::time::Instant::now();
        assert!(
            parse_index(&growing_v4(20_000, 1)).is_err(),
            "past 4096 bytes"
        );
        assert!(
            parse_index(&growing_v4(3, 4000)).is_err(),
            "one step past 4096"
        );
        // 4,096 gitlinks of 1..=4096 bytes: ~8 MiB of paths, kept.
        let ok = parse_index(&growing_v4(4096, 1)).expect("inside the bounds");
        assert_eq!(ok.gitlinks.len(), 4096);
        assert_eq!(ok.gitlinks.last().map(Vec::len), Some(4096));
        // Gitlinks of 4,000 bytes each, every path replacing the previous
        // one: 4,000 of them (16,000,000 bytes) are kept, 4,300 (past 16
        // MiB together) refused.
        let ok = parse_index(&replacing_v4(4000)).expect("16,000,000 bytes");
        assert_eq!(ok.gitlinks.len(), 4000);
        assert!(parse_index(&replacing_v4(4300)).is_err(), "past 16 MiB");
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn malformed_and_oversized_indexes_are_refused() {
        let mut h = b"DIRC\0\0\0\x02\0\0\0\0".to_vec();
        h.extend([0u8; 20]);
        assert_eq!(parse_index(&h), Ok(Index::default()), "an empty index");
        for bad_input in [
            &b""[..],
            b"DIRC",
            b"DIRX\0\0\0\x02\0\0\0\0",
            b"DIRC\0\0\0\x05\0\0\0\0",
            b"DIRC\0\0\0\x01\0\0\0\0",
            // 4 billion entries declared
            b"DIRC\0\0\0\x02\xff\xff\xff\xff",
            // one entry declared, none there
            b"DIRC\0\0\0\x02\0\0\0\x01",
        ] {
            let mut b = bad_input.to_vec();
            b.extend([0u8; 20]);
            assert!(parse_index(&b).is_err(), "{bad_input:?}");
        }
        // v4: a prefix to strip longer than the previous path.
        let mut b = b"DIRC\0\0\0\x04\0\0\0\x01".to_vec();
        b.extend([0u8; 24]);
        b.extend(0o160000u32.to_be_bytes());
        b.extend([0u8; 12 + 20]);
        b.extend([0u8, 3]); // flags: name length 3
        b.extend([5u8]); // strip 5 from ""
        b.extend(b"sub\0");
        b.extend([0u8; 20]);
        assert!(parse_index(&b).is_err());
        // The same with nothing to strip is one gitlink.
        let at = b.len() - 20 - 5;
        b[at] = 0;
        assert_eq!(
            parse_index(&b).map(|i| i.gitlinks),
            Ok(vec![b"sub".to_vec()])
        );
        // Random bytes after a valid header never panic.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..2000 {
            let mut b = b"DIRC\0\0\0".to_vec();
            b.push(2 + (next() % 3) as u8);
            b.extend(((next() % 8) as u32).to_be_bytes());
            let n = (next() % 300) as usize;
            b.extend((0..n).map(|_| next() as u8));
            let _ = parse_index(&b);
        }
        // Past the size bound the file is not read.
        let t = tempfile::tempdir().expect("tmp");
        let big = t.path().join("index");
        let f = fs::File::create(&big).expect("create");
        f.set_len(MAX_INDEX + 1).expect("len");
        let e = read_index(&big).expect_err("too large");
        assert!(e.contains("more than"), "{e}");
        assert_eq!(read_index(&t.path().join("none")), Ok(None));
    }

    #[test]
    fn gitmodules_paths_in_every_spelling() {
        let text = br#"# comment
[submodule "a"]
	path = plain
	url = ../a
[submodule "b"]
	Path=  "with space"  ; comment
[Submodule "c"]
	PATH = quoted\"inner # comment
[submodule "d"] path = same-line
[submodule "e"]
	path = con\
tinued
[core]
	path = not-a-submodule
[submodule.f]
	path = "old ; syntax"
[submodule "g"]
	pathx = no
	path
	path = ../escape
	path = /abs
	path = a/../b
	path = .git/x
	path = ok/.GIT/hooks
"#;
        let got: Vec<String> = gitmodules_paths(text)
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        assert_eq!(
            got,
            vec![
                "plain",
                "with space",
                "quoted\"inner",
                "same-line",
                "continued",
                "old ; syntax",
                "../escape",
                "/abs",
                "a/../b",
                ".git/x",
                "ok/.GIT/hooks",
            ]
        );
        let safe: Vec<PathBuf> = gitmodules_paths(text)
            .iter()
            .filter_map(|p| safe_rel(p))
            .collect();
        let want: Vec<PathBuf> = [
            "plain",
            "with space",
            "quoted\"inner",
            "same-line",
            "continued",
            "old ; syntax",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(safe, want);
        for bad in [
            &b""[..],
            b"/x",
            b"a//b",
            b"./a",
            b"a/.",
            b"..",
            b"a\0b",
            b".Git",
        ] {
            assert_eq!(safe_rel(bad), None, "{bad:?}");
        }
        assert_eq!(safe_rel(b"a/b/"), Some(PathBuf::from("a/b")));
        // A huge file of junk is read in one pass, without a panic.
        let junk: Vec<u8> = (0..2_000_000u32).map(|i| (i % 251) as u8).collect();
        let _ = gitmodules_paths(&junk);
    }

    #[test]
    fn gitfiles_and_lexical_targets() {
        assert_eq!(
            gitfile_target(b"gitdir: ../.git/modules/sub\n"),
            Some(PathBuf::from("../.git/modules/sub"))
        );
        assert_eq!(
            gitfile_target(b"gitdir:/tmp/x"),
            Some(PathBuf::from("/tmp/x"))
        );
        assert_eq!(gitfile_target(b"gitdir: \n"), None);
        assert_eq!(gitfile_target(b"ref: HEAD"), None);
        assert_eq!(
            lexical(Path::new("/r/sub"), Path::new("../.git/modules/sub")),
            PathBuf::from("/r/.git/modules/sub")
        );
        assert_eq!(
            lexical(Path::new("/r/sub"), Path::new("../../../../x")),
            PathBuf::from("/x")
        );
        assert_eq!(
            lexical(Path::new("/r/sub"), Path::new("/abs/./y")),
            PathBuf::from("/abs/y")
        );
    }

    #[test]
    fn varints_are_gits() {
        assert_eq!(varint(&[0]), Some((0, 1)));
        assert_eq!(varint(&[127]), Some((127, 1)));
        // 128 = (0 + 1) << 7 + 0
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x80]), None);
        assert_eq!(varint(&[0xff; 20]), None);
    }

    /// A superproject with a submodule (`sub`, its git directory in
    /// `.git/modules/sub`) which has one of its own (`sub/inner`), and an
    /// old-style one whose `.git` is a directory (`old`).
    fn superproject() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let t = tempfile::tempdir().expect("tmp");
        let base = fs::canonicalize(t.path()).expect("canon");
        let home = base.join("home");
        fs::create_dir(&home).expect("mk");
        let g = |d: &Path, a: &[&str]| git(d, &home, a);
        for r in ["src", "mid", "sup"] {
            fs::create_dir(base.join(r)).expect("mk");
            g(&base.join(r), &["init", "-q"]);
            fs::write(base.join(r).join("f"), r).expect("w");
            g(&base.join(r), &["add", "f"]);
            g(&base.join(r), &["commit", "-qm", r]);
        }
        let allow = ["-c", "protocol.file.allow=always"];
        let sub_add = |d: &Path, from: &str, to: &str| {
            let mut a: Vec<&str> = allow.to_vec();
            a.extend(["submodule", "add", "-q", from, to]);
            g(d, &a);
        };
        sub_add(&base.join("mid"), "../src", "inner");
        g(&base.join("mid"), &["commit", "-qm", "inner"]);
        let sup = base.join("sup");
        sub_add(&sup, "../mid", "sub");
        let mut a: Vec<&str> = allow.to_vec();
        a.extend(["submodule", "update", "--init", "--recursive", "-q"]);
        g(&sup, &a);
        // An old-style submodule: a clone whose `.git` is a directory.
        g(&base, &["clone", "-q", "src", "sup/old"]);
        g(&sup, &["add", "old"]);
        fs::write(
            sup.join(".gitmodules"),
            fs::read_to_string(sup.join(".gitmodules")).expect("r")
                + "[submodule \"old\"]\n\tpath = old\n\turl = ../src\n",
        )
        .expect("w");
        g(&sup, &["add", ".gitmodules"]);
        g(&sup, &["commit", "-qm", "subs"]);
        (t, sup, home)
    }

    #[test]
    fn existing_submodules_are_protected_at_every_level() {
        let (_t, sup, _home) = superproject();
        let b = Before::take(&sup);
        let mut p = b.protect.clone();
        p.sort();
        assert_eq!(
            p,
            vec![
                // Their git directories inside the superproject's own are
                // protected by name too (review F1: the profile's patterns
                // cover `.git/modules/**`, a gitfile may name elsewhere).
                ".git/modules/sub/commondir",
                ".git/modules/sub/config",
                ".git/modules/sub/config.worktree",
                ".git/modules/sub/hooks/",
                ".git/modules/sub/modules/inner/commondir",
                ".git/modules/sub/modules/inner/config",
                ".git/modules/sub/modules/inner/config.worktree",
                ".git/modules/sub/modules/inner/hooks/",
                "old/.git",
                "old/.git/commondir",
                "old/.git/config",
                "old/.git/config.worktree",
                "old/.git/hooks/",
                "sub/.git",
                "sub/inner/.git",
            ],
            "{:?}",
            b.notes
        );
        assert!(b.notes.is_empty(), "{:?}", b.notes);
        assert_eq!(
            b.known.iter().collect::<Vec<_>>(),
            vec![Path::new("old"), Path::new("sub"), Path::new("sub/inner")]
        );
        // Nothing changed: nothing to say.
        assert!(b.after(&sup).is_empty());
    }

    #[test]
    fn without_gitmodules_only_the_index_is_watched() {
        let (_t, sup, home) = superproject();
        git(&sup, &home, &["rm", "-q", "--cached", ".gitmodules"]);
        fs::remove_file(sup.join(".gitmodules")).expect("rm");
        let b = Before::take(&sup);
        assert!(b.protect.is_empty());
        assert_eq!(b.watched.len(), 1);
        // Not a repository: nothing at all.
        let t = tempfile::tempdir().expect("tmp");
        let b = Before::take(t.path());
        assert!(b.watched.is_empty() && b.protect.is_empty());
    }
}

/// The attacks end to end against the snapshot with the default profile's
/// patterns and the real git: each one makes the superproject's next
/// `git status` run a submodule's `core.fsmonitor` (shown before the
/// restore: the canary appears), and after the restore it does not.
#[cfg(test)]
mod attacks {
    use super::super::Snapshot;
    use super::tests_support::*;
    use super::*;

    /// `cp -a FROM TO` (a git directory copied whole).
    fn copy_tree(from: &Path, to: &Path) {
        if let Some(p) = to.parent() {
            fs::create_dir_all(p).expect("mk");
        }
        let ok = std::process::Command::new("cp")
            .arg("-a")
            .arg(from)
            .arg(to)
            .status()
            .expect("cp");
        assert!(ok.success(), "cp -a {} {}", from.display(), to.display());
    }

    #[test]
    fn an_existing_submodules_gitfile_redirected_is_put_back() {
        let w = World::new();
        let pats = w.patterns();
        let snap = Snapshot::take(std::slice::from_ref(&w.sup), &pats);
        assert!(snap.refused.is_empty(), "{:?}", snap.refused);
        let evil = w.evil_gitdir();
        fs::write(
            w.sup.join("sub/.git"),
            format!("gitdir: {}\n", evil.display()),
        )
        .expect("w");
        assert!(w.status_runs_canary(), "the attack itself (control)");
        let out = snap.restore(std::slice::from_ref(&w.sup), &pats);
        assert_eq!(
            out,
            vec![format!("{} (restored)", w.sup.join("sub/.git").display())]
        );
        assert!(!w.status_runs_canary());
        assert_eq!(
            fs::read_to_string(w.sup.join("sub/.git")).expect("r"),
            "gitdir: ../.git/modules/sub\n"
        );
    }

    #[test]
    fn a_nested_submodules_gitfile_and_an_old_style_config_are_put_back() {
        let w = World::new();
        let pats = w.patterns();
        let snap = Snapshot::take(std::slice::from_ref(&w.sup), &pats);
        let evil = w.evil_gitdir();
        fs::write(
            w.sup.join("sub/inner/.git"),
            format!("gitdir: {}\n", evil.display()),
        )
        .expect("w");
        assert!(w.status_runs_canary(), "control: nested");
        let out = snap.restore(std::slice::from_ref(&w.sup), &pats);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(!w.status_runs_canary());
        // Old style: `old/.git` is a directory; its config gets an
        // fsmonitor.
        w.git(&w.sup.join("old"), &["config", "core.fsmonitor", &w.hook()]);
        assert!(w.status_runs_canary(), "control: old style");
        let out = snap.restore(std::slice::from_ref(&w.sup), &pats);
        assert_eq!(
            out,
            vec![format!(
                "{} (restored)",
                w.sup.join("old/.git/config").display()
            )]
        );
        assert!(!w.status_runs_canary());
    }

    #[test]
    fn new_gitlinks_git_enters_are_moved_aside() {
        let w = World::new();
        let pats = w.patterns();
        let sha = w.head(&w.sup.join("sub"));
        let evil = w.evil_gitdir();
        // Each way to register a repository the command controls.
        type Attack<'a> = Box<dyn Fn(&World) + 'a>;
        let cases: Vec<(&str, Attack)> = vec![
            (
                "update-index --cacheinfo and a gitfile outside",
                Box::new(|w: &World| {
                    w.plant_gitlink(&w.sup, &sha, "n1", &format!("gitdir: {}\n", evil.display()));
                }),
            ),
            (
                "git add of an embedded repository",
                Box::new(|w: &World| {
                    let n = w.sup.join("n2");
                    fs::create_dir(&n).expect("mk");
                    w.git(&n, &["init", "-q"]);
                    fs::write(n.join("f"), "f").expect("w");
                    w.git(&n, &["add", "f"]);
                    w.git(&n, &["commit", "-qm", "f"]);
                    w.git(&n, &["config", "core.fsmonitor", &w.hook()]);
                    w.git(&w.sup, &["add", "n2"]);
                }),
            ),
            (
                "a gitfile into .git/modules through a symlink",
                Box::new(|w: &World| {
                    w.plant_gitlink(&w.sup, &sha, "n3", "gitdir: ../.git/modules/n3\n");
                    std::os::unix::fs::symlink(&evil, w.sup.join(".git/modules/n3")).expect("ln");
                }),
            ),
            (
                // Review F1: a git directory inside the repository's own,
                // outside `.git/modules`, was taken as a usual submodule.
                "a gitfile into .git/evil",
                Box::new(|w: &World| {
                    copy_tree(&evil, &w.sup.join(".git/evil"));
                    w.plant_gitlink(&w.sup, &sha, "n5", "gitdir: ../.git/evil\n");
                }),
            ),
            (
                // Review F1b: `x/../../.git/modules/decoy` names the
                // repository's own on paper; git follows the symlink `x`
                // first and lands in a copy of the evil one.
                "a gitfile through a symlink and ..",
                Box::new(|w: &World| {
                    let away = w.base.join("away");
                    fs::create_dir_all(away.join("b/c")).expect("mk");
                    copy_tree(&evil, &away.join(".git/modules/decoy"));
                    fs::create_dir_all(w.sup.join(".git/modules/decoy")).expect("mk");
                    w.plant_gitlink(&w.sup, &sha, "n6", "gitdir: x/../../.git/modules/decoy\n");
                    std::os::unix::fs::symlink(away.join("b/c"), w.sup.join("n6/x")).expect("ln");
                }),
            ),
            (
                "a new gitlink inside the existing submodule",
                Box::new(|w: &World| {
                    w.plant_gitlink(
                        &w.sup.join("sub"),
                        &sha,
                        "n4",
                        &format!("gitdir: {}\n", evil.display()),
                    );
                }),
            ),
        ];
        for (name, attack) in cases {
            let snap = Snapshot::take(std::slice::from_ref(&w.sup), &pats);
            attack(&w);
            assert!(w.status_runs_canary(), "control: {name}");
            let out = snap.restore(std::slice::from_ref(&w.sup), &pats);
            assert!(!w.status_runs_canary(), "{name}: {out:?}");
            assert!(
                out.iter()
                    .any(|l| l.contains("moved to") && l.contains(QUARANTINE)),
                "{name}: {out:?}"
            );
        }
    }

    #[test]
    fn ordinary_work_with_submodules_is_not_reported() {
        let w = World::new();
        let pats = w.patterns();
        let snap = Snapshot::take(std::slice::from_ref(&w.sup), &pats);
        fs::write(w.sup.join("f"), "changed").expect("w");
        fs::write(w.sup.join("new"), "new").expect("w");
        w.git(&w.sup, &["add", "f", "new"]);
        w.git(&w.sup, &["commit", "-qm", "work"]);
        // The submodule moved to another commit and checked out again.
        let sub = w.sup.join("sub");
        fs::write(sub.join("g"), "g").expect("w");
        w.git(&sub, &["add", "g"]);
        w.git(&sub, &["commit", "-qm", "g"]);
        w.git(&w.sup, &["add", "sub"]);
        w.git(&w.sup, &["commit", "-qm", "bump"]);
        w.git(&sub, &["checkout", "-q", "HEAD~1"]);
        w.git(
            &w.sup,
            &[
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "update",
                "--recursive",
                "-q",
            ],
        );
        w.git(&w.sup, &["status"]);
        assert_eq!(
            snap.restore(std::slice::from_ref(&w.sup), &pats),
            Vec::<String>::new()
        );
    }
}

/// The world of the attack tests: a superproject, its submodules, a
/// canary, the real git in a hermetic environment.
#[cfg(test)]
pub(super) mod tests_support {
    use super::*;
    use std::process::Command;

    /// The real git in `dir`, in a hermetic environment (HOME `home`, no
    /// system config, a fixed identity); a missing git fails the test.
    pub fn run_git(dir: &Path, home: &Path, args: &[&str]) -> std::process::Output {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .expect("git must be installed for these tests")
    }

    pub struct World {
        _t: tempfile::TempDir,
        pub base: PathBuf,
        pub home: PathBuf,
        pub sup: PathBuf,
    }

    impl World {
        /// `sup` with `sub` (gitfile into `.git/modules/sub`, which has
        /// `inner` of its own) and `old` (an old-style submodule: `.git` a
        /// directory).
        pub fn new() -> World {
            let t = tempfile::tempdir().expect("tmp");
            let base = fs::canonicalize(t.path()).expect("canon");
            let home = base.join("home");
            fs::create_dir(&home).expect("mk");
            let w = World {
                _t: t,
                sup: base.join("sup"),
                base,
                home,
            };
            for r in ["src", "mid", "sup"] {
                let d = w.base.join(r);
                fs::create_dir(&d).expect("mk");
                w.git(&d, &["init", "-q"]);
                fs::write(d.join("f"), r).expect("w");
                w.git(&d, &["add", "f"]);
                w.git(&d, &["commit", "-qm", r]);
            }
            let allow = ["-c", "protocol.file.allow=always"];
            let add = |d: &Path, from: &str, to: &str| {
                let mut a: Vec<&str> = allow.to_vec();
                a.extend(["submodule", "add", "-q", from, to]);
                w.git(d, &a);
            };
            add(&w.base.join("mid"), "../src", "inner");
            w.git(&w.base.join("mid"), &["commit", "-qm", "inner"]);
            add(&w.sup, "../mid", "sub");
            let mut a: Vec<&str> = allow.to_vec();
            a.extend(["submodule", "update", "--init", "--recursive", "-q"]);
            w.git(&w.sup, &a);
            w.git(&w.base, &["clone", "-q", "src", "sup/old"]);
            w.git(&w.sup, &["add", "old"]);
            let gm = fs::read_to_string(w.sup.join(".gitmodules")).expect("r");
            fs::write(
                w.sup.join(".gitmodules"),
                gm + "[submodule \"old\"]\n\tpath = old\n\turl = ../src\n",
            )
            .expect("w");
            w.git(&w.sup, &["add", ".gitmodules"]);
            w.git(&w.sup, &["commit", "-qm", "subs"]);
            w
        }

        /// The default profile's protected patterns.
        pub fn patterns(&self) -> Vec<String> {
            let doc: toml::Value =
                toml::from_str(include_str!("../../../profiles/default.toml")).expect("toml");
            doc["paths"]["protected"]
                .as_array()
                .expect("list")
                .iter()
                .map(|v| v.as_str().expect("str").to_string())
                .collect()
        }

        pub fn canary(&self) -> PathBuf {
            self.base.join("canary")
        }

        /// An fsmonitor command that leaves the canary.
        pub fn hook(&self) -> String {
            format!("touch {}; false", self.canary().display())
        }

        /// A git directory outside the root whose config runs the hook.
        pub fn evil_gitdir(&self) -> PathBuf {
            let e = self.base.join("evil");
            if !e.exists() {
                fs::create_dir(&e).expect("mk");
                self.git(&e, &["init", "-q"]);
                fs::write(e.join("e"), "e").expect("w");
                self.git(&e, &["add", "e"]);
                self.git(&e, &["commit", "-qm", "e"]);
                self.git(&e, &["config", "core.fsmonitor", &self.hook()]);
            }
            e.join(".git")
        }

        /// Registers a gitlink `name` at commit `sha` in the repository
        /// `repo` (`git update-index --add --cacheinfo 160000,SHA,NAME`),
        /// as an attacking command would.
        pub fn register_gitlink(&self, repo: &Path, sha: &str, name: &str) {
            self.git(
                repo,
                &[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    &format!("160000,{sha},{name}"),
                ],
            );
        }

        /// [`World::register_gitlink`], then the gitlink's directory with
        /// a gitfile `.git` holding `gitfile`: a submodule the attacking
        /// command planted.
        pub fn plant_gitlink(&self, repo: &Path, sha: &str, name: &str, gitfile: &str) {
            self.register_gitlink(repo, sha, name);
            fs::create_dir(repo.join(name)).expect("mk");
            fs::write(repo.join(name).join(".git"), gitfile).expect("w");
        }

        pub fn head(&self, d: &Path) -> String {
            self.git(d, &["rev-parse", "HEAD"]).trim().to_string()
        }

        /// Whether the superproject's `git status` runs the hook.
        pub fn status_runs_canary(&self) -> bool {
            let _ = fs::remove_file(self.canary());
            let _ = self.run(&self.sup, &["status"]);
            let ran = self.canary().exists();
            let _ = fs::remove_file(self.canary());
            ran
        }

        fn run(&self, dir: &Path, args: &[&str]) -> std::process::Output {
            run_git(dir, &self.home, args)
        }

        /// Runs git; a failure fails the test.
        pub fn git(&self, dir: &Path, args: &[&str]) -> String {
            let out = self.run(dir, args);
            assert!(
                out.status.success(),
                "git {args:?} in {}: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
    }
}
