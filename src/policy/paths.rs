//! Allowed roots (seed 002): every path operand and redirection target,
//! resolved against the tracked cwd, `~`, `..` and symlinks (the real path of
//! the longest existing prefix), must be inside the allowed roots; writes
//! only inside writable roots; secrets never.

use std::path::{Path, PathBuf};

use crate::config::profile::ProtectedLink;
pub use crate::config::profile::Roots;

/// Why a path is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathProblem {
    /// Outside every readable root.
    NotReadable,
    /// Outside every writable root.
    NotWritable,
    /// Inside a deny-read path.
    Secret(PathBuf),
    /// The target is a broad root for a recursive or destructive operation.
    Broad,
    /// A protected file inside a writable root (configuration that runs
    /// later outside any sandbox), or a tree holding one for a destructive
    /// operation; the path is the protected entry.
    Protected(PathBuf),
    /// A nested repository's git entry (`sub/.git`, `x/.git/config`):
    /// refused unconfined ([`Roots::nested_git_hit`]); the path is the
    /// entry.
    NestedGit(PathBuf),
    /// Unconfined: a protected tree (the path) holds more entries than
    /// the link scan looks through, so a write elsewhere may change what a
    /// link there leads to (review 11 F11).
    Unscanned(PathBuf),
}

pub use crate::sys::path::{canonicalize, real_prefix_memo, resolve, resolve_anchored};

impl Roots {
    /// Checks a tree that will be read recursively: it may not contain a
    /// protected path.
    pub fn check_read_tree(&self, path: &Path) -> Result<(), PathProblem> {
        if let Some(d) = self.deny_read.iter().find(|d| under(d, path)) {
            return Err(PathProblem::Secret(d.clone()));
        }
        self.check_read(path)
    }

    /// Checks a path that will be read.
    pub fn check_read(&self, path: &Path) -> Result<(), PathProblem> {
        if let Some(pid_dir) = other_process(path) {
            return Err(PathProblem::Secret(pid_dir));
        }
        if self.is_secret_name(path) {
            return Err(PathProblem::Secret(path.to_path_buf()));
        }
        if let Some(d) = self.deny_read.iter().find(|d| under(path, d)) {
            return Err(PathProblem::Secret(d.clone()));
        }
        if self
            .read
            .iter()
            .chain(self.write.iter())
            .any(|r| under(path, r))
        {
            Ok(())
        } else {
            Err(PathProblem::NotReadable)
        }
    }

    /// Checks a path that will be written; `destructive` for recursive or
    /// deleting operations, which may not target a broad root or a writable
    /// root itself.
    pub fn check_write(&self, path: &Path, destructive: bool) -> Result<(), PathProblem> {
        self.check_write_in(path, destructive, &mut DirMemo::default())
    }

    /// [`Roots::check_write`] with the directories' kinds kept in `memo`
    /// (a tree of writes checked entry by entry looks at each directory
    /// once, review 10 R12).
    pub fn check_write_in(
        &self,
        path: &Path,
        destructive: bool,
        memo: &mut DirMemo,
    ) -> Result<(), PathProblem> {
        if destructive && self.is_broad(path) {
            return Err(PathProblem::Broad);
        }
        if let Some(d) = self
            .deny_read
            .iter()
            .find(|d| under(path, d) || destructive && under(d, path))
        {
            return Err(PathProblem::Secret(d.clone()));
        }
        if let Some(p) = self.protected_hit(path, destructive) {
            return Err(PathProblem::Protected(p));
        }
        if !destructive && let Some(p) = self.nested_protected_hit_in(path, memo) {
            return Err(PathProblem::Protected(p));
        }
        if self.write.iter().any(|r| under(path, r)) {
            Ok(())
        } else {
            Err(PathProblem::NotWritable)
        }
    }

    /// Checks a redirection target: like [`Roots::check_write`], but device
    /// sinks (`/dev/null`, `/dev/stderr`, the terminal) are fine. Only for
    /// redirections: `mv x /dev/null` as an operand would replace the device.
    pub fn check_redirect(&self, path: &Path) -> Result<(), PathProblem> {
        if is_device_sink(path) {
            return Ok(());
        }
        self.check_write(path, false)
    }

    /// Whether the last component of `path` is a secret file name
    /// (`.env`, `.env.local`; not an excepted `.env.example`).
    pub fn is_secret_name(&self, path: &Path) -> bool {
        let Some(name) = path.file_name().map(|n| n.to_string_lossy()) else {
            return false;
        };
        let hit = |g: &str| fnmatch(g.as_bytes(), name.as_bytes());
        self.secret_names
            .iter()
            .any(|g| !g.starts_with('!') && hit(g))
            && !self
                .secret_names
                .iter()
                .filter_map(|g| g.strip_prefix('!'))
                .any(hit)
    }

