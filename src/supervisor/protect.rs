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

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
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
    entries: BTreeMap<PathBuf, (PathBuf, State)>,
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

fn ancestors_real(root: &Path, rel: &Path) -> bool {
    for cur in ancestors_below(root, rel) {
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return false,
            Err(_) => return true, // missing ancestor: the path is missing
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
                            .all(|a| is_real_dir(&root.join(a)))
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
                    if let Ok(rd) = fs::read_dir(root.join(b)) {
                        for e in rd.flatten() {
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
                            let name = e.file_name();
                            if SKIP.iter().any(|s| name == *s) {
                                continue;
                            }
                            if e.file_type().is_ok_and(|t| t.is_dir()) {
                                next.push(b.join(&name));
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
                if !is_real_dir(&libdir) {
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
        walk(root, rel.clone(), rest, out, visited, depth, notes, pattern);
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
        if rest.is_empty() || is_real_dir(&root.join(&next)) {
            walk(root, next, rest, out, visited, depth, notes, pattern);
        }
        return;
    }
    if let Ok(rd) = fs::read_dir(root.join(&rel)) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if glob(first, &name) {
                walk(
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

fn state_of(root: &Path, rel: &Path, budget: &mut u64) -> State {
    if !ancestors_real(root, rel) {
        return State::Tampered;
    }
    let p = root.join(rel);
    let Ok(m) = fs::symlink_metadata(&p) else {
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
    root: &Path,
    patterns: &[String],
    notes: &mut Vec<String>,
    venvs: &mut BTreeSet<PathBuf>,
    only_known: bool,
) -> BTreeSet<PathBuf> {
    let mut set = BTreeSet::new();
    for pat in patterns {
        for rel in expand(root, pat, notes, venvs, only_known) {
            if pat.ends_with('/') && is_real_dir(&root.join(&rel)) && ancestors_real(root, &rel) {
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
        for root in roots {
            for rel in covered(root, patterns, &mut s.notes, &mut s.venvs, false) {
                let st = state_of(root, &rel, &mut budget);
                s.entries.insert(root.join(&rel), (rel, st));
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
        for root in roots {
            for rel in covered(root, patterns, &mut notes, &mut venvs, true) {
                now.insert(root.join(&rel), (root.clone(), rel));
            }
        }
        let mut budget = MAX_BYTES;
        let mut changed: Vec<(PathBuf, PathBuf, PathBuf, State)> = Vec::new();
        for (abs, (rel, before)) in &self.entries {
            let Some(root) = roots.iter().find(|r| abs.starts_with(r)) else {
                continue;
            };
            let after = state_of(root, rel, &mut budget);
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
            if !ancestors_real(root, rel) {
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
