//! Protected files inside the writable roots (rows X1-X3): snapshot before
//! the run, compare after the whole tree has exited, restore, report.
//!
//! Patterns are relative to each writable root: `a/b` one path, `a/` a
//! directory tree, `*` within one component, `**` any number of
//! directories. `**/site-packages/*.pth` is found through the venvs'
//! `pyvenv.cfg` (the root itself and two levels below it), never by walking
//! the tree; other `**` patterns are walked with a bound (depth 6, 4000
//! directories, skipping node_modules, .git and target) and the bound is
//! reported when hit.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Component, Path, PathBuf};

/// Most bytes of protected content kept in memory per run.
const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Most entries below one protected directory tree.
const MAX_TREE: usize = 10_000;

/// What one path was.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Missing,
    File {
        content: Vec<u8>,
        mode: u32,
    },
    Symlink(PathBuf),
    Dir {
        mode: u32,
    },
    /// An ancestor inside the root is not a real directory (a symlink
    /// planted to redirect the path), or the file was too large to keep.
    Tampered,
    TooLarge,
}

/// The protected set of every root at one moment.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Each path's root (the one it was found under: a path under two
    /// nested roots, a project in TMPDIR, is found under both and kept
    /// with the last), its path relative to that root, and its state.
    entries: BTreeMap<PathBuf, (PathBuf, PathBuf, State)>,
    /// Bounds that were hit (reported; those parts are not protected).
    pub notes: Vec<String>,
    /// venvs that existed before the run.
    venvs: BTreeSet<PathBuf>,
}

/// Whether `rel` (relative to a root) matches `pattern`.
pub fn matches(pattern: &str, rel: &Path) -> bool {
    let tree = pattern.ends_with('/');
    let pat: Vec<&str> = pattern
        .trim_end_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let comps: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let comps: Vec<&str> = comps.iter().map(String::as_str).collect();
    match_parts(&pat, &comps, tree)
}

fn match_parts(pat: &[&str], comps: &[&str], tree: bool) -> bool {
    match pat.split_first() {
        None => comps.is_empty() || tree,
        Some((&"**", rest)) => (0..=comps.len()).any(|i| match_parts(rest, &comps[i..], tree)),
        Some((p, rest)) => match comps.split_first() {
            Some((c, crest)) => glob(p, c) && match_parts(rest, crest, tree),
            None => false,
        },
    }
}