    /// The protected entry that a write to `path` changes: `path` is a
    /// protected file (or inside a protected directory) of some writable
    /// root; with `destructive`, also a directory that holds one
    /// (`rm -rf .git` removes `.git/config`).
    pub fn protected_hit(&self, path: &Path, destructive: bool) -> Option<PathBuf> {
        for root in &self.write {
            // `under` is `strip_prefix` succeeding, without the component
            // walk for the roots the path is not in.
            if !under(path, root) {
                continue;
            }
            let rel: Vec<std::borrow::Cow<'_, str>> = match abs_rel(path, root) {
                Some(rel) => rel,
                None => {
                    let Ok(rel) = path.strip_prefix(root) else {
                        continue;
                    };
                    rel.components()
                        .map(|c| c.as_os_str().to_string_lossy())
                        .collect()
                }
            };
            // One buffer for every entry's components.
            let mut pat: Vec<&str> = Vec::new();
            // Only the entries the first component leaves (the index files
            // the others away: the first test below would skip them).
            let entries = self.protected_entries();
            for i in entries.candidates(rel.first().map(|c| &**c)) {
                let (Some(entry), Some(split)) = (self.protected.get(i), entries.all.get(i)) else {
                    continue;
                };
                // An entry whose first component is not `**` and does not
                // match the path's first component can neither hold the
                // path nor be held by it (both tests below compare those
                // two first): skipped. An entry without components names
                // nothing. (`protected_hit_equals_the_full_comparison`
                // checks it.)
                let (Some(p0), Some(p_last)) = (split.pat.first(), split.pat.last()) else {
                    continue;
                };
                // (`fnmatch` of a component without pattern characters is
                // equality.)
                let (lit0, lit_last) = split.literal_ends;
                let (globstar0, globstar_last) = split.globstar_ends;
                if let Some(first) = rel.first()
                    && !globstar0
                    && !if lit0 {
                        p0 == first
                    } else {
                        fnmatch(p0.as_bytes(), first.as_bytes())
                    }
                {
                    continue;
                }
                let tree = split.tree;
                // A file entry under `**` (`**/site-packages/*.pth`,
                // `**/pyvenv.cfg`): `**` holds no ancestor test, so only
                // the path itself can be it, and its last component must
                // match the entry's last (checked before `**`'s
                // backtracking over every split of the path).
                if !tree
                    && let Some(last) = rel.last()
                    && !globstar_last
                    && globstar0
                    && !if lit_last {
                        p_last == last
                    } else {
                        fnmatch(p_last.as_bytes(), last.as_bytes())
                    }
                {
                    continue;
                }
                pat.clear();
                pat.extend(split.pat.iter().map(String::as_str));
                let inside = if tree {
                    (pat.len()..=rel.len()).any(|k| components_match(&pat, &rel[..k]))
                } else {
                    components_match(&pat, &rel)
                };
                // A destructive operation on an ancestor of a fixed entry.
                let holds = destructive
                    && rel.len() < pat.len()
                    && !pat[..rel.len()].contains(&"**")
                    && rel
                        .iter()
                        .zip(&pat)
                        .all(|(r, p)| fnmatch(p.as_bytes(), r.as_bytes()));
                if inside && !holds && created_here(root, &rel, &pat) {
                    continue;
                }
                if inside || holds {
                    return Some(root.join(entry.trim_end_matches('/')));
                }
            }
        }
        // Where protected links lead (review 10 R11): `.git/hooks` a
        // symlink to `githooks/` makes `githooks/pre-commit` a hook. The
        // targets lie strictly inside a root, so a root itself (the cwd a
        // program runs in) or a directory above one only holds them: not
        // looked for unless destructive.
        if !destructive && self.write.iter().any(|w| under(w, path)) {
            return None;
        }
        for l in self.protected_links() {
            let inside = if l.tree {
                under(path, &l.target)
            } else {
                same(path, &l.target)
            };
            if inside || (destructive && under(&l.target, path)) {
                return Some(l.link.clone());
            }
        }
        None
    }

    /// The protected entries that are symbolic links to places inside a
    /// writable root ([`ProtectedLink`]), found once (on the first write
    /// check: a decision that writes nothing never looks). For each root
    /// and each entry, the components before its first pattern character
    /// are followed (`.git`, `.git/hooks`, `.claude`: one `lstat` each,
    /// shared between entries); a link among them protects its target with
    /// the rest of the entry (`.git -> ../gd` protects `gd/hooks/`, and a
    /// link on the rest of the way is followed in turn). A tree entry that
    /// is a directory is listed (at most [`LINK_SCAN`] entries in all, then
    /// the rest is not looked at) for links inside it (a hook installed as
    /// `ln -s ../../scripts/pre-commit.sh .git/hooks/pre-commit`). A target
    /// that is a writable root or holds one is not taken (it would protect
    /// the whole root).
    pub(crate) fn protected_links(&self) -> &[ProtectedLink] {
        self.protected_links.get_or_init(|| find_links(self))
    }

    /// The protected entry a write to `path` changes in a repository
    /// nested below a writable root (red team 10 F5: a workspace root above
    /// `app/`, `{tmp}` holding scratch clones): the `[paths] protected`
    /// entries (but those starting with `**`, which match at any depth
    /// already) re-anchored at each directory between the root and `path`
    /// that is a repository's top (it holds a `.git`, or the path goes
    /// through its `.git`) or a bare-layout git directory (`HEAD`,
    /// `objects/`, `refs/`: its `config` and `hooks/` are a `.git`'s).
    /// Costs up to two `stat`s per directory between root and path.
    pub fn nested_protected_hit(&self, path: &Path) -> Option<PathBuf> {
        self.nested_protected_hit_in(path, &mut DirMemo::default())
    }

    /// [`Roots::nested_protected_hit`] with the directories' kinds kept in
    /// `memo`.
    pub fn nested_protected_hit_in(&self, path: &Path, memo: &mut DirMemo) -> Option<PathBuf> {
        use std::borrow::Cow;
        for root in &self.write {
            if !under(path, root) {
                continue;
            }
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let comps: Vec<Cow<'_, str>> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect();
            let mut at = root.clone();
            for i in 0..comps.len().saturating_sub(1) {
                let parent = at.clone();
                at.push(&*comps[i]);
                if self.write.iter().any(|w| same(w, &at)) {
                    continue;
                }
                let (anchor, tail): (&Path, Vec<Cow<'_, str>>) = if comps[i] == ".git" {
                    if self.write.iter().any(|w| same(w, &parent)) {
                        continue;
                    }
                    (parent.as_path(), comps[i..].to_vec())
                } else if memo.kind(&at) == DirKind::Top {
                    (at.as_path(), comps[i + 1..].to_vec())
                } else if memo.kind(&at) == DirKind::Bare {
                    let mut t = vec![Cow::Borrowed(".git")];
                    t.extend(comps[i + 1..].iter().cloned());
                    (at.as_path(), t)
                } else {
                    continue;
                };
                for entry in &self.protected {
                    let pat: Vec<&str> = entry
                        .trim_end_matches('/')
                        .split('/')
                        .filter(|c| !c.is_empty() && *c != ".")
                        .collect();
                    // (`.git` itself, a gitfile put in place of a nested
                    // one, is undone by the supervisor confined and refused
                    // unconfined by `nested_git_hit`.)
                    if pat.is_empty() || pat[0] == "**" || pat == [".git"] {
                        continue;
                    }
                    let hit = entry_hit(entry, &pat, &tail);
                    if hit {
                        let e = entry.trim_end_matches('/');
                        // A bare git directory's entries are its own.
                        let bare = tail.first().is_some_and(|t| t == ".git")
                            && comps[i] != ".git"
                            && memo.kind(anchor) != DirKind::Top;
                        let e = if bare {
                            e.strip_prefix(".git/").unwrap_or(e)
                        } else {
                            e
                        };
                        return Some(anchor.join(e));
                    }
                }
                // Its protected entries that are links (review 10 R11 at
                // a nested repository, review 11 F6: `app/.git/hooks ->
                // ../hk`, `app/.claude -> cl`): where they lead is
                // protected as they are.
                let bare = memo.kind(anchor) == DirKind::Bare && comps[i] != ".git";
                for l in memo.links_of(self, anchor, bare) {
                    let inside = if l.tree {
                        under(path, &l.target)
                    } else {
                        same(path, &l.target)
                    };
                    if inside {
                        return Some(l.link.clone());
                    }
                }
                // A nested repository's own `core.hooksPath` (review 10
                // R7's sibling below the root: `app/.git/config` naming
                // `tools/hooks`), read once per repository per memo.
                if comps[i] != ".git" && memo.kind(&at) == DirKind::Top {
                    let hooks = memo.hooks_of(&at, &self.write).to_vec();
                    for (r, pat) in hooks {
                        let Ok(rel) = path.strip_prefix(&r) else {
                            continue;
                        };
                        let rel: Vec<Cow<'_, str>> = rel
                            .components()
                            .map(|c| c.as_os_str().to_string_lossy())
                            .collect();
                        let pc: Vec<&str> = pat
                            .trim_end_matches('/')
                            .split('/')
                            .filter(|c| !c.is_empty() && *c != ".")
                            .collect();
                        let hit = if pat.ends_with('/') {
                            (pc.len()..=rel.len()).any(|k| components_match(&pc, &rel[..k]))
                        } else {
                            components_match(&pc, &rel)
                        };
                        if hit {
                            return Some(r.join(pat.trim_end_matches('/')));
                        }
                    }
                }
            }
        }
        None
    }

    /// The protected entry a write to `path` changes when `top` is (or
    /// will be, review 11 F9: `git init X && echo ... >
    /// X/.claude/settings.json`) a repository's top nested below a
    /// writable root: the entries re-anchored at `top` as
    /// [`Roots::nested_protected_hit`] reads them.
    pub fn protected_hit_at(&self, top: &Path, path: &Path) -> Option<PathBuf> {
        use std::borrow::Cow;
        if self.write.iter().any(|w| under(w, top)) || !self.write.iter().any(|w| under(top, w)) {
            return None;
        }
        let rel = path.strip_prefix(top).ok()?;
        let tail: Vec<Cow<'_, str>> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect();
        for entry in &self.protected {
            let pat: Vec<&str> = entry
                .trim_end_matches('/')
                .split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .collect();
            if pat.is_empty() || pat[0] == "**" || pat == [".git"] {
                continue;
            }
            let hit = entry_hit(entry, &pat, &tail);
            if hit {
                return Some(top.join(entry.trim_end_matches('/')));
            }
        }
        None
    }

    /// A protected tree too large to look through for links
    /// ([`Roots::protected_links`]; review 11 F11): a write may change
    /// what a link there leads to. `None` until the first write check.
    pub fn links_unscanned(&self) -> Option<&Path> {
        self.links_unscanned.get().and_then(|p| p.as_deref())
    }

    /// The nested repository's git entry a write to `path` changes: the
    /// path up to a `.git` component that is not the writable root's own
    /// (`sub/.git`, `vendor/x/.git/config`). Git enters such a repository
    /// for the superproject's `git status` when it is a submodule, with its
    /// configuration (`core.fsmonitor`, hooks) in effect; a gitfile written
    /// there (`gitdir: /tmp/x`) names any repository. Unconfined, nothing
    /// undoes such a write after the command (confined, the protected-file
    /// snapshot does, see `supervisor::protect::gitlinks`), so the policy
    /// refuses it. The root's own `.git` is the `[paths] protected` list's.
    pub fn nested_git_hit(&self, path: &Path) -> Option<PathBuf> {
        for root in &self.write {
            if !under(path, root) {
                continue;
            }
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            // A `.git` right below a writable root is that root's own
            // (with nested roots, a project in TMPDIR, the inner one's).
            let mut at = root.clone();
            for c in rel.components() {
                let own = self.write.contains(&at);
                at.push(c);
                if !own && c.as_os_str() == ".git" {
                    return Some(at);
                }
            }
        }
        None
    }

    /// `/`, the home directory, system roots, a writable root itself, or any
    /// ancestor of those.
    pub fn is_broad(&self, path: &Path) -> bool {
        // `under(x, path)` includes `x == path`.
        same(path, Path::new("/"))
            || under(&self.home, path)
            || self.broad.iter().any(|b| under(b, path))
            || self.write.iter().any(|w| under(w, path))
    }
}