/// `*` and `?` within one component.
fn glob(p: &str, s: &str) -> bool {
    let (p, s): (Vec<char>, Vec<char>) = (p.chars().collect(), s.chars().collect());
    fn go(p: &[char], s: &[char]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some(('*', rest)) => (0..=s.len()).any(|i| go(rest, &s[i..])),
            Some(('?', rest)) => !s.is_empty() && go(rest, &s[1..]),
            Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    go(&p, &s)
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?'])
}

/// What one pass over the roots (the snapshot before the run, or the
/// comparison after it) learnt about the filesystem: each path is looked at
/// once per pass. Nothing in the roots is changed while a pass runs (the
/// command has not started, or the whole tree has exited and restoring
/// starts after the comparison), so an answer stays true for the pass.
///
/// Both maps are keyed by the path's bytes, not by `Path` (whose hash and
/// equality go component by component, most of a pass's time): two
/// spellings of one path (`a//b`, `a/b/`) are then two keys, which costs
/// at most a second syscall, never a wrong answer.
#[derive(Default)]
struct Probe {
    /// `lstat` of each path asked about (`None`: missing or unreadable).
    meta: HashMap<OsString, Option<fs::Metadata>>,
    /// Directories listed in this pass: each entry's name and whether it
    /// is a directory (`d_type`, not following symlinks).
    listed: HashMap<OsString, Vec<(OsString, bool)>>,
}

/// A directory this small (one block on ext4) is listed in one `getdents64`
/// call, cheaper than probing a dozen names in it one by one.
const SMALL_DIR: u64 = 4096;

impl Probe {
    /// `lstat(p)`, answered without a syscall when this pass already knows:
    /// `p` itself, a listed parent without `p`'s name, or a parent that is
    /// missing or neither a directory nor a symlink.
    fn lstat(&mut self, p: &Path) -> Option<fs::Metadata> {
        if let Some(m) = self.meta.get(p.as_os_str()) {
            return m.clone();
        }
        let known_missing = match (p.parent(), p.file_name()) {
            (Some(parent), Some(name)) => {
                self.listed
                    .get(parent.as_os_str())
                    .is_some_and(|es| !es.iter().any(|(n, _)| n == name))
                    || self.meta.get(parent.as_os_str()).is_some_and(|m| {
                        m.as_ref()
                            .is_none_or(|m| !m.is_dir() && !m.file_type().is_symlink())
                    })
            }
            _ => false,
        };
        let m = if known_missing {
            None
        } else {
            fs::symlink_metadata(p).ok()
        };
        self.meta.insert(p.as_os_str().to_os_string(), m.clone());
        m
    }

    /// A directory, not a symlink.
    fn is_real_dir(&mut self, p: &Path) -> bool {
        self.lstat(p).is_some_and(|m| m.is_dir())
    }

    /// The entries of `dir` (name, is a directory), listed once per pass.
    fn list(&mut self, dir: &Path) -> Option<&[(OsString, bool)]> {
        if !self.listed.contains_key(dir.as_os_str()) {
            let rd = fs::read_dir(dir).ok()?;
            let es = rd
                .flatten()
                .map(|e| (e.file_name(), e.file_type().is_ok_and(|t| t.is_dir())))
                .collect();
            self.listed.insert(dir.as_os_str().to_os_string(), es);
        }
        self.listed.get(dir.as_os_str()).map(Vec::as_slice)
    }

    /// Lists `root` when it is small, so that the protected names that are
    /// not there need no probe each.
    fn list_if_small(&mut self, root: &Path) {
        if self
            .lstat(root)
            .is_some_and(|m| m.is_dir() && m.size() <= SMALL_DIR)
        {
            let _ = self.list(root);
        }
    }

    /// Whether `dir` (a real directory) has no subdirectory, known from its
    /// link count alone: 2 (`.` and the entry in its parent) on a
    /// filesystem that keeps a directory's link count as 2 + its
    /// subdirectories. Others (btrfs, overlayfs' merged directories, FUSE,
    /// network filesystems) report 1 or anything: there the answer is "not
    /// known" and the directory is listed.
    fn has_no_subdirs(&mut self, dir: &Path) -> bool {
        use nix::sys::statfs::{EXT4_SUPER_MAGIC, TMPFS_MAGIC, statfs};
        if !self
            .lstat(dir)
            .is_some_and(|m| m.is_dir() && m.nlink() == 2)
        {
            return false;
        }
        statfs(dir).is_ok_and(|f| {
            let t = f.filesystem_type();
            t == EXT4_SUPER_MAGIC || t == TMPFS_MAGIC || t == XFS_SUPER_MAGIC
        })
    }
}

/// XFS's magic number (`XFSB`): nix names it for glibc targets only.
const XFS_SUPER_MAGIC: nix::sys::statfs::FsType = nix::sys::statfs::FsType(0x5846_5342);

/// Directories inside `root` that are not symlinks, by relative path.
fn is_real_dir(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// The ancestors of `root/rel` below `root`, outermost first (`root/a`,
/// `root/a/b` for `rel` = `a/b/c`).
fn ancestors_below<'a>(root: &Path, rel: &'a Path) -> impl Iterator<Item = PathBuf> + 'a {
    let comps: Vec<_> = rel.components().collect();
    let parents = comps.len().saturating_sub(1);
    let mut cur = root.to_path_buf();
    comps.into_iter().take(parents).map(move |c| {
        cur.push(c);
        cur.clone()
    })
}

fn ancestors_real(probe: &mut Probe, root: &Path, rel: &Path) -> bool {
    for cur in ancestors_below(root, rel) {
        match probe.lstat(&cur) {
            Some(m) if m.is_dir() => {}
            Some(_) => return false,
            None => return true, // missing ancestor: the path is missing
        }
    }
    true
}

const SKIP: [&str; 3] = ["node_modules", ".git", "target"];

/// Expands one pattern under `root` to the relative paths that exist now
/// (plus the literal path for a pattern without globs). `venvs`: when
/// given, only these venvs (absolute paths) are looked into, so a venv the
/// command itself creates (`python -m venv .venv`) is its own.
fn expand(
    probe: &mut Probe,
    root: &Path,
    pattern: &str,
    notes: &mut Vec<String>,
    venvs: &mut BTreeSet<PathBuf>,
    only_known: bool,
) -> Vec<PathBuf> {
    let parts: Vec<&str> = pattern
        .trim_end_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    if parts.is_empty() {
        return Vec::new();
    }
    if pattern.contains("site-packages") && parts.first() == Some(&"**") {
        // venvs: pyvenv.cfg at the root or up to two levels below.
        let mut out = Vec::new();
        let bases = if only_known {
            // After the run only the venvs of the snapshot count: look at
            // them directly instead of listing the root again (a TMPDIR of
            // 2,000 entries costs ~1 ms per listing). A base that is no
            // longer a real directory at every level is skipped, as the
            // listing would have skipped it.
            venvs
                .iter()
                .filter_map(|v| v.strip_prefix(root).ok())
                .filter(|b| {
                    b.components().count() <= 2
                        && !b
                            .components()
                            .any(|c| SKIP.iter().any(|s| c.as_os_str() == *s))
                        && b.ancestors()
                            .filter(|a| !a.as_os_str().is_empty())
                            .all(|a| probe.is_real_dir(&root.join(a)))
                })
                .map(Path::to_path_buf)
                .collect::<Vec<_>>()
        } else {
            // The root, then one and two levels below it, each directory
            // listed once.
            let mut bases = vec![PathBuf::new()];
            let mut frontier = vec![PathBuf::new()];
            let mut seen = 0usize;
            'levels: for _ in 0..2 {
                let mut next = Vec::new();
                for b in &frontier {
                    let dir = root.join(b);
                    // No subdirectory (link count 2): nothing to list. A
                    // TMPDIR of 2,000 files costs one statx and one statfs
                    // instead of a listing that grows with it.
                    if probe.has_no_subdirs(&dir) {
                        continue;
                    }
                    if let Some(es) = probe.list(&dir) {
                        for (name, is_dir) in es {
                            seen += 1;
                            if seen > 4000 {
                                // Bounded: a huge TMPDIR must not make every
                                // run slow. Said, not silently skipped.
                                notes.push(format!(
                                    "protected pattern {pattern}: venv search under {} stopped after 4000 entries",
                                    root.display()
                                ));
                                bases.extend(next.iter().cloned());
                                break 'levels;
                            }
                            if SKIP.iter().any(|s| name == *s) {
                                continue;
                            }
                            if *is_dir {
                                next.push(b.join(name));
                            }
                        }
                    }
                }
                bases.extend(next.iter().cloned());
                frontier = next;
            }
            bases
        };
        for b in bases {
            if !root.join(&b).join("pyvenv.cfg").is_file() {
                continue;
            }
            let abs = root.join(&b);
            if only_known && !venvs.contains(&abs) {
                continue;
            }
            venvs.insert(abs);
            for lib in ["lib", "lib64"] {
                let libdir = root.join(&b).join(lib);
                if !probe.is_real_dir(&libdir) {
                    continue; // lib64 -> lib
                }
                let Ok(rd) = fs::read_dir(&libdir) else {
                    continue;
                };
                for py in rd.flatten() {
                    let sp = Path::new(lib).join(py.file_name()).join("site-packages");
                    let Ok(files) = fs::read_dir(root.join(&b).join(&sp)) else {
                        continue;
                    };
                    for f in files.flatten() {
                        let rel = b.join(&sp).join(f.file_name());
                        if matches(pattern, &rel) {
                            out.push(rel);
                        }
                    }
                }
            }
        }
        return out;
    }
    let mut out = Vec::new();
    let mut visited = 0usize;
    walk(
        probe,
        root,
        PathBuf::new(),
        &parts,
        &mut out,
        &mut visited,
        0,
        notes,
        pattern,
    );
    if !parts.iter().any(|p| has_glob(p)) {
        let lit: PathBuf = parts.iter().collect();
        if !out.contains(&lit) {
            out.push(lit);
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn walk(
    probe: &mut Probe,
    root: &Path,
    rel: PathBuf,
    parts: &[&str],
    out: &mut Vec<PathBuf>,
    visited: &mut usize,
    depth: usize,
    notes: &mut Vec<String>,
    pattern: &str,
) {
    let Some((first, rest)) = parts.split_first() else {
        out.push(rel);
        return;
    };
    if *first == "**" {
        walk(
            probe,
            root,
            rel.clone(),
            rest,
            out,
            visited,
            depth,
            notes,
            pattern,
        );
        if depth >= 6 || *visited >= 4000 {
            if *visited == 4000 || depth == 6 {
                notes.push(format!(
                    "protected pattern {pattern}: walk bounded at {}",
                    rel.display()
                ));
            }
            return;
        }
        if let Ok(rd) = fs::read_dir(root.join(&rel)) {
            for e in rd.flatten() {
                let name = e.file_name();
                if SKIP.iter().any(|s| name == *s) || !e.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                *visited += 1;
                walk(
                    probe,
                    root,
                    rel.join(&name),
                    parts,
                    out,
                    visited,
                    depth + 1,
                    notes,
                    pattern,
                );
            }
        }
        return;
    }
    if !has_glob(first) {
        let next = rel.join(first);
        if rest.is_empty() || probe.is_real_dir(&root.join(&next)) {
            walk(probe, root, next, rest, out, visited, depth, notes, pattern);
        }
        return;
    }
    if let Ok(rd) = fs::read_dir(root.join(&rel)) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if glob(first, &name) {
                walk(
                    probe,
                    root,
                    rel.join(&name),
                    rest,
                    out,
                    visited,
                    depth,
                    notes,
                    pattern,
                );
            }
        }
    }
}