/// What a directory is to [`Roots::nested_protected_hit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirKind {
    /// It does not exist (nor anything below it).
    Missing,
    /// It holds a `.git`: a repository's top.
    Top,
    /// A bare-layout git directory (`HEAD`, `objects/`, `refs/`).
    Bare,
    /// Anything else.
    Plain,
}

/// The kinds of the directories looked at, for one decision's checks of
/// many paths in one tree (review 10 R12: `mv DIR NEW` of a 5,000-entry
/// tree stat'ed every landed path's ancestors, ~42,000 `statx`). A
/// directory below a missing one is missing without a syscall.
#[derive(Debug, Default)]
pub struct DirMemo {
    kinds: std::collections::HashMap<PathBuf, DirKind>,
    /// Each nested repository's `core.hooksPath` patterns, with their
    /// roots.
    hooks: std::collections::HashMap<PathBuf, Vec<(PathBuf, String)>>,
    /// Each nested repository's protected entries that are links
    /// ([`Roots::protected_links`] at its top, review 11 F6).
    links: std::collections::HashMap<PathBuf, Vec<ProtectedLink>>,
    /// Whether a directory that is neither is looked at once more to know
    /// whether it exists (worth it when many paths lie below it).
    missing: bool,
}

impl DirMemo {
    /// A memo for the paths of one tree: missing directories are known,
    /// and nothing below them is looked at.
    pub fn for_tree() -> Self {
        DirMemo {
            kinds: Default::default(),
            hooks: Default::default(),
            links: Default::default(),
            missing: true,
        }
    }

    /// The hooks directories (and included files) the configuration of the
    /// repository whose top is `top` protects, as `(root, pattern)`: read
    /// once per memo.
    pub fn hooks_of(&mut self, top: &Path, write: &[PathBuf]) -> &[(PathBuf, String)] {
        use crate::sys::hookspath;
        self.hooks.entry(top.to_path_buf()).or_insert_with(|| {
            let configs = hookspath::repo_configs(top, &mut Vec::new());
            if configs.is_empty() {
                return Vec::new();
            }
            let found = hookspath::find_in(top, write, configs);
            found
                .elsewhere
                .into_iter()
                .chain(found.protect.into_iter().map(|p| (top.to_path_buf(), p)))
                .collect()
        })
    }

    /// The protected entries of the repository nested at `top` (a bare
    /// git directory with `bare`) that are links into a writable root,
    /// looked for once per memo.
    fn links_of(&mut self, roots: &Roots, top: &Path, bare: bool) -> &[ProtectedLink] {
        self.links
            .entry(top.to_path_buf())
            .or_insert_with(|| find_links_at(roots, Some((top, bare))))
    }

    /// The kind of `d`, looked at once.
    pub fn kind(&mut self, d: &Path) -> DirKind {
        if let Some(k) = self.kinds.get(d) {
            return *k;
        }
        let parent_missing = d
            .parent()
            .and_then(|p| self.kinds.get(p))
            .is_some_and(|k| *k == DirKind::Missing);
        let k = if parent_missing {
            DirKind::Missing
        } else if std::fs::symlink_metadata(d.join(".git")).is_ok() {
            DirKind::Top
        } else if crate::config::refuse::is_git_dir(d) {
            DirKind::Bare
        } else if self.missing && std::fs::symlink_metadata(d).is_err() {
            DirKind::Missing
        } else {
            DirKind::Plain
        };
        self.kinds.insert(d.to_path_buf(), k);
        k
    }
}

/// Most entries of protected trees listed looking for links in them
/// ([`Roots::protected_links`]); past it, [`Roots::links_unscanned`].
const LINK_SCAN: usize = 10_000;

/// [`Roots::protected_links`].
fn find_links(r: &Roots) -> Vec<ProtectedLink> {
    find_links_at(r, None)
}

/// Where the scan of [`find_links_at`] stopped (the tree it was in).
fn note_unscanned(r: &Roots, bases: Option<(&Path, bool)>, dir: &Path) {
    if bases.is_none() {
        let _ = r.links_unscanned.set(Some(dir.to_path_buf()));
    }
}