fn state_of(probe: &mut Probe, root: &Path, rel: &Path, budget: &mut u64) -> State {
    if !ancestors_real(probe, root, rel) {
        return State::Tampered;
    }
    let p = root.join(rel);
    let Some(m) = probe.lstat(&p) else {
        return State::Missing;
    };
    let mode = m.permissions().mode() & 0o7777;
    if m.file_type().is_symlink() {
        return fs::read_link(&p).map_or(State::Tampered, State::Symlink);
    }
    if m.is_dir() {
        return State::Dir { mode };
    }
    if !m.is_file() || m.len() > *budget {
        return State::TooLarge;
    }
    match fs::read(&p) {
        Ok(content) => {
            *budget = budget.saturating_sub(content.len() as u64);
            State::File { content, mode }
        }
        Err(_) => State::TooLarge,
    }
}

/// Every relative path the patterns cover under `root` now, with the
/// entries below protected directories.
fn covered(
    probe: &mut Probe,
    root: &Path,
    patterns: &[String],
    notes: &mut Vec<String>,
    venvs: &mut BTreeSet<PathBuf>,
    only_known: bool,
) -> BTreeSet<PathBuf> {
    let mut set = BTreeSet::new();
    probe.list_if_small(root);
    for pat in patterns {
        for rel in expand(probe, root, pat, notes, venvs, only_known) {
            if pat.ends_with('/')
                && probe.is_real_dir(&root.join(&rel))
                && ancestors_real(probe, root, &rel)
            {
                let mut n = 0usize;
                tree(root, &rel, &mut set, &mut n);
                if n >= MAX_TREE {
                    notes.push(format!(
                        "protected directory {}: more than {MAX_TREE} entries",
                        rel.display()
                    ));
                }
            }
            set.insert(rel);
        }
    }
    set
}

fn tree(root: &Path, rel: &Path, set: &mut BTreeSet<PathBuf>, n: &mut usize) {
    let Ok(rd) = fs::read_dir(root.join(rel)) else {
        return;
    };
    for e in rd.flatten() {
        if *n >= MAX_TREE {
            return;
        }
        *n += 1;
        let r = rel.join(e.file_name());
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        set.insert(r.clone());
        if is_dir {
            tree(root, &r, set, n);
        }
    }
}