/// [`Roots::protected_links`] for the roots, or (`bases`) for one
/// repository nested below them: its top, or a bare-layout git directory
/// (`true`), whose entries are the `.git/` ones.
fn find_links_at(r: &Roots, bases: Option<(&Path, bool)>) -> Vec<ProtectedLink> {
    use std::ffi::OsString;
    use std::fs::FileType;
    use std::os::unix::ffi::OsStrExt;
    type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
    struct Scan<'a> {
        r: &'a Roots,
        /// `lstat` answers, keyed by the path's bytes.
        kinds: Map<OsString, Option<FileType>>,
        out: Vec<ProtectedLink>,
        listed: usize,
        hops: usize,
        /// The tree the scan stopped in, past [`LINK_SCAN`] entries.
        stopped: Option<PathBuf>,
    }
    impl Scan<'_> {
        fn kind(&mut self, p: &Path) -> Option<FileType> {
            if let Some(k) = self.kinds.get(p.as_os_str()) {
                return *k;
            }
            let k = std::fs::symlink_metadata(p).ok().map(|m| m.file_type());
            self.kinds.insert(p.as_os_str().to_os_string(), k);
            k
        }
        /// `link`'s real target, when it lies inside a writable root that
        /// it neither is nor holds.
        fn target(&self, link: &Path) -> Option<PathBuf> {
            let t = std::fs::canonicalize(link).ok()?;
            let inside = self.r.write.iter().any(|w| under(&t, w));
            let broad = self.r.write.iter().any(|w| under(w, &t));
            (inside && !broad).then_some(t)
        }
        fn push(&mut self, link: &Path, target: PathBuf, tree: bool) {
            let l = ProtectedLink {
                link: link.to_path_buf(),
                target,
                tree,
            };
            if !self.out.contains(&l) {
                self.out.push(l);
            }
        }
        /// `cur` (of kind `k`) is the entry's component `i`: a link is
        /// taken and followed, a directory walked on.
        fn at(
            &mut self,
            mut cur: PathBuf,
            k: FileType,
            comps: &[String],
            i: usize,
            tree: bool,
            list: bool,
        ) {
            if k.is_symlink() {
                self.hops += 1;
                if self.hops > 256 {
                    return;
                }
                let Some(t) = self.target(&cur) else { return };
                let rest = &comps[i + 1..];
                let is_dir = std::fs::metadata(&t).is_ok_and(|m| m.is_dir());
                let mut at = t.clone();
                at.extend(rest);
                self.push(&cur, at, tree);
                if is_dir {
                    self.follow(t, rest, tree, list);
                }
                return;
            }
            if !k.is_dir() {
                return;
            }
            for (j, c) in comps.iter().enumerate().skip(i + 1) {
                cur.push(c);
                let Some(k) = self.kind(&cur) else { return };
                if !k.is_dir() || k.is_symlink() {
                    return self.at(cur, k, comps, j, tree, list);
                }
            }
            if list {
                self.scan(&cur);
            }
        }
        /// Follows `comps` from `dir` (a real directory).
        fn follow(&mut self, dir: PathBuf, comps: &[String], tree: bool, list: bool) {
            let Some(first) = comps.first() else {
                if list {
                    self.scan(&dir);
                }
                return;
            };
            let cur = dir.join(first);
            let Some(k) = self.kind(&cur) else { return };
            self.at(cur, k, comps, 0, tree, list);
        }
        /// Links inside the protected tree `dir`.
        fn scan(&mut self, dir: &Path) {
            let Ok(rd) = std::fs::read_dir(dir) else {
                return;
            };
            for e in rd.flatten() {
                self.listed += 1;
                if self.listed > LINK_SCAN {
                    self.stopped.get_or_insert_with(|| dir.to_path_buf());
                    return;
                }
                let Ok(ft) = e.file_type() else { continue };
                if ft.is_dir() {
                    self.scan(&e.path());
                } else if ft.is_symlink() {
                    let p = e.path();
                    if let Some(t) = self.target(&p) {
                        let is_dir = std::fs::metadata(&t).is_ok_and(|m| m.is_dir());
                        self.push(&p, t, is_dir);
                    }
                }
            }
        }
    }
    let mut scan = Scan {
        r,
        kinds: Map::default(),
        out: Vec::new(),
        listed: 0,
        hops: 0,
        stopped: None,
    };
    let entries = r.protected_entries();
    let nested: Vec<PathBuf>;
    let (tops, bare): (&[PathBuf], bool) = match bases {
        Some((b, bare)) => {
            nested = vec![b.to_path_buf()];
            (&nested, bare)
        }
        None => (&r.write, false),
    };
    // Each entry's components before its first pattern character.
    let fixed: Vec<usize> = entries
        .all
        .iter()
        .map(|e| {
            e.pat
                .iter()
                .take_while(|c| !c.bytes().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\')))
                .count()
        })
        .collect();
    for root in tops {
        // The root listed once (when not large), sorted by name: most
        // entries' first component is not there, one binary search each.
        let mut names: Vec<(OsString, Option<FileType>)> = Vec::new();
        let mut whole = false;
        if let Ok(rd) = std::fs::read_dir(root) {
            whole = true;
            for e in rd {
                let Ok(e) = e else {
                    whole = false;
                    break;
                };
                if names.len() >= 4096 {
                    whole = false;
                    break;
                }
                names.push((e.file_name(), e.file_type().ok()));
            }
            names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        }
        for ((entry, split), &fixed) in r.protected.iter().zip(&entries.all).zip(&fixed) {
            let (comps, fixed) = match bare {
                // A bare-layout git directory: its `.git/` entries are its
                // own (`hooks/`, `config`).
                true if split.pat.first().is_some_and(|c| c == ".git") && fixed > 1 => {
                    (&split.pat[1..], fixed - 1)
                }
                true => continue,
                // A nested repository's: not `**` ones (they match at any
                // depth already), nor `.git` itself (a gitfile planted in
                // place of a nested one is `nested_git_hit`'s).
                false if bases.is_some() && split.pat.len() == 1 && split.pat[0] == ".git" => {
                    continue;
                }
                false => (&split.pat[..], fixed),
            };
            let Some(first) = comps.first().filter(|_| fixed > 0) else {
                continue;
            };
            let k = if whole {
                match names.binary_search_by(|(n, _)| n.as_bytes().cmp(first.as_bytes())) {
                    Ok(i) => names[i].1,
                    Err(_) => None,
                }
            } else {
                scan.kind(&root.join(first))
            };
            let Some(k) = k else { continue };
            let tree = entry.ends_with('/') || fixed < comps.len();
            let list = entry.ends_with('/') && fixed == comps.len();
            scan.at(root.join(first), k, &comps[..fixed], 0, tree, list);
        }
    }
    match &scan.stopped {
        Some(d) => note_unscanned(r, bases, d),
        None => {
            if bases.is_none() {
                let _ = r.links_unscanned.set(None);
            }
        }
    }
    scan.out
}

/// `path.starts_with(root)` (component-wise, so `/a/bc` is not under `/a/b`)
/// for absolute paths by splitting their bytes at `/` and skipping the
/// empty and `.` pieces, which is how `Path::components` reads an absolute
/// path (`//`, `/./` and a trailing `/` name nothing); the component
/// iterator for anything else. Same answer either way (unit test below); it
/// stops at the first piece that differs, so a root in another tree costs a
/// few bytes (a write check compares the path with every root).
pub(crate) fn under(path: &Path, root: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, r) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
    if p.first() != Some(&b'/') || r.first() != Some(&b'/') {
        return path.starts_with(root);
    }
    // The first pieces both start right after the leading `/` and differ
    // in their first byte (the loop below would stop there): most roots
    // are in another tree.
    if let (Some(&a), Some(&b)) = (p.get(1), r.get(1))
        && a != b
        && !matches!(a, b'/' | b'.')
        && !matches!(b, b'/' | b'.')
    {
        return false;
    }
    let (mut i, mut j) = (0, 0);
    loop {
        i = next_piece(p, i);
        j = next_piece(r, j);
        if j == r.len() {
            return true;
        }
        if i == p.len() {
            return false;
        }
        // The two pieces, byte by byte: equal when both end together.
        loop {
            let a = p.get(i).filter(|c| **c != b'/');
            let b = r.get(j).filter(|c| **c != b'/');
            match (a, b) {
                (None, None) => break,
                (Some(x), Some(y)) if x == y => (i, j) = (i + 1, j + 1),
                _ => return false,
            }
        }
    }
}

/// From `k`, past the separators and `.` pieces: where the next piece
/// starts, or the end.
fn next_piece(b: &[u8], mut k: usize) -> usize {
    loop {
        while b.get(k) == Some(&b'/') {
            k += 1;
        }
        if b.get(k) == Some(&b'.') && matches!(b.get(k + 1), None | Some(b'/')) {
            k += 1;
            continue;
        }
        return k;
    }
}

/// `path == other` (component-wise), by bytes for absolute paths.
pub(crate) fn same(path: &Path, other: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, o) = (path.as_os_str().as_bytes(), other.as_os_str().as_bytes());
    if p == o {
        return true;
    }
    if p.first() != Some(&b'/') || o.first() != Some(&b'/') {
        return path == other;
    }
    pieces(p).eq(pieces(o))
}

/// The components after the root of an absolute path, as bytes.
fn pieces(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    b.split(|&c| c == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
}

/// The components of `path` below `root` as `path.strip_prefix(root)`'s
/// `components()` read them, for an absolute path under an absolute root
/// (`under(path, root)`): its pieces ([`pieces`], how `Path::components`
/// reads an absolute path) after as many as the root has, without the
/// component iterator. `None` when either is relative.
fn abs_rel<'a>(path: &'a Path, root: &Path) -> Option<Vec<std::borrow::Cow<'a, str>>> {
    use std::os::unix::ffi::OsStrExt;
    let (p, r) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
    if p.first() != Some(&b'/') || r.first() != Some(&b'/') {
        return None;
    }
    Some(
        pieces(p)
            .skip(pieces(r).count())
            .map(String::from_utf8_lossy)
            .collect(),
    )
}

/// Whether a hit on a venv entry (`**/site-packages/*.pth`) is in a
/// `site-packages` directory that does not exist yet: the command creates
/// that environment itself, and the supervisor (which protects the venvs
/// that exist when the run starts) leaves its files alone, so the policy
/// does too. An existing venv's `.pth` files stay protected.
///
/// The other venv entries (`**/pyvenv.cfg`, `**/bin/activate*`: one
/// component after `**` or two) are the venv's when its base (what the
/// `**` stands for) has a pyvenv.cfg already: a `bin/activate` of a
/// directory that is no venv, or the pyvenv.cfg of a venv being made, is
/// the command's.
fn created_here(root: &Path, rel: &[std::borrow::Cow<'_, str>], pat: &[&str]) -> bool {
    let activate = |n: &str| n.to_ascii_lowercase().starts_with("activate");
    if matches!(pat, ["**", "pyvenv.cfg"]) || matches!(pat, ["**", "bin", n] if activate(n)) {
        let tail = pat.len() - 1;
        if rel.len() < tail {
            return false;
        }
        let base: PathBuf = rel[..rel.len() - tail]
            .iter()
            .fold(root.to_path_buf(), |p, c| p.join(&**c));
        return std::fs::symlink_metadata(base.join("pyvenv.cfg")).is_err();
    }
    // `dist-packages`: Debian's python's site directory, the same way.
    let Some(site) = ["site-packages", "dist-packages"]
        .into_iter()
        .find(|s| pat.contains(s))
    else {
        return false;
    };
    if !pat.contains(&"**") {
        return false;
    }
    let Some(i) = rel.iter().rposition(|c| c == site) else {
        return false;
    };
    let dir: PathBuf = rel[..=i]
        .iter()
        .fold(root.to_path_buf(), |p, c| p.join(&**c));
    std::fs::symlink_metadata(&dir).is_err()
}

/// `/proc/PID/...` of another process: its environment (with the secrets
/// safe-exec scrubbed from the command), memory maps and descriptors.
/// (`/proc/self` resolves to safe-exec's own pid while checking.)
fn other_process(path: &Path) -> Option<PathBuf> {
    let mut c = path.components().skip(1);
    let first = c.next()?.as_os_str().to_str()?;
    let pid = c.next()?.as_os_str().to_str()?;
    if first != "proc" || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if pid == std::process::id().to_string() {
        return None;
    }
    Some(PathBuf::from("/proc").join(pid))
}

/// Device files a command may always write to.
pub fn is_device_sink(path: &Path) -> bool {
    matches!(
        path.to_str(),
        Some("/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero" | "/dev/full")
    ) || path.starts_with("/dev/fd")
        || path.starts_with("/proc/self/fd")
        || path.starts_with("/dev/pts")
}

/// Paths that reach the network (`/dev/tcp/HOST/PORT` in bash).
pub fn is_network_path(path: &str) -> bool {
    path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/")
}

/// Whether a glob pattern (an absolute path with `*`, `?`, `[...]`) can
/// match the protected path `deny` or something inside it; with `tree`, also
/// a directory above it (a recursive read would descend into it). Leading
/// dots are matched too, which is stricter than bash without `dotglob`. A
/// `**` component (globstar) may stand for any number of directories, and
/// a component with an extglob (`@(...)`, `!(...)`, `+(...)`, `*(...)`,
/// `?(...)`) is taken to match any name.
pub fn glob_may_reach(pattern: &Path, deny: &Path, tree: bool) -> bool {
    let pc: Vec<String> = pattern
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let dc: Vec<String> = deny
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    for i in 0..pc.len().min(dc.len()) {
        if pc[i].contains("**") {
            return true;
        }
        if !component_may_match(&pc[i], &dc[i]) {
            return false;
        }
    }
    if pc.len() > dc.len() {
        return true;
    }
    // The pattern is shorter than the protected path: it names a directory
    // above it, reached only by a recursive operation (or a `**` later).
    tree || pc.len() == dc.len()
}

fn component_may_match(p: &str, s: &str) -> bool {
    let extglob = ["?(", "*(", "+(", "@(", "!("].iter().any(|e| p.contains(e));
    // `shopt -s nocaseglob` makes bash match without case: compare both ways.
    extglob
        || fnmatch(p.as_bytes(), s.as_bytes())
        || fnmatch(
            p.to_ascii_lowercase().as_bytes(),
            s.to_ascii_lowercase().as_bytes(),
        )
}

/// Whether a path pattern has a glob in one component and `..` in a later
/// one (`./.gi?/../../home/.bashrc`): where it leads depends on what the
/// glob matches on disk, so the fixed prefix says nothing about it.
pub fn glob_then_parent(pattern: &str) -> bool {
    let mut seen_glob = false;
    for c in pattern.split('/') {
        if c == ".." && seen_glob {
            return true;
        }
        if c.contains(['*', '?', '[']) || ["+(", "@(", "!("].iter().any(|e| c.contains(e)) {
            seen_glob = true;
        }
    }
    false
}

/// Whether the path components `tail` are the protected `entry` (split
/// into `pat`), or lie inside it when it is a tree (`dir/`). A `**` may
/// stand for no component, so a tree's shortest match is shorter than its
/// pattern (as in `config::refuse`).
fn entry_hit(entry: &str, pat: &[&str], tail: &[std::borrow::Cow<'_, str>]) -> bool {
    if entry.ends_with('/') {
        let stars = pat.iter().filter(|c| **c == "**").count();
        (pat.len() - stars..=tail.len()).any(|k| components_match(pat, &tail[..k]))
    } else {
        components_match(pat, tail)
    }
}

/// Path components against glob components, `**` matching any number.
fn components_match(pat: &[&str], path: &[std::borrow::Cow<'_, str>]) -> bool {
    match pat.first() {
        None => path.is_empty(),
        Some(&"**") => (0..=path.len()).any(|i| components_match(&pat[1..], &path[i..])),
        Some(p) => {
            !path.is_empty()
                && fnmatch(p.as_bytes(), path[0].as_bytes())
                && components_match(&pat[1..], &path[1..])
        }
    }
}

/// Shell pattern matching of one path component: `*`, `?`, and bracket
/// expressions in every form bash accepts: `[abc]`, `[a-z]`, `[!x]`, `[^x]`,
/// `[]x]`, POSIX classes `[[:alpha:]]`, equivalence classes `[[=a=]]`,
/// collating symbols `[[.a.]]`, and backslash escapes.
///
/// Iterative: every token but `*` matches exactly one byte, so only the
/// last `*` needs to be remembered and retried one byte further (O(n·m);
/// a recursive retry of every `*` is exponential in the number of stars,
/// and the glob expansion runs agent-chosen patterns on agent-made names).
pub fn fnmatch(p: &[u8], s: &[u8]) -> bool {
    // A pattern of plain bytes and at most one `*` (`.git`, `*.pth`,
    // `activate*`): equality, or a prefix and a suffix that do not
    // overlap, without the token loop (same answer: the reference test
    // below draws such patterns too).
    let mut star = None;
    let mut plain = true;
    for (i, b) in p.iter().enumerate() {
        match b {
            b'*' if star.is_none() => star = Some(i),
            b'*' | b'?' | b'[' | b'\\' => {
                plain = false;
                break;
            }
            _ => {}
        }
    }
    if plain {
        return match star {
            None => p == s,
            Some(i) => {
                let (pre, suf) = (&p[..i], &p[i + 1..]);
                s.len() >= pre.len() + suf.len() && s.starts_with(pre) && s.ends_with(suf)
            }
        };
    }
    fnmatch_tokens(p, s)
}

/// [`fnmatch`] for any pattern: token by token.
fn fnmatch_tokens(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    // After the last `*` seen: the pattern index and the name index it
    // was last tried from.
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p.get(pi) == Some(&b'*') {
            pi += 1;
            star = Some((pi, si));
            continue;
        }
        match s.get(si) {
            Some(&c) => {
                if let Some(used) = token_matches(&p[pi..], c) {
                    pi += used;
                    si += 1;
                    continue;
                }
            }
            None if pi == p.len() => return true,
            None => {}
        }
        match star {
            Some((sp, ss)) if ss < s.len() => {
                star = Some((sp, ss + 1));
                pi = sp;
                si = ss + 1;
            }
            _ => return false,
        }
    }
}

/// The pattern bytes the token at the start of `p` (not `*`) uses when it
/// matches the byte `c`, or `None` (also at the end of the pattern).
fn token_matches(p: &[u8], c: u8) -> Option<usize> {
    match p.first()? {
        b'?' => Some(1),
        b'\\' if p.len() > 1 => (p[1] == c).then_some(2),
        b'[' => match bracket(&p[1..]) {
            Some((set, used)) => set.matches(c).then_some(1 + used),
            None => (c == b'[').then_some(1),
        },
        &b => (b == c).then_some(1),
    }
}

/// A parsed bracket expression.
struct Bracket {
    negate: bool,
    items: Vec<Item>,
}

enum Item {
    Byte(u8),
    Range(u8, u8),
    Class(Vec<u8>),
}

impl Bracket {
    fn matches(&self, c: u8) -> bool {
        let hit = self.items.iter().any(|i| match i {
            Item::Byte(b) => *b == c,
            Item::Range(a, b) => *a <= c && c <= *b,
            Item::Class(name) => class_matches(name, c),
        });
        hit != self.negate
    }
}

fn class_matches(name: &[u8], c: u8) -> bool {
    match name {
        b"alpha" => c.is_ascii_alphabetic() || c >= 0x80,
        b"digit" => c.is_ascii_digit(),
        b"alnum" => c.is_ascii_alphanumeric() || c >= 0x80,
        b"upper" => c.is_ascii_uppercase() || c >= 0x80,
        b"lower" => c.is_ascii_lowercase() || c >= 0x80,
        b"space" => c.is_ascii_whitespace() || c == 0x0b,
        b"blank" => c == b' ' || c == b'\t',
        b"punct" => c.is_ascii_punctuation() || c >= 0x80,
        b"print" => !c.is_ascii_control(),
        b"graph" => c.is_ascii_graphic() || c >= 0x80,
        b"cntrl" => c.is_ascii_control(),
        b"xdigit" => c.is_ascii_hexdigit(),
        b"word" => c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80,
        // An unknown class name: assume it may match (stricter).
        _ => true,
    }
}

/// Parses the bracket expression after `[`; returns it and the bytes used
/// (through the closing `]`), or `None` when it is not terminated (then the
/// `[` is literal).
fn bracket(p: &[u8]) -> Option<(Bracket, usize)> {
    let mut i = 0;
    let negate = matches!(p.first(), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    loop {
        let c = *p.get(i)?;
        if c == b']' && !first {
            return Some((Bracket { negate, items }, i + 1));
        }
        first = false;
        // `[:class:]`, `[=c=]`, `[.c.]`
        if c == b'['
            && let Some(&kind) = p.get(i + 1)
            && matches!(kind, b':' | b'=' | b'.')
        {
            let body = &p[i + 2..];
            if let Some(end) = body.windows(2).position(|w| w[0] == kind && w[1] == b']') {
                let name = body[..end].to_vec();
                items.push(match kind {
                    b':' => Item::Class(name),
                    // Equivalence classes and collating symbols: any of
                    // their bytes (a multi-byte name could be anything).
                    _ if name.len() == 1 => Item::Byte(name[0]),
                    _ => Item::Range(0, 255),
                });
                i += 2 + end + 2;
                continue;
            }
        }
        let (lo, used) = if c == b'\\' {
            (*p.get(i + 1)?, 2)
        } else {
            (c, 1)
        };
        if p.get(i + used) == Some(&b'-') && p.get(i + used + 1).is_some_and(|n| *n != b']') {
            let hi_at = i + used + 1;
            let (hi, hused) = if p[hi_at] == b'\\' {
                (*p.get(hi_at + 1)?, 2)
            } else {
                (p[hi_at], 1)
            };
            items.push(Item::Range(lo, hi));
            i = hi_at + hused;
        } else {
            items.push(Item::Byte(lo));
            i += used;
        }
    }
}

#[cfg(test)]
mod tests {
    /// The recursive matcher `fnmatch` was before it was made iterative:
    /// the reference its semantics are kept against.
    fn fnmatch_recursive(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'*') => (0..=s.len()).any(|i| fnmatch_recursive(&p[1..], &s[i..])),
            Some(b'?') => !s.is_empty() && fnmatch_recursive(&p[1..], &s[1..]),
            Some(b'\\') if p.len() > 1 => {
                s.first() == Some(&p[1]) && fnmatch_recursive(&p[2..], &s[1..])
            }
            Some(b'[') => match bracket(&p[1..]) {
                Some((set, used)) => {
                    let Some(&c) = s.first() else { return false };
                    set.matches(c) && fnmatch_recursive(&p[1 + used..], &s[1..])
                }
                None => s.first() == Some(&b'[') && fnmatch_recursive(&p[1..], &s[1..]),
            },
            Some(c) => s.first() == Some(c) && fnmatch_recursive(&p[1..], &s[1..]),
        }
    }

    #[test]
    fn fnmatch_iterative_matches_the_recursive_reference() {
        // Patterns and names drawn from a small alphabet that holds every
        // token kind, so that matches and near misses both occur often.
        const PAT: &[&str] = &[
            "*",
            "?",
            "a",
            "b",
            ".",
            "\\",
            "\\*",
            "\\a",
            "[ab]",
            "[!a]",
            "[^b]",
            "[]a]",
            "[a-c]",
            "[[:alpha:]]",
            "[[:digit:]]",
            "[",
            "]",
            "[*]",
            "[\\]]",
            "**",
            "[!]",
        ];
        const NAME: &[u8] = b"ab.*[]\\1c";
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut matched = 0;
        for _ in 0..200_000 {
            let pat: String = (0..next(7)).map(|_| PAT[next(PAT.len())]).collect();
            let name: Vec<u8> = (0..next(8)).map(|_| NAME[next(NAME.len())]).collect();
            let want = fnmatch_recursive(pat.as_bytes(), &name);
            assert_eq!(
                fnmatch(pat.as_bytes(), &name),
                want,
                "{pat:?} {:?}",
                String::from_utf8_lossy(&name)
            );
            matched += usize::from(want);
        }
        assert!(matched > 10_000, "{matched}");
    }

    #[test]
    fn fnmatch_many_stars_is_fast() {
        let name = "a".repeat(200);
        let start = std::time::Instant::now();
        assert!(!fnmatch(b"*a*a*a*a*a*a*a*a*a*a*b", name.as_bytes()));
        assert!(fnmatch(b"*a*a*a*a*a*a*a*a*a*a*", name.as_bytes()));
        assert!(start.elapsed() < std::time::Duration::from_millis(100));
    }

    #[test]
    fn under_and_same_agree_with_path_components() {
        let spellings = [
            "/",
            "//",
            "/a",
            "/a/",
            "/a//b",
            "/a/./b",
            "/a/.",
            "/a/b",
            "/a/b/",
            "/a/bc",
            "/a/b/c",
            "/a/../b",
            "/a/b/..",
            "/ab",
            "a",
            "a/b",
            "",
            ".",
            "/home/user",
            "/home/user/.ssh",
            "/home/username",
            "/home/user/.ssh/id_rsa",
            "/home/./user",
            "/.",
            "/./",
            "///a",
            "/a/./",
            "/./a",
            "/a/b/./c//",
            "/home/user/",
            "/home//user",
            "/home/user/.",
            "/home/user/..",
            "./a",
            "../a",
        ];
        for x in spellings {
            for y in spellings {
                let (px, py) = (Path::new(x), Path::new(y));
                assert_eq!(under(px, py), px.starts_with(py), "under({x:?}, {y:?})");
                assert_eq!(same(px, py), px == py, "same({x:?}, {y:?})");
            }
        }
        // Generated spellings: every mix of separators, `.`, `..` and names.
        const PIECES: &[&str] = &["/", "/", "//", ".", "..", "a", "b", "ab", "/.", "./"];
        let mut next = crate::sys::testing::xorshift(0x1234_5678_9ABC_DEF1);
        let mut spelling = || -> String {
            let n = (next() % 7) as usize;
            let mut s = String::from(if next().is_multiple_of(8) { "" } else { "/" });
            for _ in 0..n {
                s.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            s
        };
        for _ in 0..200_000 {
            let (x, y) = (spelling(), spelling());
            let (px, py) = (Path::new(&x), Path::new(&y));
            assert_eq!(under(px, py), px.starts_with(py), "under({x:?}, {y:?})");
            assert_eq!(under(py, px), py.starts_with(px), "under({y:?}, {x:?})");
            assert_eq!(same(px, py), px == py, "same({x:?}, {y:?})");
        }
    }

    use super::*;

    #[test]
    fn canonicalize_agrees_with_realpath() {
        let d = tempfile::tempdir().expect("tmp");
        let root = std::fs::canonicalize(d.path()).expect("canon");
        std::fs::create_dir_all(root.join("a/b/c")).expect("mk");
        std::fs::write(root.join("a/b/c/f"), "x").expect("w");
        std::os::unix::fs::symlink(root.join("a/b"), root.join("l1")).expect("ln");
        std::os::unix::fs::symlink("l1/c", root.join("l2")).expect("ln");
        std::os::unix::fs::symlink("/nonexistent-target", root.join("dangling")).expect("ln");
        for rel in [
            "a",
            "a/b/c/f",
            "l1",
            "l2",
            "l2/f",
            "l1/../a",
            "a/./b//c/",
            "l2/../c",
            "dangling",
            "missing",
            "a/missing/x",
            "a/b/c/f/x",
        ] {
            let p = root.join(rel);
            assert_eq!(
                canonicalize(&p).ok(),
                std::fs::canonicalize(&p).ok(),
                "{rel}"
            );
        }
        assert_eq!(canonicalize(Path::new("/")).ok(), Some(PathBuf::from("/")));
        assert!(canonicalize(Path::new("")).is_err());
    }

    /// `protected_hit` before the first-component skip: every entry split
    /// and compared in full.
    fn protected_hit_full(r: &Roots, path: &Path, destructive: bool) -> Option<PathBuf> {
        for root in &r.write {
            if !under(path, root) {
                continue;
            }
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let rel: Vec<std::borrow::Cow<'_, str>> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect();
            for entry in &r.protected {
                let tree = entry.ends_with('/');
                let pat: Vec<&str> = entry
                    .trim_end_matches('/')
                    .split('/')
                    .filter(|c| !c.is_empty() && *c != ".")
                    .collect();
                if pat.is_empty() {
                    continue;
                }
                let inside = if tree {
                    (pat.len()..=rel.len()).any(|k| components_match(&pat, &rel[..k]))
                } else {
                    components_match(&pat, &rel)
                };
                let holds = destructive
                    && rel.len() < pat.len()
                    && !pat[..rel.len()].contains(&"**")
                    && rel
                        .iter()
                        .zip(&pat)
                        .all(|(r, p)| fnmatch(p.as_bytes(), r.as_bytes()));
                if inside && !holds && created_here(root, &rel, &pat) {
                    continue;
                }
                if inside || holds {
                    return Some(root.join(entry.trim_end_matches('/')));
                }
            }
        }
        None
    }

    /// `abs_rel` reads what `strip_prefix` and `components` read, for odd
    /// spellings too (doubled and trailing slashes, `.`, `..`, non-UTF-8).
    #[test]
    fn abs_rel_equals_strip_prefix_components() {
        use std::os::unix::ffi::OsStrExt;
        let spell = [
            "/",
            "//",
            "/p",
            "/p/",
            "//p",
            "/./p",
            "/p/.",
            "/p/q",
            "/p//q/",
            "/p/./q",
            "/p/../q",
            "/p/q/.git",
            "/p/q/./.git//config/",
            "/t/%ff/x",
            "/p/..",
            "/pq/r",
        ];
        let bytes = |s: &str| {
            // `%ff` stands for the byte 0xff (a name that is not UTF-8).
            let mut out = s.replace("%ff", "\u{1}").into_bytes();
            for b in &mut out {
                if *b == 1 {
                    *b = 0xff;
                }
            }
            out
        };
        let mut compared = 0;
        for r in &spell {
            for p in &spell {
                let (rb, pb) = (bytes(r), bytes(p));
                let (root, path) = (
                    Path::new(std::ffi::OsStr::from_bytes(&rb)),
                    Path::new(std::ffi::OsStr::from_bytes(&pb)),
                );
                if !under(path, root) {
                    continue;
                }
                let want: Vec<std::borrow::Cow<'_, str>> = path
                    .strip_prefix(root)
                    .map(|rel| {
                        rel.components()
                            .map(|c| c.as_os_str().to_string_lossy())
                            .collect()
                    })
                    .unwrap_or_default();
                assert_eq!(abs_rel(path, root), Some(want), "{p:?} under {r:?}");
                compared += 1;
            }
        }
        assert!(compared > 40, "{compared}");
        assert_eq!(abs_rel(Path::new("p/q"), Path::new("p")), None);
    }

    /// The first-component skip in `protected_hit` answers as comparing
    /// every entry in full, for the default profile's entries and odd ones
    /// (`**` first, `./x`, doubled and trailing slashes, globs and
    /// brackets in the first component, empty), over generated paths in,
    /// at and outside the writable roots, destructive or not.
    #[test]
    fn protected_hit_equals_the_full_comparison() {
        // The default profile's entries, odd ones, then both with `**`
        // (which holds every path) last: each list's hits come from
        // different entries.
        let default = [
            ".git",
            ".git/config",
            ".git/hooks/",
            ".git/modules/**/config",
            ".git/worktrees/*/gitdir",
            ".claude/",
            ".mcp.json",
            ".cargo/config*",
            "**/site-packages/*.pth",
            ".config/git/config",
            ".local/bin/",
        ];
        let odd = [
            "./x/y",
            "*/z",
            "[.]git/",
            "[!a]*/b",
            ".git//config",
            "//a/",
            "",
            "/",
            ".",
            "a/**/b/",
            "?",
            "\\*x",
            "é/ü",
            "*",
            "**/bin/activate*",
            "**/x",
            "**/*/y",
            "**/./z",
        ];
        let lists: Vec<Vec<String>> = vec![
            default.map(String::from).to_vec(),
            odd.map(String::from).to_vec(),
            default
                .iter()
                .chain(&odd)
                .chain(&["**", "**/"])
                .map(|e| e.to_string())
                .collect(),
        ];
        let comps = [
            ".git",
            "config",
            "hooks",
            "modules",
            "m",
            "worktrees",
            "gitdir",
            ".claude",
            "x",
            "y",
            "z",
            "a",
            "b",
            "site-packages",
            "a.pth",
            "*x",
            ".cargo",
            "config.toml",
            "q",
            "é",
            "ü",
            "[.]git",
            "target",
            "bin",
            ".local",
            "activate",
            "activate.fish",
        ];
        let bases = ["/p", "/p/q", "/t", "/", "/o", "/pp"];
        let mut next = crate::sys::testing::xorshift_below(0x1234_5678_9abc_def1);
        let mut hits = [0; 3];
        for (n, protected) in lists.into_iter().enumerate() {
            let r = Roots {
                write: vec![
                    PathBuf::from("/p"),
                    PathBuf::from("/p/q"),
                    PathBuf::from("/t"),
                ],
                protected,
                ..Default::default()
            };
            for _ in 0..20_000 {
                let mut p = PathBuf::from(bases[next(bases.len())]);
                for _ in 0..next(5) {
                    p.push(comps[next(comps.len())]);
                }
                for destructive in [false, true] {
                    let want = protected_hit_full(&r, &p, destructive);
                    hits[n] += usize::from(want.is_some());
                    assert_eq!(
                        r.protected_hit(&p, destructive),
                        want,
                        "{p:?} {destructive}"
                    );
                }
            }
        }
        assert!(hits.iter().all(|h| *h > 1000), "{hits:?}");
    }

    fn project() -> Roots {
        Roots {
            read: vec![PathBuf::from("/")],
            write: vec![PathBuf::from("/p"), PathBuf::from("/t")],
            home: PathBuf::from("/home/u"),
            protected: [
                ".git/config",
                ".git/hooks/",
                ".claude/",
                ".cargo/config*",
                "**/site-packages/*.pth",
            ]
            .map(String::from)
            .to_vec(),
            secret_names: [".env", ".env.*", "!.env.example"]
                .map(String::from)
                .to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn protected_files_in_every_root() {
        let r = project();
        let hit = |p: &str, d: bool| r.protected_hit(Path::new(p), d);
        assert_eq!(
            hit("/p/.git/config", false),
            Some(PathBuf::from("/p/.git/config"))
        );
        assert_eq!(
            hit("/t/.git/config", false),
            Some(PathBuf::from("/t/.git/config"))
        );
        assert!(hit("/p/.git/hooks/pre-commit", false).is_some());
        assert!(hit("/p/.git/hooks", false).is_some());
        assert!(hit("/p/.claude/settings.json", false).is_some());
        assert!(hit("/p/.cargo/config.toml", false).is_some());
        // A venv's `.pth` is protected when the venv exists before the
        // command; one the command creates itself is its own (as in the
        // supervisor).
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_path_buf();
        let sp = root.join(".venv/lib/python3.12/site-packages");
        std::fs::create_dir_all(&sp).expect("mkdir");
        let mut r2 = project();
        r2.write = vec![root.clone()];
        assert!(
            r2.protected_hit(&sp.join("evil.pth"), false).is_some(),
            "existing venv"
        );
        assert!(r2.protected_hit(&sp.join("keep.pth"), true).is_some());
        assert!(
            r2.protected_hit(
                &root.join("new/lib/python3.12/site-packages/own.pth"),
                false
            )
            .is_none(),
            "a venv the command creates is its own"
        );
        assert!(
            hit("/p/.git", true).is_some(),
            "rm -rf .git removes .git/config"
        );
        assert!(hit("/p", true).is_some());
        // Positive controls.
        assert!(hit("/p/.git", false).is_none());
        assert!(hit("/p/.git/HEAD", false).is_none());
        assert!(hit("/p/src/.git/config", false).is_none());
        assert!(hit("/p/.venv", false).is_none());
        assert!(hit("/p/src", true).is_none());
        assert!(hit("/elsewhere/.git/config", false).is_none());
        assert_eq!(
            r.check_write(Path::new("/p/.claude/x"), false),
            Err(PathProblem::Protected(PathBuf::from("/p/.claude")))
        );
        assert!(r.check_write(Path::new("/p/src/x"), false).is_ok());
    }

    #[test]
    fn secret_names_with_exceptions() {
        let r = project();
        for s in [
            "/p/.env",
            "/p/.env.local",
            "/p/sub/.env.production",
            "/home/u/x/.env",
        ] {
            assert!(r.is_secret_name(Path::new(s)), "{s}");
            assert!(
                matches!(r.check_read(Path::new(s)), Err(PathProblem::Secret(_))),
                "{s}"
            );
        }
        for s in ["/p/.env.example", "/p/env", "/p/.envrc", "/p/x.env"] {
            assert!(!r.is_secret_name(Path::new(s)), "{s}");
        }
    }

    #[test]
    fn globs_that_reach_protected_paths() {
        let deny = Path::new("/home/u/.ssh");
        assert!(glob_may_reach(
            Path::new("/home/u/.ss?/id_rsa"),
            deny,
            false
        ));
        assert!(glob_may_reach(
            Path::new("/home/u/.[s]sh/id_rsa"),
            deny,
            false
        ));
        assert!(glob_may_reach(Path::new("/home/u/*/id_rsa"), deny, false));
        assert!(!glob_may_reach(Path::new("/home/u/src/*.rs"), deny, false));
        assert!(glob_may_reach(Path::new("/home/u/.s*"), deny, false));
        assert!(!glob_may_reach(Path::new("/home/*"), deny, false));
        assert!(glob_may_reach(Path::new("/home/u/.s*"), deny, true));
        assert!(fnmatch(b"[!a]b", b"cb") && !fnmatch(b"[!a]b", b"ab"));
        // Every bracket form bash knows.
        for p in [
            "/home/u/.ss[[:alpha:]]/id_rsa",
            "/home/u/.ss[[:lower:]]/id_rsa",
            "/home/u/.ss[[=h=]]/id_rsa",
            "/home/u/.ss[[.h.]]/id_rsa",
            "/home/u/.ss[]h]/id_rsa",
            "/home/u/.ss[\\h]/id_rsa",
            "/home/u/.ss[^a]/id_rsa",
            "/home/u/.ss[a-z]/id_rsa",
            "/home/u/.@(ssh)/id_rsa",
            "/home/u/.!(x)/id_rsa",
            "/home/**/id_rsa",
            "/**/id_rsa",
        ] {
            assert!(glob_may_reach(Path::new(p), deny, false), "{p}");
        }
        assert!(!glob_may_reach(
            Path::new("/home/u/.ss[[:digit:]]/id_rsa"),
            deny,
            false
        ));
        assert!(!fnmatch(b"[[:digit:]]", b"h"));
        assert!(glob_then_parent("./.gi?/../../home/.bashrc"));
        assert!(glob_then_parent("./*/.."));
        assert!(glob_then_parent("@(x)/../y"));
        assert!(!glob_then_parent("../src/*.rs"));
    }
}