impl Snapshot {
    /// Takes the snapshot of `patterns` under every root.
    pub fn take(roots: &[PathBuf], patterns: &[String]) -> Self {
        let mut s = Snapshot::default();
        let mut budget = MAX_BYTES;
        let mut probe = Probe::default();
        for root in roots {
            for rel in covered(
                &mut probe,
                root,
                patterns,
                &mut s.notes,
                &mut s.venvs,
                false,
            ) {
                let st = state_of(&mut probe, root, &rel, &mut budget);
                s.entries.insert(root.join(&rel), (root.clone(), rel, st));
            }
        }
        s
    }

    /// Compares with now, restores what changed, returns one line per
    /// restored path.
    pub fn restore(&self, roots: &[PathBuf], patterns: &[String]) -> Vec<String> {
        let mut notes = Vec::new();
        let mut venvs = self.venvs.clone();
        let mut now: BTreeMap<PathBuf, (PathBuf, PathBuf)> = BTreeMap::new();
        // One pass of looking: nothing is changed until `changed` is known.
        let mut probe = Probe::default();
        for root in roots {
            for rel in covered(&mut probe, root, patterns, &mut notes, &mut venvs, true) {
                now.insert(root.join(&rel), (root.clone(), rel));
            }
        }
        let mut budget = MAX_BYTES;
        let mut changed: Vec<(PathBuf, PathBuf, PathBuf, State)> = Vec::new();
        for (abs, (root, rel, before)) in &self.entries {
            // `rel` is relative to the root it was found under, not to the
            // first root `abs` is below: with nested roots (a project in
            // TMPDIR) that one would name another path (`p/p/.venv/...`).
            if !roots.contains(root) {
                continue;
            }
            let after = state_of(&mut probe, root, rel, &mut budget);
            if before == &State::TooLarge {
                continue;
            }
            if &after != before {
                changed.push((abs.clone(), root.clone(), rel.clone(), before.clone()));
            }
        }
        for (abs, (root, rel)) in &now {
            if !self.entries.contains_key(abs) {
                changed.push((abs.clone(), root.clone(), rel.clone(), State::Missing));
            }
        }
        let mut out = Vec::new();
        // Put back what existed (parents first), then remove what is new
        // (children first).
        changed.sort_by(|a, b| a.0.cmp(&b.0));
        for (abs, root, rel, before) in changed.iter().filter(|c| c.3 != State::Missing) {
            fix_ancestors(root, rel);
            let r = put_back(abs, before);
            out.push(match r {
                Ok(()) => format!("{} (restored)", abs.display()),
                Err(e) => format!("{} (could not be restored: {e})", abs.display()),
            });
        }
        for (abs, root, rel, _) in changed.iter().rev().filter(|c| c.3 == State::Missing) {
            // Things have changed by now: look afresh.
            if !ancestors_real(&mut Probe::default(), root, rel) {
                fix_ancestors(root, rel);
            }
            let r = remove_any(abs);
            out.push(match r {
                Ok(()) => format!("{} (created by the command; removed)", abs.display()),
                Err(e) => format!(
                    "{} (created by the command; could not be removed: {e})",
                    abs.display()
                ),
            });
        }
        out
    }
}

/// Replaces any ancestor of `rel` inside `root` that is not a real
/// directory (a planted symlink) by an empty directory.
fn fix_ancestors(root: &Path, rel: &Path) {
    for cur in ancestors_below(root, rel) {
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                let _ = fs::remove_file(&cur);
                let _ = fs::create_dir(&cur);
            }
            Err(_) => {
                let _ = fs::create_dir(&cur);
            }
        }
    }
}

fn remove_any(p: &Path) -> std::io::Result<()> {
    match fs::symlink_metadata(p) {
        Err(_) => Ok(()),
        Ok(m) if m.is_dir() => fs::remove_dir_all(p),
        Ok(_) => fs::remove_file(p),
    }
}

fn put_back(p: &Path, st: &State) -> std::io::Result<()> {
    match st {
        State::File { content, mode } => {
            if fs::symlink_metadata(p).is_ok_and(|m| !m.is_file()) {
                remove_any(p)?;
            }
            let tmp = p.with_file_name(format!(
                ".{}.safe-exec-restore",
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ));
            let _ = remove_any(&tmp);
            fs::write(&tmp, content)?;
            fs::set_permissions(&tmp, fs::Permissions::from_mode(*mode))?;
            fs::rename(&tmp, p)
        }
        State::Symlink(t) => {
            remove_any(p)?;
            symlink(t, p)
        }
        State::Dir { mode } => {
            if !is_real_dir(p) {
                remove_any(p)?;
                fs::create_dir(p)?;
            }
            fs::set_permissions(p, fs::Permissions::from_mode(*mode))
        }
        State::Missing | State::Tampered | State::TooLarge => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_matching() {
        assert!(matches(".git/config", Path::new(".git/config")));
        assert!(!matches(".git/config", Path::new("sub/.git/config")));
        assert!(matches(".git/hooks/", Path::new(".git/hooks")));
        assert!(matches(".git/hooks/", Path::new(".git/hooks/pre-commit")));
        assert!(!matches(".git/hooks/", Path::new(".git/index")));
        assert!(matches(".cargo/config*", Path::new(".cargo/config.toml")));
        assert!(matches(
            "**/site-packages/*.pth",
            Path::new(".venv/lib/python3.11/site-packages/x.pth")
        ));
        assert!(!matches(
            "**/site-packages/*.pth",
            Path::new(".venv/lib/python3.11/site-packages/x.py")
        ));
    }

    #[test]
    fn snapshot_restores_changes_creations_and_symlinked_parents() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        fs::create_dir_all(root.join(".git/hooks")).expect("mk");
        fs::write(root.join(".git/config"), "[core]\n").expect("w");
        let pats: Vec<String> = vec![".git/config".into(), ".git/hooks/".into(), ".envrc".into()];
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        fs::write(root.join(".git/config"), "[core]\nfsmonitor = evil\n").expect("w");
        fs::write(root.join(".git/hooks/pre-commit"), "evil").expect("w");
        fs::write(root.join(".envrc"), "evil").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert_eq!(out.len(), 3, "{out:?}");
        assert_eq!(
            fs::read_to_string(root.join(".git/config")).expect("r"),
            "[core]\n"
        );
        assert!(!root.join(".git/hooks/pre-commit").exists());
        assert!(!root.join(".envrc").exists());
        assert!(snap.restore(std::slice::from_ref(&root), &pats).is_empty());
    }

    #[test]
    fn one_pass_answers_each_path_once_and_right() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        fs::create_dir(root.join(".git")).expect("mk");
        fs::write(root.join(".git/config"), "x").expect("w");
        fs::write(root.join(".envrc"), "x").expect("w");
        let mut p = Probe::default();
        p.list_if_small(&root);
        assert!(
            p.listed.contains_key(root.as_os_str()),
            "a small root is listed"
        );
        // Present names are found (positive control), absent ones answered
        // by the listing or by their missing parent.
        assert!(p.is_real_dir(&root.join(".git")));
        assert!(p.lstat(&root.join(".git/config")).is_some());
        assert!(p.lstat(&root.join(".envrc")).is_some_and(|m| m.is_file()));
        assert!(p.lstat(&root.join(".cargo")).is_none());
        assert!(p.lstat(&root.join(".cargo/config.toml")).is_none());
        // A root with a subdirectory is never taken for one without.
        assert!(!p.has_no_subdirs(&root));
        let flat = tempfile::tempdir().expect("tmp");
        fs::write(flat.path().join("f"), "").expect("w");
        // Where the filesystem keeps directory link counts (ext4, tmpfs,
        // xfs) a directory of files is known to have no subdirectory;
        // elsewhere (btrfs: 1) it is listed.
        let nlink = fs::metadata(flat.path()).expect("md").nlink();
        let kept = nix::sys::statfs::statfs(flat.path()).is_ok_and(|f| {
            let t = f.filesystem_type();
            t == nix::sys::statfs::EXT4_SUPER_MAGIC
                || t == nix::sys::statfs::TMPFS_MAGIC
                || t == XFS_SUPER_MAGIC
        });
        assert_eq!(
            Probe::default().has_no_subdirs(flat.path()),
            kept && nlink == 2
        );
        fs::create_dir(flat.path().join("sub")).expect("mk");
        assert!(!Probe::default().has_no_subdirs(flat.path()));
    }

    #[test]
    fn nested_roots_compare_each_path_under_its_own_root() {
        // A project inside TMPDIR (both writable roots, the project first,
        // as run mode orders them) with a venv: its .pth file is found
        // under both roots. Unchanged, nothing is reported or written (it
        // was compared as `p/.venv/...` under the project, so "missing",
        // rewritten, and `p/p/.venv/lib` created in the project).
        let t = tempfile::tempdir().expect("tempdir");
        let tmp = fs::canonicalize(t.path()).expect("canon");
        let project = tmp.join("p");
        let sp = project.join(".venv/lib/python3.12/site-packages");
        fs::create_dir_all(&sp).expect("mk");
        fs::write(project.join(".venv/pyvenv.cfg"), "home = /usr\n").expect("w");
        fs::write(sp.join("x.pth"), "/opt/x\n").expect("w");
        let roots = vec![project.clone(), tmp.clone()];
        let pats: Vec<String> = vec!["**/site-packages/*.pth".into(), ".envrc".into()];
        let snap = Snapshot::take(&roots, &pats);
        assert_eq!(snap.restore(&roots, &pats), Vec::<String>::new());
        assert!(!project.join("p").exists(), "stray directories made");
        // Positive control: a change to the same file is still undone,
        // and a protected file created in the project is removed.
        fs::write(sp.join("x.pth"), "import os\n").expect("w");
        fs::write(project.join(".envrc"), "evil\n").expect("w");
        let out = snap.restore(&roots, &pats);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(fs::read_to_string(sp.join("x.pth")).expect("r"), "/opt/x\n");
        assert!(!project.join(".envrc").exists());
        assert!(!project.join("p").exists(), "stray directories made");
    }

    #[test]
    fn pth_files_of_known_venvs_are_restored_only_through_real_directories() {
        let d = tempfile::tempdir().expect("tmp");
        let outside = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        let sp = |base: &Path| base.join("lib/python3.11/site-packages");
        // Venvs at the root's first and second level, and one under a
        // skipped directory (never looked into).
        for v in [".venv", "tools/env", "node_modules/env"] {
            fs::create_dir_all(sp(&root.join(v))).expect("mk");
            fs::write(root.join(v).join("pyvenv.cfg"), "home = /usr\n").expect("w");
        }
        let pats: Vec<String> = vec!["**/site-packages/*.pth".into()];
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        // Positive control: .pth files planted in known venvs go.
        fs::write(sp(&root.join(".venv")).join("evil.pth"), "import os").expect("w");
        fs::write(sp(&root.join("tools/env")).join("evil.pth"), "import os").expect("w");
        // Not protected: a skipped directory's venv and a venv the command
        // made itself.
        fs::write(sp(&root.join("node_modules/env")).join("ok.pth"), "x").expect("w");
        fs::create_dir_all(sp(&root.join("new"))).expect("mk");
        fs::write(root.join("new/pyvenv.cfg"), "").expect("w");
        fs::write(sp(&root.join("new")).join("own.pth"), "x").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(!sp(&root.join(".venv")).join("evil.pth").exists());
        assert!(!sp(&root.join("tools/env")).join("evil.pth").exists());
        assert!(sp(&root.join("node_modules/env")).join("ok.pth").exists());
        assert!(sp(&root.join("new")).join("own.pth").exists());
        // A known venv replaced by a symlink to a directory elsewhere:
        // nothing is removed through the link.
        fs::create_dir_all(sp(outside.path())).expect("mk");
        fs::write(outside.path().join("pyvenv.cfg"), "").expect("w");
        fs::write(sp(outside.path()).join("victim.pth"), "x").expect("w");
        fs::rename(root.join("tools"), root.join("tools.old")).expect("mv");
        fs::create_dir(root.join("tools")).expect("mk");
        std::os::unix::fs::symlink(outside.path(), root.join("tools/env")).expect("ln");
        let _ = snap.restore(std::slice::from_ref(&root), &pats);
        assert!(sp(outside.path()).join("victim.pth").exists());
    }
}
