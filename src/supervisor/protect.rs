//! Protected files inside the writable roots (rows X1-X3): snapshot before
//! the run, compare after the whole tree has exited, restore, report.
//!
//! Patterns are relative to each writable root: `a/b` one path, `a/` a
//! directory tree, `*` within one component, `**` any number of
//! directories. `**/site-packages/*.pth` is found through the venvs'
//! `pyvenv.cfg` (the root itself and two levels below it, and three levels
//! below under the names `.venv`, `venv`, `env`), never by walking the tree; a leading `**` of other patterns is walked skipping
//! node_modules, .git and target; a `**` after a fixed prefix
//! (`.git/modules/**/config`) is walked whole, except that inside a git
//! directory only its `modules/` is entered.
//!
//! Every bound fails closed (F2): a snapshot that cannot cover a protected
//! path (a tree of more than [`MAX_TREE`] entries, a `**` walk past
//! [`MAX_DIRS`] directories or [`MAX_DEPTH`] levels, a file larger than
//! what is left of [`MAX_BYTES`] or unreadable) refuses the run before the
//! command starts ([`Snapshot::refused`]). After the run nothing is
//! bounded: every entry of a protected tree is compared, what was not in
//! the snapshot is removed whole without being walked, and a directory a
//! `**` walk did not see before the run that lies past the bound is removed
//! whole. The restore's writes go through descriptors ([`at`]).

mod at;
pub mod gitlinks;
use crate::sys::hookspath;

/// Whether snapshots read the user's global and system git configuration
/// for `core.hooksPath` ([`read_git_globals`]).
static GIT_GLOBALS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Lets the snapshots of this process read the user's global and system
/// git configuration (`~/.gitconfig`, `/etc/gitconfig`, as git finds them
/// from the environment) for a `core.hooksPath` inside a root. A run
/// (`run::execute`) turns it on; a snapshot taken directly (unit tests)
/// reads only the repository's own configuration, never the real HOME's
/// or `/etc`'s.
pub fn read_git_globals() {
    GIT_GLOBALS.store(true, std::sync::atomic::Ordering::Relaxed);
}
pub mod shared;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::fs;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// Most bytes of protected content kept in memory per run.
const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Most entries below one protected directory tree.
const MAX_TREE: usize = 10_000;
/// Most directories one `**` walk lists before the run.
const MAX_DIRS: usize = 4000;
/// Deepest level of a `**` walk below where the `**` starts.
const MAX_DEPTH: usize = 16;
/// Protected links whose targets are snapshotted too ([`Snapshot::take`]).
const MAX_LINK_TARGETS: usize = 256;

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
    /// A FIFO, socket or device (`kind`: the `S_IFMT` bits).
    Special {
        kind: u32,
        mode: u32,
    },
    /// An ancestor inside the root is not a real directory (a symlink
    /// planted to redirect the path).
    Tampered,
    /// A regular file that could not be kept (too large, unreadable): the
    /// snapshot refuses the run; after the run, a change.
    Unreadable(String),
}

/// The protected set of every root at one moment.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Each path's root (the one it was found under: a path under two
    /// nested roots, a project in TMPDIR, is found under both and kept
    /// with the last), its path relative to that root, and its state.
    /// Keyed by the absolute path's bytes (see [`sort_paths`]).
    entries: BTreeMap<OsString, (PathBuf, PathBuf, State)>,
    /// Notes for the report (not refusals).
    pub notes: Vec<String>,
    /// Why this snapshot does not cover every protected path: when not
    /// empty the command must not start, and [`Snapshot::restore`] does
    /// nothing (an incomplete snapshot would call what it missed new).
    pub refused: Vec<String>,
    /// venvs that existed before the run.
    venvs: BTreeSet<PathBuf>,
    /// Directories a `**` walk listed before the run (absolute, as bytes).
    walked: BTreeSet<OsString>,
    /// Directories on the way to protected paths that were real
    /// directories before the run (absolute, as bytes): root, path
    /// relative to it, mode. One that is a symlink, a file or anything
    /// but a directory after the run is a change (F1 of red team 9: a
    /// venv or its `lib` swapped for a symlink to a copy holding a new
    /// `.pth`): it is put back as a directory, so that nothing the
    /// command planted is reachable through it. Missing is not a change
    /// (nothing is reachable through a missing directory, and one made
    /// again is a real directory the comparison lists).
    ways: BTreeMap<OsString, (PathBuf, PathBuf, u32)>,
    /// Directories `core.hooksPath` names inside each root (protected as
    /// trees, like `.git/hooks/`), as extra patterns per root.
    hooks: Vec<(PathBuf, Vec<String>)>,
    /// Each root's `(dev, ino)` before the run.
    root_ids: BTreeMap<PathBuf, (u64, u64)>,
    /// Protected regular files that already had other names (a link count
    /// above one) before the run, as this run saw them (absolute, as bytes):
    /// the file (`dev`, `ino`) and its link count. A path whose state was
    /// taken from another run's baseline ([`shared`]) is not here.
    linked: BTreeMap<OsString, (u64, u64, u64)>,
    /// Each root's submodules before the run ([`gitlinks`]; only when the
    /// patterns protect `.git`): extra protected paths, and the indexes to
    /// read again for new gitlinks.
    git: Vec<(PathBuf, gitlinks::Before)>,
    /// Where another confined run's roots overlapped this run's while it
    /// was active (at this run's start or end, see [`shared`]; of two
    /// nested roots, the inner): a change the restore finds there may be
    /// that run's command's, and the report says so instead of blaming
    /// this run's command.
    pub concurrent: Vec<PathBuf>,
}

/// Whether the patterns protect the repository's git directory (then its
/// submodules' are protected too, see [`gitlinks`]).
fn protects_git(patterns: &[String]) -> bool {
    patterns
        .iter()
        .any(|p| p == ".git" || p.starts_with(".git/"))
}

/// Which pass [`covered`] serves.
struct Pass<'a> {
    /// `None`: the snapshot itself; `Some`: the comparison after the run.
    before: Option<&'a Snapshot>,
    /// Before the run: the bounds that were hit.
    refused: Vec<String>,
    /// Before the run: the directories `**` walks listed.
    walked: BTreeSet<OsString>,
    /// After the run: directories that could not be listed (a directory
    /// the command made unreadable and renamed into place): removed whole,
    /// then rebuilt from the snapshot.
    unlistable: Vec<(PathBuf, PathBuf)>,
    /// Before the run: directories on the way to the patterns' matches
    /// (a venv and its `lib`, `site-packages`, `bin`; the fixed part of a
    /// pattern with globs), `(root, rel)`; kept in [`Snapshot::ways`] when
    /// they are real directories.
    ways: Vec<(PathBuf, PathBuf)>,
    /// After the run: directories a `**` walk listed before the run that
    /// are now something else (a symlink, a file).
    broken: Vec<(PathBuf, PathBuf)>,
}

/// Whether a listing failed for a reason other than the directory being
/// gone (or no longer a directory).
fn unlistable(e: &std::io::Error) -> bool {
    !matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

impl Pass<'_> {
    /// Whether `abs` was a directory of a protected tree before the run.
    fn was_dir(&self, abs: &Path) -> bool {
        self.before.is_some_and(|b| {
            matches!(
                b.entries.get(abs.as_os_str()),
                Some((_, _, State::Dir { .. }))
            )
        })
    }
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
///
/// The maps hash with foldhash (a pass asks ~40 paths of ~30 bytes per
/// root several times each; SipHash was a quarter of a pass). Its seed is
/// per process; the keys are the pass's own paths, at most a few thousand.
struct Probe {
    /// `lstat` of each path asked about (`None`: missing or unreadable).
    meta: HashMap<OsString, Option<fs::Metadata>, foldhash::fast::RandomState>,
    /// Directories listed in this pass: each entry's name and whether it
    /// is a directory (`d_type`, not following symlinks).
    listed: HashMap<OsString, Vec<(OsString, bool)>, foldhash::fast::RandomState>,
    /// [`Probe::has_no_subdirs`]'s answers (each venv pattern asks it of
    /// the same directories: one `statfs` each, not one per pattern).
    no_subdirs: HashMap<OsString, bool, foldhash::fast::RandomState>,
    /// The venvs three levels below each root (red team 10 F10), looked up
    /// once per pass, not once per venv pattern.
    deep_venvs: HashMap<OsString, Vec<PathBuf>, foldhash::fast::RandomState>,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            // Room for the plain run's paths (~60 per pass) without growing.
            meta: HashMap::with_capacity_and_hasher(64, Default::default()),
            listed: HashMap::with_capacity_and_hasher(8, Default::default()),
            no_subdirs: HashMap::with_capacity_and_hasher(8, Default::default()),
            deep_venvs: HashMap::default(),
        }
    }
}

/// The entries of `dir` but `.` and `..` (name, is a directory, not
/// following symlinks), at most `max` of them: `std::fs::read_dir` without
/// the C library's `opendir`, whose buffer musl's allocator maps and
/// unmaps for each listing (an `munmap` in a process whose other thread
/// runs on another CPU is a TLB shootdown). The types come from
/// `getdents64`, or an `lstat` of the entry where the file system does not
/// give them, as `std::fs` does. An error reading the directory part-way
/// fails the whole listing (each caller then treats the directory as one
/// it cannot list).
fn list_dir(dir: &Path, max: usize) -> std::io::Result<Vec<(OsString, bool)>> {
    use crate::sandbox::fds::{dirents, getdents};
    use std::os::unix::ffi::OsStrExt;
    let flags =
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_CLOEXEC;
    let fd = nix::fcntl::open(dir, flags, nix::sys::stat::Mode::empty())
        .map_err(std::io::Error::from)?;
    let mut buf = vec![0u8; 4096];
    let mut out = Vec::new();
    loop {
        let n = getdents(fd.as_raw_fd(), &mut buf).map_err(std::io::Error::from_raw_os_error)?;
        if n == 0 {
            return Ok(out);
        }
        for (name, d_type) in dirents(&buf[..n]) {
            if name == b"." || name == b".." {
                continue;
            }
            if out.len() >= max {
                return Ok(out);
            }
            let name = std::ffi::OsStr::from_bytes(name);
            let is_dir = match d_type {
                libc::DT_DIR => true,
                libc::DT_UNKNOWN => {
                    nix::sys::stat::fstatat(&fd, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
                        .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR)
                }
                _ => false,
            };
            out.push((name.to_os_string(), is_dir));
        }
    }
}

/// `root.join(rel)` allocated once at its final size (`Path::join` copies
/// `root` into a buffer of its own length, then grows it for `rel`).
fn join(root: &Path, rel: &Path) -> PathBuf {
    let mut p = PathBuf::with_capacity(root.as_os_str().len() + 1 + rel.as_os_str().len());
    p.push(root);
    p.push(rel);
    p
}

/// `p`'s parent and last component on its bytes: `None` for a path
/// without a `/` after its first byte, or ending in `/`, `.` or `..` (the
/// probe then asks the filesystem, as it would for any path it knows
/// nothing about). For the paths a pass builds (a root joined with entry
/// names) it is what `Path::parent` and `Path::file_name` give.
fn split_last(p: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    use std::os::unix::ffi::OsStrExt;
    let b = p.as_os_str().as_bytes();
    let at = b.iter().rposition(|c| *c == b'/')?;
    let name = &b[at + 1..];
    if at == 0 || name.is_empty() || name == b"." || name == b".." {
        return None;
    }
    Some((
        Path::new(std::ffi::OsStr::from_bytes(&b[..at])),
        std::ffi::OsStr::from_bytes(name),
    ))
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
        let known_missing = match split_last(p) {
            Some((parent, name)) => {
                self.absent(parent, name)
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

    /// Whether this pass listed `dir` and `name` is not in it (no syscall,
    /// no allocation: the listing is sorted by name).
    fn absent(&self, dir: &Path, name: &std::ffi::OsStr) -> bool {
        self.listed.get(dir.as_os_str()).is_some_and(|es| {
            es.binary_search_by(|(n, _)| n.as_os_str().cmp(name))
                .is_err()
        })
    }

    /// The entries of `dir` (name, is a directory), listed once per pass,
    /// sorted by name.
    fn list(&mut self, dir: &Path) -> Option<&[(OsString, bool)]> {
        if !self.listed.contains_key(dir.as_os_str()) {
            let mut es = list_dir(dir, usize::MAX).ok()?;
            es.sort_unstable_by(|a, b| a.0.cmp(&b.0));
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
        if let Some(known) = self.no_subdirs.get(dir.as_os_str()) {
            return *known;
        }
        let none = self
            .lstat(dir)
            .is_some_and(|m| m.is_dir() && m.nlink() == 2)
            && statfs(dir).is_ok_and(|f| {
                let t = f.filesystem_type();
                t == EXT4_SUPER_MAGIC || t == TMPFS_MAGIC || t == XFS_SUPER_MAGIC
            });
        self.no_subdirs.insert(dir.as_os_str().to_owned(), none);
        none
    }
}

/// XFS's magic number (`XFSB`): nix names it for glibc targets only.
const XFS_SUPER_MAGIC: nix::sys::statfs::FsType = nix::sys::statfs::FsType(0x5846_5342);

fn ancestors_real(probe: &mut Probe, root: &Path, rel: &Path) -> bool {
    ancestors(probe, root, rel) != Some(false)
}

/// `Some(true)`: every ancestor inside the root is a real directory;
/// `None`: one is missing (so is the path: no `lstat` of it needed);
/// `Some(false)`: one is not a directory (a planted symlink or file).
fn ancestors(probe: &mut Probe, root: &Path, rel: &Path) -> Option<bool> {
    let mut comps = rel.components();
    // The last component is the path itself, not an ancestor.
    if comps.next_back().is_none() {
        return Some(true);
    }
    let mut cur: Option<PathBuf> = None;
    for c in comps {
        let p = cur.get_or_insert_with(|| {
            let mut p = PathBuf::with_capacity(root.as_os_str().len() + 1 + rel.as_os_str().len());
            p.push(root);
            p
        });
        p.push(c);
        match probe.lstat(p) {
            Some(m) if m.is_dir() => {}
            Some(_) => return Some(false),
            None => return None,
        }
    }
    Some(true)
}

const SKIP: [&str; 3] = ["node_modules", ".git", "target"];

/// The names venv tools give a venv (uv, poetry's and PDM's in-project
/// venvs, `python -m venv venv`, `virtualenv env`): looked for three levels
/// below a root, where directories are not all looked into.
const VENV_NAMES: [&str; 3] = [".venv", "venv", "env"];

/// How many directories two levels below a root are looked into for a
/// venv of [`VENV_NAMES`] (one `lstat` per name each).
const DEEP_VENV_DIRS: usize = 256;

/// How a repository nested below a root keeps its git directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nested {
    /// A `.git` directory.
    Dir,
    /// A `.git` file naming the git directory (a linked worktree, a
    /// submodule's checkout, `git init --separate-git-dir`; review 11 F7).
    Gitfile,
    /// The directory is a bare-layout git directory itself (`git clone
    /// --bare`, a separate git directory; review 11 F4).
    Bare,
}

/// The directories one or two levels below `root` (not skipped ones, not
/// through symlinks) that hold a `.git` directory or gitfile, and those one
/// level below that are bare-layout git directories (found in the listing
/// the walk makes anyway): nested repositories.
fn nested_repositories(probe: &mut Probe, root: &Path) -> Vec<(PathBuf, Nested)> {
    let mut out = Vec::new();
    let mut frontier = vec![PathBuf::new()];
    for level in 0..2 {
        let mut next = Vec::new();
        for b in &frontier {
            let dir = root.join(b);
            if probe.has_no_subdirs(&dir) {
                continue;
            }
            let names: Vec<OsString> = match probe.list(&dir) {
                Some(es) if level > 0 && is_git_dir(es) => {
                    out.push((b.clone(), Nested::Bare));
                    continue;
                }
                Some(es) => es
                    .iter()
                    .filter(|(n, d)| *d && !SKIP.iter().any(|s| n == *s))
                    .map(|(n, _)| n.clone())
                    .collect(),
                None => continue,
            };
            for n in names {
                let rel = b.join(&n);
                match probe.lstat(&root.join(&rel).join(".git")) {
                    Some(m) if m.is_dir() => out.push((rel.clone(), Nested::Dir)),
                    Some(m) if m.is_file() => out.push((rel.clone(), Nested::Gitfile)),
                    _ => {}
                }
                next.push(rel);
            }
        }
        frontier = next;
    }
    out
}

/// The git directory a gitfile `top/.git` names, and its common directory
/// (`commondir`), as they are now; `None` when it names none.
fn gitfile_dirs(top: &Path) -> Option<(PathBuf, PathBuf)> {
    let text = hookspath::read_bounded(&top.join(".git")).ok()??;
    let g = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    if g.is_empty() {
        return None;
    }
    let gitdir = crate::sys::path::join_physical(top, g);
    let common = match hookspath::read_bounded(&gitdir.join("commondir")) {
        Ok(Some(c)) => crate::sys::path::join_physical(&gitdir, c.trim_end_matches(['\n', '\r'])),
        _ => gitdir.clone(),
    };
    Some((gitdir, common))
}

/// The patterns of a git directory at `dir` (absolute) that make it run
/// code or read configuration elsewhere, relative to the root (of
/// `roots`, the innermost) that holds it; nothing when no root does.
fn git_dir_patterns(dir: &Path, roots: &[PathBuf], out: &mut Vec<(PathBuf, String)>) {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let Some(root) = roots
        .iter()
        .filter(|r| dir.starts_with(r))
        .max_by_key(|r| r.as_os_str().len())
    else {
        return;
    };
    let Ok(rel) = dir.strip_prefix(root) else {
        return;
    };
    if rel.as_os_str().is_empty() {
        return;
    }
    let rel = rel.display();
    for e in [
        "config",
        "config.worktree",
        "commondir",
        "hooks/",
        "worktrees/*/config.worktree",
        "worktrees/*/commondir",
        "worktrees/*/gitdir",
    ] {
        out.push((root.clone(), format!("{rel}/{e}")));
    }
}

/// The symbolic links met on the way from `link` (absolute) to where it
/// finally leads, `link` itself first: each hop of a chain (`.git/hooks
/// -> ../l2`, `l2 -> gh`) and any link in a directory on the way, as the
/// kernel meets them (review 11, F3). At most 40.
fn link_chain(link: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // What is left to walk, last component first.
    let mut todo: Vec<std::ffi::OsString> = link
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    let mut cur = PathBuf::from("/");
    while let Some(c) = todo.pop() {
        if c == ".." {
            cur.pop();
            continue;
        }
        if c == "." {
            continue;
        }
        let next = cur.join(&c);
        let Ok(m) = fs::symlink_metadata(&next) else {
            break;
        };
        if !m.file_type().is_symlink() {
            cur = next;
            continue;
        }
        if out.len() >= 40 {
            break;
        }
        let Ok(t) = fs::read_link(&next) else { break };
        out.push(next);
        if t.is_absolute() {
            cur = PathBuf::from("/");
        }
        todo.extend(t.components().rev().filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        }));
    }
    out
}

/// Expands one pattern under `root` to the relative paths that exist now
/// (plus the literal path for a pattern without globs). `venvs`: when
/// given, only these venvs (absolute paths) are looked into, so a venv the
/// command itself creates (`python -m venv .venv`) is its own.
/// One protected pattern, split once per process for the profile's
/// patterns ([`parsed`]), once per pass for others.
#[derive(Clone)]
struct Pat<'a> {
    text: &'a str,
    /// Its components; `.` parts name nothing (as `Path::components` reads
    /// them) and are dropped, so that every spelling of a path is the same
    /// bytes (the snapshot's maps are keyed by bytes).
    parts: Vec<&'a str>,
    /// The path itself when no part has a glob (nor `**`).
    literal: Option<PathBuf>,
    /// `**/site-packages/...`: found through the venvs.
    venv: bool,
}

/// Whether a pattern is found through the venvs rather than by a walk:
/// `**/site-packages/...`, `**/pyvenv.cfg` and `**/bin/activate*` (a
/// venv's activate scripts, `Activate.ps1` too). Anything else with a
/// leading `**` is walked.
fn venv_pattern(parts: &[&str]) -> bool {
    match parts {
        ["**", rest @ ..] => {
            rest.iter().any(|p| site_dir(p))
                || rest == ["pyvenv.cfg"]
                || matches!(rest, ["bin", n] if n.to_ascii_lowercase().starts_with("activate"))
        }
        _ => false,
    }
}

/// `site-packages`, or `dist-packages`: the site directory of a venv made
/// from Debian's or Ubuntu's `/usr/bin/python3`, whose `site` module reads
/// `.pth` files and `sitecustomize` from `lib/python3.X/dist-packages`,
/// `lib/python3/dist-packages` and `local/lib/python3.X/dist-packages` of
/// the venv (`site.getsitepackages()`).
fn site_dir(p: &str) -> bool {
    p == "site-packages" || p == "dist-packages"
}

/// Whether metadata calls on a pattern's paths need not be refused during
/// the run: a venv pattern outside `site-packages` (`**/pyvenv.cfg`,
/// `**/bin/activate*`), whose files `python -m venv` makes and `chmod`s.
pub fn venv_metadata_free(pattern: &str) -> bool {
    let parts: Vec<&str> = pattern
        .trim_end_matches('/')
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    venv_pattern(&parts) && !parts.iter().any(|p| site_dir(p))
}

/// The profile's patterns, split once per process: the first list
/// [`parsed`] is asked for (a run's snapshot and its restore use the same
/// one), kept for the process's life (one list: a bounded leak).
type Parsed = (&'static [String], Vec<Pat<'static>>);
static PARSED: std::sync::OnceLock<Parsed> = std::sync::OnceLock::new();

/// `patterns` split ([`parse_patterns`]), from [`PARSED`] when they are the
/// list kept there.
fn parsed(patterns: &[String]) -> std::borrow::Cow<'_, [Pat<'_>]> {
    let kept = PARSED.get_or_init(|| {
        let texts: &'static [String] = Box::leak(patterns.to_vec().into_boxed_slice());
        (texts, parse_patterns(texts))
    });
    if kept.0 == patterns {
        std::borrow::Cow::Borrowed(kept.1.as_slice())
    } else {
        std::borrow::Cow::Owned(parse_patterns(patterns))
    }
}

fn parse_patterns(patterns: &[String]) -> Vec<Pat<'_>> {
    patterns
        .iter()
        .map(|text| {
            let mut parts: Vec<&str> = text
                .trim_end_matches('/')
                .split('/')
                .filter(|s| !s.is_empty() && *s != ".")
                .collect();
            // Only `.` parts (`.`, `./`): the root itself, as before.
            if parts.is_empty() && text.split('/').any(|s| s == ".") {
                parts.push(".");
            }
            let literal = (!parts.is_empty() && !parts.iter().any(|p| has_glob(p)))
                .then(|| parts.iter().collect());
            let venv = venv_pattern(&parts);
            Pat {
                text,
                parts,
                literal,
                venv,
            }
        })
        .collect()
}

fn expand(
    probe: &mut Probe,
    root: &Path,
    pat: &Pat<'_>,
    pass: &mut Pass<'_>,
    venvs: &mut BTreeSet<PathBuf>,
) -> Vec<PathBuf> {
    let only_known = pass.before.is_some();
    let (pattern, parts) = (pat.text, &pat.parts);
    if parts.is_empty() {
        return Vec::new();
    }
    if let Some(lit) = &pat.literal {
        // No glob and no `**`: the walk below could only find the literal
        // path itself, which is returned whether it exists or not.
        return vec![lit.clone()];
    }
    if pat.venv {
        // venvs: pyvenv.cfg at the root or up to two levels below, and
        // three levels below under a venv's usual name.
        let mut out = Vec::new();
        let bases = if only_known {
            // After the run only the venvs of the snapshot count: look at
            // them directly instead of listing the root again (a TMPDIR of
            // 2,000 entries costs ~1 ms per listing). A base that is no
            // longer a real directory at every level is not listed through:
            // each of those levels was recorded as a way to the venv's
            // files ([`Snapshot::ways`]), so one that is now a symlink or a
            // file is a change of its own, put back as a directory.
            venvs
                .iter()
                .filter_map(|v| v.strip_prefix(root).ok())
                .filter(|b| {
                    b.components().count() <= 3
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
            // listed once, whole: no count bound (F2: a bound here let a
            // command that adds thousands of entries to the root hide the
            // user's venv from the next run's snapshot). The listing was
            // never bounded, only the loop over it; a directory without
            // subdirectories is still not listed (link count).
            let mut bases = vec![PathBuf::new()];
            let mut frontier = vec![PathBuf::new()];
            for _ in 0..2 {
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
            // Red team 10 F10: monorepos keep their venvs one level deeper
            // (`apps/web/.venv`, `services/api/venv`). Below each directory
            // two levels down, only the names venv tools give
            // ([`VENV_NAMES`]) are looked up (`lstat` of their
            // `pyvenv.cfg`: cheaper than listing the directory), for at
            // most [`DEEP_VENV_DIRS`] directories (docs/sandbox.md: a venv
            // deeper, or past the bound, is not protected confined).
            if let Some(deep) = probe.deep_venvs.get(root.as_os_str()) {
                bases.extend(deep.iter().cloned());
            } else {
                let mut deep = Vec::new();
                for b in frontier.iter().take(DEEP_VENV_DIRS) {
                    for name in VENV_NAMES {
                        let base = b.join(name);
                        let cfg = join(root, &base.join("pyvenv.cfg"));
                        if probe
                            .lstat(&cfg)
                            .is_some_and(|m| m.is_file() || m.file_type().is_symlink())
                        {
                            deep.push(base);
                        }
                    }
                }
                bases.extend(deep.iter().cloned());
                probe.deep_venvs.insert(root.as_os_str().to_owned(), deep);
            }
            bases
        };
        for b in bases {
            let abs = root.join(&b);
            // A venv of the snapshot is looked into whether or not its
            // pyvenv.cfg is still there (a command that removes it, plants
            // a `.pth` and leaves the pyvenv.cfg to be restored would
            // otherwise hide the `.pth`).
            if only_known {
                if !venvs.contains(&abs) {
                    continue;
                }
            } else if !probe
                .lstat(&abs.join("pyvenv.cfg"))
                .is_some_and(|m| m.is_file() || m.file_type().is_symlink())
            {
                // (through the probe: asked once per pass for every venv
                // pattern, and answered by the root's listing when small)
                continue;
            }
            venvs.insert(abs);
            let lib64 = b.join("lib64");
            for rel in venv_files(probe, root, &b, pass) {
                if rel == lib64 || matches(pattern, &rel) {
                    out.push(rel);
                }
            }
        }
        return out;
    }
    if pass.before.is_none() {
        // The fixed directories before the first glob: ways (a symlink in
        // place of `.git/modules` would hide what the walk finds below).
        let mut a = PathBuf::new();
        let fixed = parts.iter().take_while(|p| !has_glob(p)).count();
        for p in &parts[..fixed.min(parts.len().saturating_sub(1))] {
            a.push(p);
            pass.ways.push((root.to_path_buf(), a.clone()));
        }
    }
    let mut w = Walk {
        probe,
        root,
        pattern,
        skip: parts.first() == Some(&"**"),
        out: Vec::new(),
        visited: 0,
        pass,
    };
    w.walk(PathBuf::new(), parts, 0);
    let mut out = w.out;
    if !parts.iter().any(|p| has_glob(p)) {
        let lit: PathBuf = parts.iter().collect();
        if !out.contains(&lit) {
            out.push(lit);
        }
    }
    out
}

/// A venv's files that venv patterns can name, relative to the root:
/// `pyvenv.cfg`, what `bin/` holds, what each `lib*/python*/site-packages`
/// holds, `lib64` itself (a symlink to `lib` in most venvs: its state is
/// kept, so one pointed elsewhere is a change), and whatever in `lib/` is
/// not a directory (a `python3.X` symlink planted there). Before the run,
/// every directory on the way (the base and each level of it, `bin`,
/// `lib`, `lib/pythonX.Y`, `site-packages`) is recorded as a way
/// ([`Pass::ways`]): one that is no longer a directory after the run is a
/// change, whatever the patterns match below it. Listings go through the
/// probe, once per pass for every venv pattern.
fn venv_files(probe: &mut Probe, root: &Path, b: &Path, pass: &mut Pass<'_>) -> Vec<PathBuf> {
    let before = pass.before.is_none();
    if before {
        let mut a = PathBuf::new();
        for c in b.components() {
            a.push(c);
            pass.ways.push((root.to_path_buf(), a.clone()));
        }
    }
    let mut out = vec![b.join("pyvenv.cfg"), b.join("lib64")];
    let bin = b.join("bin");
    if probe.is_real_dir(&join(root, &bin)) {
        if before {
            pass.ways.push((root.to_path_buf(), bin.clone()));
        }
        if let Some(es) = probe.list(&join(root, &bin)) {
            out.extend(es.iter().map(|(n, _)| bin.join(n)));
        }
    }
    // `local/lib`: Debian's python adds `local/lib/python3.X/dist-packages`
    // of the venv to its site directories.
    for lib in ["lib", "lib64", "local/lib"] {
        let libdir = b.join(lib);
        if lib == "local/lib" {
            let local = b.join("local");
            if !probe.is_real_dir(&join(root, &local)) {
                continue;
            }
            if before {
                pass.ways.push((root.to_path_buf(), local));
            }
        }
        if !probe.is_real_dir(&join(root, &libdir)) {
            continue; // lib64 -> lib: its own state is kept
        }
        if before {
            pass.ways.push((root.to_path_buf(), libdir.clone()));
        }
        let Some(es) = probe.list(&join(root, &libdir)).map(<[_]>::to_vec) else {
            continue;
        };
        for (py, is_dir) in es {
            let pydir = libdir.join(&py);
            if !is_dir {
                out.push(pydir);
                continue;
            }
            for site in ["site-packages", "dist-packages"] {
                let sp = pydir.join(site);
                match probe.lstat(&join(root, &sp)) {
                    None => continue,
                    Some(m) if !m.is_dir() => {
                        // Not a directory: kept as a state of its own.
                        out.push(sp);
                        continue;
                    }
                    Some(_) => {}
                }
                if before {
                    pass.ways.push((root.to_path_buf(), pydir.clone()));
                    pass.ways.push((root.to_path_buf(), sp.clone()));
                }
                if let Some(files) = probe.list(&join(root, &sp)) {
                    out.extend(files.iter().map(|(f, _)| sp.join(f)));
                }
            }
        }
    }
    out
}

/// One pattern's walk under one root.
struct Walk<'p, 'a, 'b> {
    probe: &'p mut Probe,
    root: &'p Path,
    pattern: &'p str,
    /// Skip node_modules, .git and target (a leading `**`: the project).
    skip: bool,
    out: Vec<PathBuf>,
    /// Directories listed by `**` (after the run: only new ones).
    visited: usize,
    pass: &'a mut Pass<'b>,
}

/// Whether a listing is a git directory's: `HEAD` and either `objects/`
/// and `refs/` or a `commondir` file (git's own test). Git refuses a
/// submodule's git directory nested inside another git directory
/// elsewhere than under its `modules/` (CVE-2019-1387), so a `**` walk in
/// `.git/` enters only `modules/` of a git directory, not its objects.
fn is_git_dir(es: &[(OsString, bool)]) -> bool {
    let has = |n: &str, dir: bool| es.iter().any(|(e, d)| e == n && *d == dir);
    has("HEAD", false) && ((has("objects", true) && has("refs", true)) || has("commondir", false))
}

impl Walk<'_, '_, '_> {
    fn walk(&mut self, rel: PathBuf, parts: &[&str], depth: usize) {
        let Some((first, rest)) = parts.split_first() else {
            self.out.push(rel);
            return;
        };
        if *first == "**" {
            self.walk(rel.clone(), rest, depth);
            let dir = self.root.join(&rel);
            let es = match list_dir(&dir, usize::MAX) {
                Ok(es) => es,
                Err(e) if unlistable(&e) => {
                    if self.pass.before.is_none() {
                        self.pass.refused.push(format!(
                            "the directory {} under the protected pattern `{}` cannot be listed ({e}), so a change there could not be undone; make it readable and run again",
                            dir.display(),
                            self.pattern
                        ));
                    } else {
                        self.pass.unlistable.push((self.root.to_path_buf(), rel));
                    }
                    return;
                }
                Err(_) => return,
            };
            if self.pass.before.is_none() {
                self.pass.walked.insert(dir.into_os_string());
            }
            let git = !self.skip && rel.starts_with(".git") && is_git_dir(&es);
            for (name, is_dir) in es {
                if !is_dir
                    && let Some(b) = self.pass.before
                    && b.walked
                        .contains(self.root.join(rel.join(&name)).as_os_str())
                {
                    // Walked before the run, no longer a directory.
                    self.pass
                        .broken
                        .push((self.root.to_path_buf(), rel.join(&name)));
                    continue;
                }
                if !is_dir
                    || (self.skip && SKIP.iter().any(|s| name == *s))
                    || (git && name != "modules")
                {
                    continue;
                }
                let child = rel.join(&name);
                let old = self
                    .pass
                    .before
                    .is_some_and(|b| b.walked.contains(self.root.join(&child).as_os_str()));
                if !old && (depth + 1 > MAX_DEPTH || self.visited >= MAX_DIRS) {
                    if self.pass.before.is_none() {
                        self.pass.refused.push(format!(
                            "the protected pattern `{}` reaches more than {MAX_DIRS} directories or {MAX_DEPTH} levels under {} (at {}): too many to snapshot, so a change there could not be undone; remove what is not needed there (or narrow the pattern in [paths] protected) and run again",
                            self.pattern,
                            self.root.display(),
                            child.display()
                        ));
                        return;
                    }
                    // After the run: a directory the snapshot never saw,
                    // past the bound, made by the command: removed whole.
                    self.out.push(child);
                    continue;
                }
                if !old {
                    self.visited += 1;
                }
                self.walk(child, parts, depth + 1);
            }
            return;
        }
        if !has_glob(first) {
            let next = rel.join(first);
            if rest.is_empty() || self.probe.is_real_dir(&self.root.join(&next)) {
                self.walk(next, rest, depth);
            }
            return;
        }
        if let Ok(es) = list_dir(&self.root.join(&rel), usize::MAX) {
            for (name, _) in es {
                let name = name.to_string_lossy().into_owned();
                if glob(first, &name) {
                    self.walk(rel.join(&name), rest, depth);
                }
            }
        }
    }
}

fn state_of(probe: &mut Probe, root: &Path, rel: &Path, budget: &mut u64) -> State {
    match ancestors(probe, root, rel) {
        Some(false) => return State::Tampered,
        None => return State::Missing,
        Some(true) => {}
    }
    let p = join(root, rel);
    let Some(m) = probe.lstat(&p) else {
        return State::Missing;
    };
    let mode = m.permissions().mode() & 0o7777;
    let ft = m.file_type();
    if ft.is_symlink() {
        return fs::read_link(&p).map_or(State::Tampered, State::Symlink);
    }
    if m.is_dir() {
        return State::Dir { mode };
    }
    if ft.is_fifo() || ft.is_socket() || ft.is_block_device() || ft.is_char_device() {
        return State::Special {
            kind: m.mode() & libc::S_IFMT,
            mode,
        };
    }
    if m.len() > *budget {
        return State::Unreadable(format!(
            "{} bytes, more than the {} MiB left of the protected files' limit",
            m.len(),
            *budget / (1024 * 1024)
        ));
    }
    match read_regular(&p, *budget, (m.dev(), m.ino())) {
        Ok(content) => {
            *budget = budget.saturating_sub(content.len() as u64);
            State::File { content, mode }
        }
        Err(e) => State::Unreadable(e.to_string()),
    }
}

/// The content of a regular file, opened without following a symlink and
/// without blocking (a FIFO swapped in since the `lstat` is refused, not
/// waited on), at most `limit` bytes. `id`: the `(dev, ino)` the `lstat`
/// saw; a different file opened (an ancestor swapped for a symlink by a
/// command still running in the roots) is refused, never read.
fn read_regular(p: &Path, limit: u64, id: (u64, u64)) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(p)?;
    let m = f.metadata()?;
    if !m.is_file() || (m.dev(), m.ino()) != id {
        return Err(std::io::Error::other("it changed while it was read"));
    }
    if m.len() > limit {
        return Err(std::io::Error::other("it grew past the limit"));
    }
    let mut content = Vec::with_capacity(m.len() as usize);
    f.take(limit + 1).read_to_end(&mut content)?;
    if content.len() as u64 > limit {
        return Err(std::io::Error::other("it grew past the limit"));
    }
    Ok(content)
}

/// Every relative path the patterns cover under `root` now, with the
/// entries below protected directories.
fn covered(
    probe: &mut Probe,
    root: &Path,
    patterns: &[Pat<'_>],
    pass: &mut Pass<'_>,
    venvs: &mut BTreeSet<PathBuf>,
) -> Vec<PathBuf> {
    let mut set = Vec::with_capacity(patterns.len());
    probe.list_if_small(root);
    for pat in patterns {
        // A pattern whose first component is a name the root (listed)
        // does not hold covers nothing there: no path, no entry. The
        // comparison after the run lists the root again, so a path the
        // command creates there is new and removed, as a missing entry
        // would have had it; and what another run's baseline had there is
        // adopted whole ([`shared`]). Most of the ~100 patterns name
        // nothing in a root: each costs a binary search, not a path, an
        // `ancestors` walk and an entry per pass.
        if let Some(first) = pat.parts.first()
            && !matches!(*first, "." | ".." | "**")
            && !has_glob(first)
            && probe.absent(root, std::ffi::OsStr::new(first))
        {
            continue;
        }
        for rel in expand(probe, root, pat, pass, venvs) {
            // The ancestors first: a missing one, now known, answers the
            // path's own `lstat` without a syscall.
            if pat.text.ends_with('/')
                && ancestors_real(probe, root, &rel)
                && probe.is_real_dir(&join(root, &rel))
            {
                if pass.before.is_some() {
                    tree_after(root, &rel, &mut set, pass);
                } else {
                    let mut n = 0usize;
                    if let Err(why) = tree(root, &rel, &mut set, &mut n) {
                        pass.refused.push(why);
                    }
                }
            }
            set.push(rel);
        }
    }
    sort_paths(&mut set);
    set.dedup_by(|a, b| a.as_os_str() == b.as_os_str());
    set
}

/// Sorts paths by their bytes, the order of the snapshot's maps. Within one
/// root every path is built from the root's own spelling and entry names
/// (no `.`, no `//`, no trailing `/`), so bytes equal exactly when the
/// paths are equal, and a directory sorts before everything below it (its
/// bytes are their prefix), which is all the restore's order needs. Byte
/// comparisons are a few instructions; `Path`'s component-wise ones were
/// most of a pass (~1,000 per pass, ~440 instructions each).
fn sort_paths(v: &mut [PathBuf]) {
    v.sort_unstable_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
}

/// The tree below `rel` before the run; an error (the snapshot is then
/// refused) when it holds more than [`MAX_TREE`] entries or a directory of
/// it cannot be listed.
fn tree(root: &Path, rel: &Path, set: &mut Vec<PathBuf>, n: &mut usize) -> Result<(), String> {
    let dir = root.join(rel);
    // One entry past what is left of the bound is enough to know it is hit.
    let es = match list_dir(&dir, MAX_TREE.saturating_sub(*n).saturating_add(1)) {
        Ok(es) => es,
        Err(e) if unlistable(&e) => {
            return Err(format!(
                "the protected directory {} cannot be listed ({e}), so a change to it could not be undone; make it readable and run again",
                dir.display()
            ));
        }
        Err(_) => return Ok(()),
    };
    for (name, is_dir) in es {
        if *n >= MAX_TREE {
            return Err(format!(
                "the protected directory {} holds more than {MAX_TREE} entries: too many to snapshot, so a change to it could not be undone; remove the entries it does not need and run again",
                dir.display()
            ));
        }
        *n += 1;
        let r = rel.join(name);
        set.push(r.clone());
        if is_dir {
            tree(root, &r, set, n)?;
        }
    }
    Ok(())
}

/// The tree below `rel` after the run, without a bound: every entry is
/// named, and only the directories that were directories of the snapshot
/// are entered. An entry that is new is removed whole by the restore, so
/// what a new directory holds need not be listed (a command that fills
/// one with a million files costs one removal, not a million names).
fn tree_after(root: &Path, rel: &Path, set: &mut Vec<PathBuf>, pass: &mut Pass<'_>) {
    let es = match list_dir(&root.join(rel), usize::MAX) {
        Ok(es) => es,
        Err(e) if unlistable(&e) => {
            pass.unlistable
                .push((root.to_path_buf(), rel.to_path_buf()));
            return;
        }
        Err(_) => return,
    };
    for (name, is_dir) in es {
        let r = rel.join(name);
        if is_dir && pass.was_dir(&root.join(&r)) {
            tree_after(root, &r, set, pass);
        }
        set.push(r);
    }
}

impl Snapshot {
    /// Takes the snapshot of `patterns` under every root. When it cannot
    /// cover them all, [`Snapshot::refused`] says why and the command must
    /// not start.
    pub fn take(roots: &[PathBuf], patterns: &[String]) -> Self {
        let mut s = Snapshot::default();
        let mut budget = MAX_BYTES;
        let mut probe = Probe::default();
        let pats = parsed(patterns);
        let mut pass = Pass {
            before: None,
            refused: Vec::new(),
            walked: BTreeSet::new(),
            unlistable: Vec::new(),
            ways: Vec::new(),
            broken: Vec::new(),
        };
        let git = protects_git(patterns);
        // `core.hooksPath` patterns of one root's repository under another
        // root (its include files, its hooks directory there).
        let mut elsewhere: Vec<(PathBuf, String)> = Vec::new();
        let mut global: Option<Vec<(Vec<u8>, PathBuf)>> = None;
        for root in roots {
            let mut rels = covered(&mut probe, root, &pats, &mut pass, &mut s.venvs);
            if git {
                let before = gitlinks::Before::take(root);
                if !before.protect.is_empty() {
                    let extra = parse_patterns(&before.protect);
                    rels.extend(covered(&mut probe, root, &extra, &mut pass, &mut s.venvs));
                }
                s.notes.extend(before.notes.iter().cloned());
                s.git.push((root.clone(), before));
            }
            for rel in rels {
                let st = state_of(&mut probe, root, &rel, &mut budget);
                let abs = join(root, &rel).into_os_string();
                if matches!(st, State::File { .. })
                    && let Some(id) = link_id(&mut probe, &abs)
                    && id.2 > 1
                {
                    s.linked.insert(abs.clone(), id);
                }
                if let State::Unreadable(why) = &st {
                    pass.refused.push(format!(
                        "the protected file {} cannot be snapshotted ({why}), so a change to it could not be undone; make it readable or smaller, or move it out of the project, and run again",
                        root.join(&rel).display()
                    ));
                }
                s.entries.insert(abs, (root.clone(), rel, st));
            }
            // `core.hooksPath` (and the config files it may come from),
            // read from the configuration as it is before the run.
            if git {
                let cfg = |rel: &str| match s.entries.get(join(root, Path::new(rel)).as_os_str()) {
                    Some((_, _, State::File { content, .. })) => Some(content.clone()),
                    _ => None,
                };
                let gitdir = root.join(".git");
                let mut configs: Vec<(Vec<u8>, PathBuf)> = Vec::new();
                // The working tree's top the hooks path is relative to.
                let mut top = root.clone();
                let repo = match s.entries.get(gitdir.as_os_str()) {
                    // A linked worktree (or a submodule's checkout): the
                    // common directory's config, the worktree's own.
                    Some((_, _, State::File { content, .. })) => {
                        configs.extend(hookspath::gitfile_configs(root, content, &mut s.notes));
                        true
                    }
                    Some((_, _, State::Dir { .. })) => {
                        for f in ["config", "config.worktree"] {
                            if let Some(c) = cfg(&format!(".git/{f}")) {
                                configs.push((c, gitdir.clone()));
                            }
                        }
                        true
                    }
                    // `.git` a symlink to the git directory (review 10
                    // R11: its target is snapshotted below): read through.
                    Some((_, _, State::Symlink(_))) => {
                        configs.extend(hookspath::repo_configs(root, &mut s.notes));
                        true
                    }
                    // A root below its repository's top (review 10 R7: the
                    // cwd `tools/` of a repository whose hooks path is
                    // `tools/hooks`): the repository git discovers above
                    // it, read now (outside this root).
                    _ => match root.parent().and_then(hookspath::discover) {
                        Some(t) => {
                            configs.extend(hookspath::repo_configs(&t, &mut s.notes));
                            top = t;
                            true
                        }
                        None => false,
                    },
                };
                if repo && GIT_GLOBALS.load(std::sync::atomic::Ordering::Relaxed) {
                    // The user's global and system configuration: read
                    // once per process, only where a root is a repository.
                    configs.extend(
                        global
                            .get_or_insert_with(|| {
                                hookspath::global_configs(&|k| std::env::var_os(k))
                            })
                            .iter()
                            .cloned(),
                    );
                }
                let mut found = hookspath::find_in(&top, roots, configs);
                s.notes.extend(found.notes);
                pass.ways.extend(found.ways);
                elsewhere.extend(found.elsewhere);
                if top != *root {
                    // Relative to the top, which is another root or none.
                    elsewhere.extend(
                        std::mem::take(&mut found.protect)
                            .into_iter()
                            .map(|p| (top.clone(), p)),
                    );
                }
                if !found.protect.is_empty() {
                    let extra = parse_patterns(&found.protect);
                    for rel in covered(&mut probe, root, &extra, &mut pass, &mut s.venvs) {
                        let st = state_of(&mut probe, root, &rel, &mut budget);
                        if let State::Unreadable(why) = &st {
                            pass.refused.push(format!(
                                "the protected file {} cannot be snapshotted ({why}), so a change to it could not be undone; make it readable or smaller, or move it out of the project, and run again",
                                root.join(&rel).display()
                            ));
                        }
                        s.entries
                            .entry(join(root, &rel).into_os_string())
                            .or_insert((root.clone(), rel, st));
                    }
                    s.hooks.push((root.clone(), found.protect));
                }
            }
            // Repositories nested one or two levels below the root (red
            // team 10 F5: a workspace root above `app/`, `{tmp}` holding
            // scratch clones): their `.git/config` and `.git/hooks/` are
            // protected under this root. The venv walk has listed these
            // levels already (the probe keeps the listings), so each
            // directory costs a lookup in its parent's listing.
            if git {
                for (rel, kind) in nested_repositories(&mut probe, root) {
                    let top = join(root, &rel);
                    match kind {
                        Nested::Dir => {
                            for e in [".git/config", ".git/hooks/"] {
                                elsewhere.push((root.clone(), format!("{}/{e}", rel.display())));
                            }
                        }
                        // Review 11 F7: the gitfile itself (a new `gitdir:`
                        // names another repository) and the git directory
                        // it names (and its common one) where a root holds
                        // them.
                        Nested::Gitfile => {
                            elsewhere.push((root.clone(), format!("{}/.git", rel.display())));
                            if let Some((gitdir, common)) = gitfile_dirs(&top) {
                                git_dir_patterns(&gitdir, roots, &mut elsewhere);
                                if common != gitdir {
                                    git_dir_patterns(&common, roots, &mut elsewhere);
                                }
                            }
                        }
                        // Review 11 F4: a bare-layout git directory (its
                        // worktrees are gitfile repositories above).
                        Nested::Bare => {
                            git_dir_patterns(&top, roots, &mut elsewhere);
                            continue;
                        }
                    }
                    // Its own `core.hooksPath` (review 10 R7's sibling
                    // below the root), read before the run.
                    let configs = hookspath::repo_configs(&top, &mut s.notes);
                    if !configs.is_empty() {
                        let found = hookspath::find_in(&top, roots, configs);
                        s.notes.extend(found.notes);
                        pass.ways.extend(found.ways);
                        elsewhere.extend(found.elsewhere);
                    }
                }
            }
            // Known from this pass (the root is always looked at).
            if let Some(m) = probe.lstat(root) {
                s.root_ids.insert(root.clone(), (m.dev(), m.ino()));
            }
        }
        // (A worktree's common directory is often a nested repository's
        // `.git` met on its own as well: each pattern once.)
        elsewhere.sort();
        elsewhere.dedup();
        for root in roots {
            let extra: Vec<String> = elsewhere
                .iter()
                .filter(|(r, _)| r == root)
                .map(|(_, p)| p.clone())
                .collect();
            if extra.is_empty() {
                continue;
            }
            let parsed_extra = parse_patterns(&extra);
            for rel in covered(&mut probe, root, &parsed_extra, &mut pass, &mut s.venvs) {
                let st = state_of(&mut probe, root, &rel, &mut budget);
                if let State::Unreadable(why) = &st {
                    pass.refused.push(format!(
                        "the protected file {} cannot be snapshotted ({why}), so a change to it could not be undone; make it readable or smaller, or move it out of the project, and run again",
                        root.join(&rel).display()
                    ));
                }
                s.entries
                    .entry(join(root, &rel).into_os_string())
                    .or_insert((root.clone(), rel, st));
            }
            s.hooks.push((root.clone(), extra));
        }
        s.dir_links(roots, patterns, &mut probe, &mut budget, &mut pass);
        for (root, rel) in std::mem::take(&mut pass.ways) {
            let abs = join(&root, &rel);
            if s.ways.contains_key(abs.as_os_str()) || !ancestors_real(&mut probe, &root, &rel) {
                continue;
            }
            if let Some(m) = probe.lstat(&abs).filter(|m| m.is_dir()) {
                let mode = m.permissions().mode() & 0o7777;
                s.ways.insert(abs.into_os_string(), (root, rel, mode));
            }
        }
        s.link_targets(roots, &mut probe, &mut budget, &mut pass);
        s.refused = pass.refused;
        s.walked = pass.walked;
        s
    }

    /// A protected entry that is a symbolic link to a directory inside a
    /// root stands for that directory (review 10 R11: `.git/hooks ->
    /// ../githooks`, the usual recipe for tracked hooks, made
    /// `githooks/pre-commit` a hook nothing protected; `.git -> ../gd`,
    /// `.claude -> shared/claude` likewise). Such links are the entries
    /// whose state is a symlink, and the first symlink on the way to an
    /// entry whose ancestor is not a real directory (`.gemini ->
    /// elsewhere` under `.gemini/settings.json`). The patterns of the
    /// link's root that lie below it are re-anchored at its real target
    /// (`.git/hooks/` -> `githooks/`, `.git/config` -> `gd/config`; a tree
    /// that holds the link protects the whole target) and snapshotted under
    /// the target's root, compared after the run like the hooks path's
    /// (kept in [`Snapshot::hooks`]); the target is recorded as a way. A
    /// link below a target is followed in the next round (at most four).
    /// A target that is a root itself is not taken (a note says so).
    fn dir_links(
        &mut self,
        roots: &[PathBuf],
        patterns: &[String],
        probe: &mut Probe,
        budget: &mut u64,
        pass: &mut Pass<'_>,
    ) {
        let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
        for _round in 0..4 {
            let mut links: Vec<(PathBuf, PathBuf)> = Vec::new();
            for (root, rel, st) in self.entries.values() {
                let link = match st {
                    State::Symlink(_) => Some(rel.clone()),
                    State::Tampered => {
                        let mut a = PathBuf::new();
                        let mut found = None;
                        for c in rel.components() {
                            a.push(c);
                            if a == *rel {
                                break;
                            }
                            match probe.lstat(&join(root, &a)) {
                                Some(m) if m.file_type().is_symlink() => {
                                    found = Some(a.clone());
                                    break;
                                }
                                Some(m) if m.is_dir() => {}
                                _ => break,
                            }
                        }
                        found
                    }
                    _ => None,
                };
                if let Some(l) = link
                    && seen.insert(join(root, &l))
                {
                    links.push((root.clone(), l));
                }
            }
            let mut extra: Vec<(PathBuf, String)> = Vec::new();
            for (root, rel) in links.into_iter().take(MAX_LINK_TARGETS) {
                let abs = join(&root, &rel);
                self.chain_entries(roots, probe, budget, &abs);
                let Ok(target) = fs::canonicalize(&abs) else {
                    continue;
                };
                if !target.is_dir() {
                    continue; // a file: `link_targets`
                }
                let Some(troot) = roots
                    .iter()
                    .filter(|r| target.starts_with(r))
                    .max_by_key(|r| r.as_os_str().len())
                else {
                    continue; // outside the roots: not writable
                };
                let Ok(trel) = target.strip_prefix(troot).map(Path::to_path_buf) else {
                    continue;
                };
                if trel.as_os_str().is_empty() {
                    self.notes.push(format!(
                        "the protected link {} leads to the writable root {}: what it stands for is not snapshotted there",
                        abs.display(),
                        target.display()
                    ));
                    continue;
                }
                let lc: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                let own = self
                    .hooks
                    .iter()
                    .filter(|(r, _)| r == &root)
                    .flat_map(|(_, p)| p.iter());
                for pat in patterns.iter().chain(own) {
                    let tree = pat.ends_with('/');
                    let pc: Vec<&str> = pat
                        .trim_end_matches('/')
                        .split('/')
                        .filter(|c| !c.is_empty() && *c != ".")
                        .collect();
                    let n = pc.len().min(lc.len());
                    if pc.is_empty()
                        || pc[..n].contains(&"**")
                        || !pc[..n].iter().zip(&lc).all(|(p, l)| glob(p, l))
                    {
                        continue;
                    }
                    let t = trel.to_string_lossy();
                    let new = if pc.len() > lc.len() {
                        format!(
                            "{t}/{}{}",
                            pc[lc.len()..].join("/"),
                            if tree { "/" } else { "" }
                        )
                    } else if tree {
                        format!("{t}/")
                    } else {
                        continue;
                    };
                    extra.push((troot.clone(), new));
                }
                pass.ways.push((troot.clone(), trel));
            }
            if extra.is_empty() {
                return;
            }
            extra.sort();
            extra.dedup();
            for root in roots {
                let pats: Vec<String> = extra
                    .iter()
                    .filter(|(r, _)| r == root)
                    .map(|(_, p)| p.clone())
                    .collect();
                if pats.is_empty() {
                    continue;
                }
                let parsed_extra = parse_patterns(&pats);
                for rel in covered(probe, root, &parsed_extra, pass, &mut self.venvs) {
                    let st = state_of(probe, root, &rel, budget);
                    if let State::Unreadable(why) = &st {
                        pass.refused.push(format!(
                            "the protected file {} cannot be snapshotted ({why}), so a change to it could not be undone; make it readable or smaller, or move it out of the project, and run again",
                            root.join(&rel).display()
                        ));
                    }
                    self.entries
                        .entry(join(root, &rel).into_os_string())
                        .or_insert((root.clone(), rel, st));
                }
                drop(parsed_extra);
                self.hooks.push((root.clone(), pats));
            }
        }
    }

    /// A protected entry that is a symbolic link to a file inside a root
    /// runs or is read as that file: a hook installed as `ln -s
    /// ../../scripts/pre-commit.sh .git/hooks/pre-commit` (red team 10,
    /// F11) makes the script a hook. Its final target (after every link)
    /// is snapshotted too, so a change to it is put back like a change to
    /// the hook. At most [`MAX_LINK_TARGETS`] of them.
    fn link_targets(
        &mut self,
        roots: &[PathBuf],
        probe: &mut Probe,
        budget: &mut u64,
        pass: &mut Pass<'_>,
    ) {
        let links: Vec<PathBuf> = self
            .entries
            .iter()
            .filter(|(_, (_, _, st))| matches!(st, State::Symlink(_)))
            .map(|(abs, _)| PathBuf::from(abs))
            .take(MAX_LINK_TARGETS)
            .collect();
        for link in links {
            self.chain_entries(roots, probe, budget, &link);
            let Ok(target) = fs::canonicalize(&link) else {
                continue;
            };
            let Some(root) = roots.iter().find(|r| target.starts_with(r)) else {
                continue;
            };
            let Ok(rel) = target.strip_prefix(root).map(Path::to_path_buf) else {
                continue;
            };
            let abs = target.clone().into_os_string();
            if rel.as_os_str().is_empty() || self.entries.contains_key(&abs) {
                continue;
            }
            let st = state_of(probe, root, &rel, budget);
            if !matches!(st, State::File { .. } | State::Unreadable(_)) {
                continue;
            }
            if let State::Unreadable(why) = &st {
                pass.refused.push(format!(
                    "{} (the target of the protected link {}) cannot be snapshotted ({why}), so a change to it could not be undone; make it readable or smaller, and run again",
                    target.display(),
                    link.display()
                ));
            }
            if let Some(id) = link_id(probe, &abs)
                && id.2 > 1
            {
                self.linked.insert(abs.clone(), id);
            }
            self.entries.insert(abs, (root.clone(), rel, st));
        }
    }

    /// The links on the way from the protected link `abs` to where it
    /// leads ([`link_chain`]: `l2` of `.git/hooks -> ../l2 -> gh`) that lie
    /// in a root: entries of their own, so that one pointed elsewhere is a
    /// change, put back (review 11, F3).
    fn chain_entries(
        &mut self,
        roots: &[PathBuf],
        probe: &mut Probe,
        budget: &mut u64,
        abs: &Path,
    ) {
        for l in link_chain(abs) {
            if l == abs || self.entries.contains_key(l.as_os_str()) {
                continue;
            }
            let Some(root) = roots
                .iter()
                .filter(|r| l.starts_with(r) && l != **r)
                .max_by_key(|r| r.as_os_str().len())
            else {
                continue;
            };
            let Ok(rel) = l.strip_prefix(root).map(Path::to_path_buf) else {
                continue;
            };
            let st = state_of(probe, root, &rel, budget);
            if matches!(st, State::Symlink(_)) {
                self.entries
                    .insert(l.into_os_string(), (root.clone(), rel, st));
            }
        }
    }

    /// Compares with now, restores what changed, returns one line per
    /// restored path. Does nothing for a refused snapshot (the command did
    /// not run).
    pub fn restore(&self, roots: &[PathBuf], patterns: &[String]) -> Vec<String> {
        if !self.refused.is_empty() {
            return Vec::new();
        }
        let mut venvs = self.venvs.clone();
        let mut now: BTreeMap<OsString, (PathBuf, PathBuf)> = BTreeMap::new();
        let mut pass = Pass {
            before: Some(self),
            refused: Vec::new(),
            walked: BTreeSet::new(),
            unlistable: Vec::new(),
            ways: Vec::new(),
            broken: Vec::new(),
        };
        // One pass of looking: nothing is changed until `changed` is known.
        let mut probe = Probe::default();
        let pats = parsed(patterns);
        for root in roots {
            let mut rels = covered(&mut probe, root, &pats, &mut pass, &mut venvs);
            if let Some((_, before)) = self.git.iter().find(|(r, _)| r == root)
                && !before.protect.is_empty()
            {
                let extra = parse_patterns(&before.protect);
                rels.extend(covered(&mut probe, root, &extra, &mut pass, &mut venvs));
            }
            for (_, protect) in self.hooks.iter().filter(|(r, _)| r == root) {
                let extra = parse_patterns(protect);
                rels.extend(covered(&mut probe, root, &extra, &mut pass, &mut venvs));
            }
            for rel in rels {
                now.insert(join(root, &rel).into_os_string(), (root.clone(), rel));
            }
        }
        let mut out = Vec::new();
        // A directory that could not be listed hides what is in it: it goes
        // whole, and the comparison below puts back what the snapshot had
        // there (every entry of a protected tree is in it).
        if !pass.unlistable.is_empty() {
            for (root, rel) in &pass.unlistable {
                let abs = root.join(rel);
                interleave(&abs);
                let r = at::open_root(root, self.root_ids.get(root).copied())
                    .and_then(|fd| remove_any(fd.as_fd(), rel));
                out.push(match r {
                    Ok(()) => format!(
                        "{} (could not be listed after the run; removed whole)",
                        abs.display()
                    ),
                    Err(e) => format!(
                        "{} (could not be listed after the run; could not be removed: {e})",
                        abs.display()
                    ),
                });
            }
            probe = Probe::default();
        }
        let mut budget = MAX_BYTES;
        let mut changed: Vec<(PathBuf, PathBuf, PathBuf, State)> = Vec::new();
        // Directories put back in place of something else, with what that
        // was (the report says nothing else they held is restored).
        let mut ways: BTreeMap<PathBuf, String> = BTreeMap::new();
        let mut relinked_paths: BTreeSet<PathBuf> = BTreeSet::new();
        for (abs, (root, rel, before)) in &self.entries {
            // `rel` is relative to the root it was found under, not to the
            // first root `abs` is below: with nested roots (a project in
            // TMPDIR) that one would name another path (`p/p/.venv/...`).
            if !roots.iter().any(|r| r.as_os_str() == root.as_os_str()) {
                continue;
            }
            let after = state_of(&mut probe, root, rel, &mut budget);
            // A protected file given another name by the command (a hard
            // link from, or renamed over from, a path outside the protected
            // set) would change whenever that name is written, after the
            // run and outside any sandbox: it is put back as a file of its
            // own, whatever its contents.
            // A file that already had other names must be the same file,
            // with no more of them.
            let relinked = matches!(after, State::File { .. })
                && link_id(&mut probe, abs).is_some_and(|(dev, ino, n)| {
                    n > 1
                        && self
                            .linked
                            .get(abs)
                            .is_none_or(|&(d, i, was)| (d, i) != (dev, ino) || n > was)
                });
            if relinked {
                relinked_paths.insert(PathBuf::from(abs));
            }
            if let (State::Dir { .. }, State::Symlink(t)) = (before, &after) {
                // A protected directory (`.git`, `.git/hooks`, `.claude`)
                // swapped for a symlink to a copy: put back empty, and said.
                ways.insert(
                    PathBuf::from(abs),
                    replaced(Path::new(abs), &format!("a symlink to {}", t.display())),
                );
            } else if matches!(before, State::Dir { .. })
                && matches!(after, State::File { .. } | State::Special { .. })
            {
                ways.insert(PathBuf::from(abs), replaced(Path::new(abs), "a file"));
            }
            if relinked || &after != before {
                changed.push((
                    PathBuf::from(abs),
                    root.clone(),
                    rel.clone(),
                    before.clone(),
                ));
            }
        }
        for (abs, (root, rel)) in &now {
            // New, and there: a path a pattern names that does not exist
            // (`x/config` under a new directory) is nothing to remove.
            if !self.entries.contains_key(abs)
                && (!ancestors_real(&mut probe, root, rel) || probe.lstat(Path::new(abs)).is_some())
            {
                changed.push((
                    PathBuf::from(abs),
                    root.clone(),
                    rel.clone(),
                    State::Missing,
                ));
            }
        }
        // Directories on the way to protected paths that are no longer
        // directories (a venv, its `lib`, a walked directory swapped for a
        // symlink to a copy, or for a file): put back as directories. A
        // way below another broken one is not looked at (the outer one is
        // put back, empty).
        let broken = pass.broken.iter().map(|(root, rel)| {
            let abs = join(root, rel).into_os_string();
            let mode = self.ways.get(&abs).map_or(0o755, |w| w.2);
            (abs, root.clone(), rel.clone(), mode)
        });
        let recorded = self
            .ways
            .iter()
            .map(|(abs, (root, rel, mode))| (abs.clone(), root.clone(), rel.clone(), *mode));
        for (abs, root, rel, mode) in recorded.chain(broken) {
            if !roots.iter().any(|r| r.as_os_str() == root.as_os_str())
                || self.entries.contains_key(&abs)
                || ways.contains_key(Path::new(&abs))
                || !ancestors_real(&mut probe, &root, &rel)
            {
                continue;
            }
            let p = PathBuf::from(&abs);
            let Some(m) = probe.lstat(&p) else { continue };
            if m.is_dir() {
                continue;
            }
            let what = if m.file_type().is_symlink() {
                match fs::read_link(&p) {
                    Ok(t) => format!("a symlink to {}", t.display()),
                    Err(_) => "a symlink".to_string(),
                }
            } else if m.is_file() {
                "a file".to_string()
            } else {
                "something else".to_string()
            };
            ways.insert(p.clone(), replaced(&p, &what));
            changed.retain(|c| c.0 != p);
            changed.push((p, root, rel, State::Dir { mode }));
        }
        let mut fds: BTreeMap<PathBuf, std::io::Result<OwnedFd>> = BTreeMap::new();
        let mut root_fd = |root: &Path| -> std::io::Result<OwnedFd> {
            let r = fds
                .entry(root.to_path_buf())
                .or_insert_with(|| at::open_root(root, self.root_ids.get(root).copied()));
            match r {
                Ok(fd) => fd.try_clone(),
                Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
            }
        };
        // Put back what existed (parents first), then remove what is new
        // (children first).
        changed.sort_by(|a, b| a.0.cmp(&b.0));
        for (abs, root, rel, before) in changed.iter().filter(|c| c.3 != State::Missing) {
            interleave(abs);
            let r = root_fd(root).and_then(|fd| put_back(fd.as_fd(), rel, before));
            out.push(match r {
                Ok(()) if self.shared_at(abs) => format!("{} ({UNSURE}; restored)", abs.display()),
                Ok(()) if ways.contains_key(abs) => ways.get(abs).cloned().unwrap_or_default(),
                Ok(()) if relinked_paths.contains(abs) => format!(
                    "{} (given another name by a hard link; put back as a file of its own)",
                    abs.display()
                ),
                Ok(()) => format!("{} (restored)", abs.display()),
                Err(e) => format!("{} (could not be restored: {e})", abs.display()),
            });
        }
        for (abs, root, rel, _) in changed.iter().rev().filter(|c| c.3 == State::Missing) {
            interleave(abs);
            let r = root_fd(root).and_then(|fd| remove_any(fd.as_fd(), rel));
            let by = if self.shared_at(abs) {
                UNSURE_NEW
            } else {
                "created by the command"
            };
            out.push(match r {
                Ok(()) => format!("{} ({by}; removed)", abs.display()),
                Err(e) => format!("{} ({by}; could not be removed: {e})", abs.display()),
            });
        }
        // With the protected files back: new submodules git would enter.
        for (root, before) in &self.git {
            if roots.iter().any(|r| r == root) {
                out.extend(before.after(root));
            }
        }
        out
    }
}

/// The report line for a directory put back in place of `what`.
fn replaced(p: &Path, what: &str) -> String {
    format!(
        "{} (a directory on the way to protected files, replaced by {what}; put back as an empty directory with the protected files it held: nothing else it held is restored)",
        p.display()
    )
}

/// The file at the protected path `abs` and its link count: `(dev, ino,
/// nlink)`, through the probe's memo.
fn link_id(probe: &mut Probe, abs: &std::ffi::OsStr) -> Option<(u64, u64, u64)> {
    probe
        .lstat(Path::new(abs))
        .map(|m| (m.dev(), m.ino(), m.nlink()))
}

/// How a restored path is reported when another run was active in its
/// root: either command may have changed it.
pub const UNSURE: &str = "changed while this run or a concurrent one in the same root ran";
/// [`UNSURE`] for a path the snapshot did not have.
const UNSURE_NEW: &str = "created while this run or a concurrent one in the same root ran";

impl Snapshot {
    /// Whether another run was active in a root holding `abs`.
    fn shared_at(&self, abs: &Path) -> bool {
        self.concurrent.iter().any(|r| abs.starts_with(r))
    }

    /// Whether a restore line says the change may be another run's.
    pub fn unsure(line: &str) -> bool {
        line.contains(UNSURE) || line.contains(UNSURE_NEW)
    }
}

/// Tests: what "another command still running in the roots" does right
/// before the restore changes each path (deterministic interleaving).
#[cfg(test)]
type Interleave = Option<Box<dyn FnMut(&Path)>>;

#[cfg(test)]
thread_local! {
    static INTERLEAVE: std::cell::RefCell<Interleave> = const { std::cell::RefCell::new(None) };
}

/// Tests: runs the planted interleaving for `abs`; nothing otherwise.
#[cfg(test)]
fn interleave(abs: &Path) {
    INTERLEAVE.with(|h| {
        if let Some(f) = h.borrow_mut().as_mut() {
            f(abs);
        }
    });
}

#[cfg(not(test))]
fn interleave(_: &Path) {}

/// Removes whatever is at `rel` under the root (by descriptor, see [`at`]);
/// an ancestor that is a symlink or a file is replaced by an empty
/// directory first (the path was reachable through it).
fn remove_any(root: std::os::fd::BorrowedFd<'_>, rel: &Path) -> std::io::Result<()> {
    match at::open_parent(root, rel, at::Ancestors::Fix)? {
        None => Ok(()),
        Some((dir, name)) => at::remove(dir.as_fd(), name),
    }
}

/// Puts `rel` back to `st` (by descriptor, see [`at`]); missing ancestors
/// are made and non-directories in their place replaced.
fn put_back(root: std::os::fd::BorrowedFd<'_>, rel: &Path, st: &State) -> std::io::Result<()> {
    let parent = || -> std::io::Result<(OwnedFd, &std::ffi::OsStr)> {
        at::open_parent(root, rel, at::Ancestors::Make)?
            .ok_or_else(|| std::io::Error::other("no parent directory"))
    };
    match st {
        State::File { content, mode } => {
            let (dir, name) = parent()?;
            at::put_file(dir.as_fd(), name, content, *mode)
        }
        State::Symlink(t) => {
            let (dir, name) = parent()?;
            at::put_symlink(dir.as_fd(), name, t)
        }
        State::Dir { mode } => {
            let (dir, name) = parent()?;
            at::put_dir(dir.as_fd(), name, *mode)
        }
        State::Special { kind, mode } => {
            let (dir, name) = parent()?;
            if *kind == libc::S_IFIFO {
                at::put_fifo(dir.as_fd(), name, *mode)
            } else {
                at::remove(dir.as_fd(), name)?;
                Err(std::io::Error::other(
                    "a socket or device cannot be made again; what replaced it was removed",
                ))
            }
        }
        State::Missing | State::Tampered => Ok(()),
        State::Unreadable(_) => Err(std::io::Error::other("it was not snapshotted")),
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
    fn a_protected_file_given_another_name_is_put_back_as_its_own() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        fs::create_dir_all(root.join(".git/hooks")).expect("mk");
        fs::write(root.join(".git/config"), "[core]\n").expect("w");
        fs::write(root.join(".git/hooks/pre-push"), "#!/bin/sh\n").expect("w");
        fs::write(root.join(".envrc"), "export A=1\n").expect("w");
        // Linked before the run: the user's, left alone.
        fs::hard_link(root.join(".envrc"), root.join("envrc.user")).expect("ln");
        let pats: Vec<String> = vec![".git/config".into(), ".git/hooks/".into(), ".envrc".into()];
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        // Two spellings: a link made to the protected file, and a linked
        // copy renamed over it.
        fs::hard_link(root.join(".git/config"), root.join("cfg")).expect("ln");
        fs::write(root.join("a"), "#!/bin/sh\n").expect("w");
        fs::hard_link(root.join("a"), root.join("b")).expect("ln");
        fs::rename(root.join("a"), root.join(".git/hooks/pre-push")).expect("mv");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out.iter().all(|l| l.contains("hard link")), "{out:?}");
        for (p, other) in [(".git/config", "cfg"), (".git/hooks/pre-push", "b")] {
            let (m, o) = (
                fs::metadata(root.join(p)).expect("m"),
                fs::metadata(root.join(other)).expect("m"),
            );
            assert_eq!(m.nlink(), 1, "{p}");
            assert_ne!(m.ino(), o.ino(), "{p}");
            // Writing the other name no longer reaches the protected file.
            fs::write(root.join(other), "[core]\n\tfsmonitor = evil\n").expect("w");
        }
        assert_eq!(
            fs::read_to_string(root.join(".git/config")).expect("r"),
            "[core]\n"
        );
        assert_eq!(
            fs::read_to_string(root.join(".git/hooks/pre-push")).expect("r"),
            "#!/bin/sh\n"
        );
        // A user's link kept, but one more name added, or the file swapped
        // for another linked one with the same contents: put back.
        fs::hard_link(root.join(".envrc"), root.join("z")).expect("ln");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(fs::metadata(root.join(".envrc")).expect("m").nlink(), 1);
        fs::write(root.join(".envrc"), "export A=1\n").expect("w");
        fs::hard_link(root.join(".envrc"), root.join("envrc.user2")).expect("ln");
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        fs::write(root.join("c"), "export A=1\n").expect("w");
        fs::hard_link(root.join("c"), root.join("d")).expect("ln");
        fs::rename(root.join("c"), root.join(".envrc")).expect("mv");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(fs::metadata(root.join(".envrc")).expect("m").nlink(), 1);
        fs::remove_file(root.join("envrc.user")).expect("rm");
        fs::hard_link(root.join(".envrc"), root.join("envrc.user")).expect("ln");
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        // The link the user had is still there (control).
        assert_eq!(fs::metadata(root.join(".envrc")).expect("m").nlink(), 2);
        assert!(snap.restore(std::slice::from_ref(&root), &pats).is_empty());
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
    fn byte_keys_order_and_join_as_paths_do() {
        // `join` is `Path::join`; `split_last` is `parent` / `file_name`
        // wherever it answers; byte order puts a directory before all it
        // holds (what the restore's parents-first order needs), and byte
        // equality is path equality for the paths a pass builds.
        let names = ["a", "a.b", "a-b", "ab", ".git", "config", "x y", "é", "a0"];
        let mut rels: Vec<PathBuf> = Vec::new();
        for a in names {
            rels.push(PathBuf::from(a));
            for b in names {
                rels.push(Path::new(a).join(b));
                for c in names.iter().take(3) {
                    rels.push(Path::new(a).join(b).join(c));
                }
            }
        }
        for root in ["/", "/r", "/var/tmp/x.y", "/r/a"] {
            let root = Path::new(root);
            let mut abs: Vec<PathBuf> = rels.iter().map(|r| join(root, r)).collect();
            for (r, a) in rels.iter().zip(&abs) {
                assert_eq!(a, &root.join(r));
                assert_eq!(a.as_os_str(), root.join(r).as_os_str());
                if let Some((parent, name)) = split_last(a) {
                    assert_eq!(Some(parent), a.parent(), "{}", a.display());
                    assert_eq!(Some(name), a.file_name(), "{}", a.display());
                }
            }
            assert!(split_last(&join(root, Path::new("a"))).is_some() || root == Path::new("/"));
            sort_paths(&mut abs);
            for (i, p) in abs.iter().enumerate() {
                for q in &abs[i + 1..] {
                    assert!(
                        !p.starts_with(q) || p == q,
                        "{} after {}",
                        p.display(),
                        q.display()
                    );
                    assert_eq!(p == q, p.as_os_str() == q.as_os_str());
                }
            }
        }
        for odd in ["/", "a", "/a/", "/a/.", "/a/..", "a/b/"] {
            assert_eq!(split_last(Path::new(odd)), None, "{odd}");
        }
    }

    #[test]
    fn list_dir_lists_as_read_dir_does() {
        let d = tempfile::tempdir().expect("tmp");
        let dir = d.path();
        // More entries than one getdents64 call returns into its buffer.
        for i in 0..1500 {
            fs::write(dir.join(format!("file-with-a-longer-name-{i}")), "").expect("w");
        }
        fs::create_dir(dir.join("sub")).expect("mk");
        fs::create_dir(dir.join(".hidden dir")).expect("mk");
        std::os::unix::fs::symlink(dir.join("sub"), dir.join("link-to-dir")).expect("ln");
        std::os::unix::fs::symlink("/nowhere", dir.join("dangling")).expect("ln");
        let mut want: Vec<(OsString, bool)> = fs::read_dir(dir)
            .expect("ls")
            .flatten()
            .map(|e| (e.file_name(), e.file_type().is_ok_and(|t| t.is_dir())))
            .collect();
        want.sort();
        let mut got = list_dir(dir, usize::MAX).expect("list");
        got.sort();
        assert_eq!(got.len(), 1504);
        assert_eq!(got, want);
        assert_eq!(list_dir(dir, 10).expect("list").len(), 10);
        // The errors std gives, by kind (what `unlistable` reads).
        let missing = list_dir(&dir.join("missing"), usize::MAX).expect_err("missing");
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
        let file = list_dir(&dir.join("file-with-a-longer-name-1"), usize::MAX).expect_err("file");
        assert_eq!(file.kind(), std::io::ErrorKind::NotADirectory);
        assert!(list_dir(&dir.join("link-to-dir"), usize::MAX).is_ok_and(|e| e.is_empty()));
    }

    #[test]
    fn a_literal_pattern_expands_to_what_the_walk_finds() {
        // Literal patterns skip the walk: it could only ever find the
        // literal path. Checked against the walk over present, missing,
        // file-in-the-way and symlinked ancestors.
        let d = tempfile::tempdir().expect("tmp");
        let root = fs::canonicalize(d.path()).expect("canon");
        fs::create_dir_all(root.join(".git/hooks")).expect("mk");
        fs::write(root.join(".git/config"), "x").expect("w");
        fs::write(root.join(".cargo"), "a file in the way").expect("w");
        fs::create_dir(root.join("real")).expect("mk");
        std::os::unix::fs::symlink(root.join("real"), root.join(".claude")).expect("ln");
        let patterns: Vec<String> = [
            ".git",
            ".git/config",
            ".git/hooks/",
            ".git/nothing/here",
            ".cargo/config.toml",
            ".claude/",
            ".claude/settings.json",
            ".envrc",
            "./.envrc",
            ".git/./config",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let pats = parse_patterns(&patterns);
        for pat in &pats {
            let lit = pat.literal.clone().expect("literal");
            assert!(!lit.components().any(|c| c == Component::CurDir));
            let mut probe = Probe::default();
            let mut pass = Pass {
                before: None,
                refused: Vec::new(),
                walked: BTreeSet::new(),
                unlistable: Vec::new(),
                ways: Vec::new(),
                broken: Vec::new(),
            };
            let mut w = Walk {
                probe: &mut probe,
                root: &root,
                pattern: pat.text,
                skip: false,
                out: Vec::new(),
                visited: 0,
                pass: &mut pass,
            };
            w.walk(PathBuf::new(), &pat.parts, 0);
            let mut walked = w.out;
            if !walked.contains(&lit) {
                walked.push(lit.clone());
            }
            let mut probe = Probe::default();
            let mut venvs = BTreeSet::new();
            let got = expand(&mut probe, &root, pat, &mut pass, &mut venvs);
            assert_eq!(got, walked, "{}", pat.text);
        }
        // A pattern of `.` parts alone still names the root.
        for dot in [".", "./", "./."] {
            let one = [dot.to_string()];
            let pats = parse_patterns(&one);
            assert_eq!(pats[0].literal.as_deref(), Some(Path::new(".")), "{dot}");
        }
        // Positive control: a glob still walks (and finds what exists).
        let globbed = vec![".git/*".to_string()];
        let pats = parse_patterns(&globbed);
        assert!(pats[0].literal.is_none());
        let mut pass = Pass {
            before: None,
            refused: Vec::new(),
            walked: BTreeSet::new(),
            unlistable: Vec::new(),
            ways: Vec::new(),
            broken: Vec::new(),
        };
        let mut got = expand(
            &mut Probe::default(),
            &root,
            &pats[0],
            &mut pass,
            &mut BTreeSet::new(),
        );
        got.sort();
        assert_eq!(
            got,
            vec![PathBuf::from(".git/config"), PathBuf::from(".git/hooks")]
        );
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

/// F1-F3 of red team 5: the git redirection files, the snapshot's bounds
/// (fail closed), and the restore's writes by descriptor.
#[cfg(test)]
mod tests_rt5 {
    use super::*;
    use std::os::unix::fs::symlink;

    fn pats(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    fn mode(p: &Path) -> u32 {
        fs::symlink_metadata(p).expect("md").permissions().mode() & 0o7777
    }

    fn set_mode(p: &Path, m: u32) {
        fs::set_permissions(p, fs::Permissions::from_mode(m)).expect("chmod");
    }

    /// Everything under `d` (relative path, content or `<dir>`/`-> link`).
    fn listing(d: &Path) -> BTreeMap<PathBuf, String> {
        fn go(base: &Path, d: &Path, out: &mut BTreeMap<PathBuf, String>) {
            for e in fs::read_dir(d).expect("ls").flatten() {
                let p = e.path();
                let m = fs::symlink_metadata(&p).expect("md");
                let rel = p.strip_prefix(base).expect("rel").to_path_buf();
                let mode = m.permissions().mode() & 0o7777;
                if m.file_type().is_symlink() {
                    out.insert(rel, format!("-> {:?}", fs::read_link(&p).expect("rl")));
                } else if m.is_dir() {
                    out.insert(rel, format!("<dir {mode:o}>"));
                    go(base, &p, out);
                } else {
                    let c = fs::read(&p).expect("r");
                    out.insert(rel, format!("{mode:o} {}", String::from_utf8_lossy(&c)));
                }
            }
        }
        let mut out = BTreeMap::new();
        go(d, d, &mut out);
        out
    }

    // ---- F1 ----

    #[test]
    fn git_redirection_files_are_protected_by_the_default_profile() {
        let text = include_str!("../../profiles/default.toml");
        let doc: toml::Value = toml::from_str(text).expect("toml");
        let list: Vec<String> = doc["paths"]["protected"]
            .as_array()
            .expect("protected")
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        let hit = |rel: &str| list.iter().any(|p| matches(p, Path::new(rel)));
        for rel in [
            ".git",
            ".git/commondir",
            ".git/config.worktree",
            ".git/modules/sub/config",
            ".git/modules/libs/foo/config",
            ".git/modules/a/modules/b/config",
            ".git/modules/sub/commondir",
            ".git/modules/sub/config.worktree",
            ".git/modules/sub/hooks/pre-commit",
            ".git/modules/target/hooks/post-checkout",
            ".git/worktrees/wt/commondir",
            ".git/worktrees/wt/config.worktree",
            ".git/worktrees/wt/gitdir",
            ".bashrc",
            ".profile",
            ".zshrc",
            ".gitconfig",
            ".config/git/config",
            ".config/autostart/evil.desktop",
            ".config/systemd/user/evil.service",
            ".local/bin/git",
        ] {
            assert!(hit(rel), "{rel} is not protected");
        }
        // Positive control: ordinary git and project files are not.
        for rel in [
            ".git/index",
            ".git/HEAD",
            ".git/objects/ab/cdef",
            ".git/modules/sub/index",
            ".git/modules/sub/objects/ab/cd",
            ".git/worktrees/wt/HEAD",
            "src/main.rs",
            ".config/app.toml",
        ] {
            assert!(!hit(rel), "{rel} is protected");
        }
    }

    #[test]
    fn git_redirection_files_are_restored_and_removed() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        let sub = root.join(".git/modules/libs/foo");
        fs::create_dir_all(root.join(".git/hooks")).expect("mk");
        fs::create_dir_all(root.join(".git/objects")).expect("mk");
        fs::create_dir_all(root.join(".git/refs")).expect("mk");
        fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").expect("w");
        fs::write(root.join(".git/config"), "[core]\n").expect("w");
        for g in [&sub, &root.join(".git/modules/target")] {
            fs::create_dir_all(g.join("hooks")).expect("mk");
            fs::create_dir_all(g.join("objects/ab")).expect("mk");
            fs::create_dir_all(g.join("refs/heads")).expect("mk");
            fs::write(g.join("HEAD"), "x\n").expect("w");
            fs::write(g.join("config"), "[core]\n\tbare = false\n").expect("w");
        }
        let p: Vec<String> = {
            let text = include_str!("../../profiles/default.toml");
            let doc: toml::Value = toml::from_str(text).expect("toml");
            doc["paths"]["protected"]
                .as_array()
                .expect("protected")
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        };
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        assert!(snap.refused.is_empty(), "{:?}", snap.refused);
        // Positive control: nothing changed, nothing reported.
        assert_eq!(
            snap.restore(std::slice::from_ref(&root), &p),
            Vec::<String>::new()
        );
        fs::write(root.join(".git/commondir"), "../evil\n").expect("w");
        fs::write(root.join(".git/config.worktree"), "[core]\n").expect("w");
        fs::write(sub.join("config"), "[core]\n\tfsmonitor = evil\n").expect("w");
        fs::write(sub.join("commondir"), "/tmp/evil\n").expect("w");
        fs::write(sub.join("hooks/post-checkout"), "evil").expect("w");
        fs::write(root.join(".git/modules/target/hooks/pre-commit"), "evil").expect("w");
        fs::create_dir_all(root.join(".git/worktrees/wt")).expect("mk");
        fs::write(root.join(".git/worktrees/wt/commondir"), "/tmp/evil").expect("w");
        fs::write(root.join(".bashrc"), "evil").expect("w");
        fs::create_dir_all(root.join(".local/bin")).expect("mk");
        fs::write(root.join(".local/bin/git"), "evil").expect("w");
        fs::write(root.join("ordinary.txt"), "mine").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &p);
        assert!(!out.is_empty());
        for gone in [
            ".git/commondir",
            ".git/config.worktree",
            ".git/modules/libs/foo/commondir",
            ".git/modules/libs/foo/hooks/post-checkout",
            ".git/modules/target/hooks/pre-commit",
            ".git/worktrees/wt/commondir",
            ".bashrc",
            ".local/bin",
        ] {
            assert!(
                fs::symlink_metadata(root.join(gone)).is_err(),
                "{gone} survived: {out:?}"
            );
        }
        assert_eq!(
            fs::read_to_string(sub.join("config")).expect("r"),
            "[core]\n\tbare = false\n"
        );
        assert_eq!(
            fs::read_to_string(root.join("ordinary.txt")).expect("r"),
            "mine"
        );
        // `.git` turned into a gitfile: a change; the directory and its
        // protected files come back.
        fs::rename(root.join(".git"), root.join("gitold")).expect("mv");
        fs::write(root.join(".git"), "gitdir: evil\n").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &p);
        // (reported as a directory put back in place of a file: what else
        // it held, the repository's objects in `gitold`, is not restored)
        assert!(
            out.iter()
                .any(|l| l.contains(".git (") && l.contains("replaced by a file")),
            "{out:?}"
        );
        assert!(
            fs::symlink_metadata(root.join(".git"))
                .expect("md")
                .is_dir()
        );
        assert_eq!(
            fs::read_to_string(root.join(".git/config")).expect("r"),
            "[core]\n"
        );
    }

    #[test]
    fn a_gitfile_project_keeps_its_gitfile() {
        // A linked worktree or submodule checkout as the project: `.git` is
        // a file; repointing it is undone.
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        fs::write(root.join(".git"), "gitdir: /main/.git/worktrees/x\n").expect("w");
        let p = pats(&[".git", ".git/config", ".git/commondir"]);
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        assert!(snap.restore(std::slice::from_ref(&root), &p).is_empty());
        fs::write(root.join(".git"), "gitdir: /tmp/evil\n").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &p);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(
            fs::read_to_string(root.join(".git")).expect("r"),
            "gitdir: /main/.git/worktrees/x\n"
        );
    }

    // ---- F2 ----

    #[test]
    fn a_tree_past_the_bound_after_the_run_is_covered_whole() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        fs::create_dir_all(root.join(".git/hooks")).expect("mk");
        fs::write(root.join(".git/hooks/pre-push.sample"), "keep").expect("w");
        let p = pats(&[".git/hooks/", ".claude/"]);
        fs::create_dir_all(root.join(".claude")).expect("mk");
        fs::write(root.join(".claude/settings.json"), "{}").expect("w");
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        assert!(snap.refused.is_empty());
        // Two junk directories of 10,001 entries each: whichever is listed
        // first, the bound of the old walk was spent before the other.
        for base in [".git/hooks", ".claude"] {
            for j in ["j1", "j2"] {
                let dir = root.join(base).join(j);
                fs::create_dir(&dir).expect("mk");
                for i in 0..=MAX_TREE {
                    fs::write(dir.join(i.to_string()), "").expect("w");
                }
                fs::write(dir.join("evil"), "evil").expect("w");
            }
        }
        fs::write(root.join(".git/hooks/pre-commit"), "evil").expect("w");
        fs::write(root.join(".claude/settings.local.json"), "evil").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &p);
        assert_eq!(
            listing(&root.join(".git/hooks")).keys().collect::<Vec<_>>(),
            vec![Path::new("pre-push.sample")],
            "{out:?}"
        );
        assert_eq!(
            listing(&root.join(".claude")).keys().collect::<Vec<_>>(),
            vec![Path::new("settings.json")]
        );
        // One line per new top entry, not one per junk file.
        assert_eq!(out.len(), 6, "{out:?}");
    }

    #[test]
    fn a_tree_past_the_bound_before_the_run_refuses_and_touches_nothing() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        let tree = root.join(".vscode");
        fs::create_dir_all(tree.join("cache")).expect("mk");
        for i in 0..=MAX_TREE {
            fs::write(tree.join("cache").join(i.to_string()), "").expect("w");
        }
        let p = pats(&[".vscode/", ".envrc"]);
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        assert_eq!(snap.refused.len(), 1, "{:?}", snap.refused);
        assert!(snap.refused[0].contains(".vscode"), "{:?}", snap.refused);
        assert!(snap.refused[0].contains("remove the entries"));
        // A refused snapshot restores nothing (it would call what it
        // missed new): the user's entries all stay.
        fs::write(root.join(".envrc"), "x").expect("w");
        assert!(snap.restore(std::slice::from_ref(&root), &p).is_empty());
        assert_eq!(
            fs::read_dir(tree.join("cache")).expect("ls").count(),
            MAX_TREE + 1
        );
        // Positive control: at the bound (the directory and 9,999 files)
        // it is covered.
        fs::remove_file(tree.join("cache/0")).expect("rm");
        fs::remove_file(tree.join("cache/1")).expect("rm");
        fs::remove_file(root.join(".envrc")).expect("rm");
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        assert!(snap.refused.is_empty(), "{:?}", snap.refused);
    }

    #[test]
    fn a_venv_is_found_however_many_entries_the_root_holds() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        let sp = root.join("tools/env/lib/python3.11/site-packages");
        fs::create_dir_all(&sp).expect("mk");
        fs::write(root.join("tools/env/pyvenv.cfg"), "home = /usr\n").expect("w");
        for i in 0..4001 {
            fs::write(root.join(format!("f{i}")), "").expect("w");
        }
        let p = pats(&["**/site-packages/*.pth"]);
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        assert!(snap.refused.is_empty());
        fs::write(sp.join("evil.pth"), "import os").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &p);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(!sp.join("evil.pth").exists());
    }

    #[test]
    fn a_double_star_walk_fails_closed() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        let p = pats(&[".git/modules/**/config"]);
        fs::create_dir_all(root.join(".git/modules/sub")).expect("mk");
        fs::write(root.join(".git/modules/sub/config"), "[core]\n").expect("w");
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        assert!(snap.refused.is_empty());
        // After the run: a nest deeper than the bound, a config at its
        // bottom: the new directory is removed whole.
        let mut deep = root.join(".git/modules/n");
        for i in 0..(MAX_DEPTH + 4) {
            deep.push(format!("d{i}"));
        }
        fs::create_dir_all(&deep).expect("mk");
        fs::write(deep.join("config"), "evil").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &p);
        assert!(!deep.join("config").exists(), "{out:?}");
        // Only what exists is reported: the one directory past the bound.
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(
            fs::read_to_string(root.join(".git/modules/sub/config")).expect("r"),
            "[core]\n"
        );
        // Before the run: past the bound is a refusal.
        fs::create_dir_all(&deep).expect("mk");
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        assert_eq!(snap.refused.len(), 1, "{:?}", snap.refused);
        fs::remove_dir_all(root.join(".git/modules/n")).expect("rm");
        for i in 0..=MAX_DIRS {
            fs::create_dir(root.join(format!(".git/modules/m{i}"))).expect("mk");
        }
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        assert_eq!(snap.refused.len(), 1, "{:?}", snap.refused);
    }

    #[test]
    fn special_and_oversized_files_fail_closed() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        nix::unistd::mkfifo(
            &root.join(".envrc"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .expect("mkfifo");
        let p = pats(&[".envrc", ".npmrc"]);
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        assert!(snap.refused.is_empty(), "{:?}", snap.refused);
        // Unchanged FIFO: nothing (and nothing blocks).
        assert!(snap.restore(std::slice::from_ref(&root), &p).is_empty());
        // Replaced by a file: the FIFO is back; a FIFO made where nothing
        // was: removed.
        fs::remove_file(root.join(".envrc")).expect("rm");
        fs::write(root.join(".envrc"), "evil").expect("w");
        nix::unistd::mkfifo(
            &root.join(".npmrc"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .expect("mkfifo");
        let out = snap.restore(std::slice::from_ref(&root), &p);
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(
            fs::symlink_metadata(root.join(".envrc"))
                .expect("md")
                .file_type()
                .is_fifo()
        );
        assert!(fs::symlink_metadata(root.join(".npmrc")).is_err());
        // Too large to keep (sparse: no disk used): the run is refused.
        let f = fs::File::create(root.join(".npmrc")).expect("create");
        f.set_len(MAX_BYTES + 1).expect("len");
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        assert_eq!(snap.refused.len(), 1, "{:?}", snap.refused);
        assert!(snap.refused[0].contains(".npmrc"));
        // Positive control: within the limit it is kept and put back.
        f.set_len(1024).expect("len");
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        assert!(snap.refused.is_empty());
        fs::write(root.join(".npmrc"), "registry=evil").expect("w");
        snap.restore(std::slice::from_ref(&root), &p);
        assert_eq!(fs::read(root.join(".npmrc")).expect("r"), vec![0u8; 1024]);
    }

    // ---- F3 ----

    /// Another command still running in the roots acts right before each
    /// change of the restore: it moves `.git` aside and puts a symlink to
    /// a directory outside the roots in its place, and plants symlinks at
    /// the old fixed temporary name. Nothing outside changes; `.git/config`
    /// comes back a regular file with its bytes and mode.
    #[test]
    fn the_restore_never_writes_through_a_symlink_planted_during_it() {
        let d = tempfile::tempdir().expect("tmp");
        let o = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        let out_dir = o.path().to_path_buf();
        fs::create_dir_all(root.join(".git/hooks")).expect("mk");
        fs::write(root.join(".git/config"), "[core]\n\tbare = false\n").expect("w");
        set_mode(&root.join(".git/config"), 0o640);
        set_mode(&root.join(".git/hooks"), 0o750);
        fs::create_dir_all(root.join(".claude")).expect("mk");
        // Outside the roots: files with the names the restore uses.
        fs::create_dir_all(out_dir.join("hooks")).expect("mk");
        fs::write(out_dir.join("config"), "USER DATA").expect("w");
        set_mode(&out_dir.join("config"), 0o600);
        fs::write(out_dir.join("hooks/pre-commit"), "victim").expect("w");
        fs::write(out_dir.join("victim"), "victim").expect("w");
        set_mode(&out_dir.join("victim"), 0o600);
        let before = listing(&out_dir);
        let p = pats(&[".git/config", ".git/hooks/", ".claude/", ".envrc"]);
        let snap = Snapshot::take(std::slice::from_ref(&root), &p);
        fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = evil\n").expect("w");
        fs::write(root.join(".git/hooks/pre-commit"), "evil").expect("w");
        set_mode(&root.join(".git/hooks"), 0o777);
        fs::write(root.join(".claude/settings.local.json"), "evil").expect("w");
        symlink(out_dir.join("victim"), root.join(".envrc")).expect("ln");
        let (r2, o2) = (root.clone(), out_dir.clone());
        let mut n = 0;
        INTERLEAVE.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |_abs: &Path| {
                n += 1;
                if n > 1 {
                    return;
                }
                let git = r2.join(".git");
                if fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
                    let _ = fs::rename(&git, r2.join(format!("git-moved{n}")));
                }
                let _ = fs::remove_file(&git);
                let _ = symlink(&o2, &git);
                let _ = symlink(o2.join("config"), o2.join(".config.safe-exec-restore"));
                let claude = r2.join(".claude");
                if fs::symlink_metadata(&claude).is_ok_and(|m| m.is_dir()) {
                    let _ = fs::rename(&claude, r2.join(format!("claude-moved{n}")));
                    let _ = symlink(&o2, &claude);
                }
            }));
        });
        let out = snap.restore(std::slice::from_ref(&root), &p);
        INTERLEAVE.with(|h| *h.borrow_mut() = None);
        let _ = fs::remove_file(out_dir.join(".config.safe-exec-restore"));
        assert_eq!(listing(&out_dir), before, "outside changed: {out:?}");
        let cfg = root.join(".git/config");
        let m = fs::symlink_metadata(&cfg).expect("md");
        assert!(m.is_file(), "{out:?}");
        assert_eq!(
            fs::read_to_string(&cfg).expect("r"),
            "[core]\n\tbare = false\n"
        );
        assert_eq!(mode(&cfg), 0o640);
        assert!(
            fs::symlink_metadata(root.join(".git"))
                .expect("md")
                .is_dir()
        );
        assert_eq!(mode(&root.join(".git/hooks")), 0o750);
        assert!(fs::symlink_metadata(root.join(".envrc")).is_err());
        assert!(!root.join(".claude/settings.local.json").exists());
    }

    /// Each primitive against a symlink planted at the path it touches.
    #[test]
    fn the_restore_primitives_never_follow_a_symlink() {
        let d = tempfile::tempdir().expect("tmp");
        let o = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        let out_dir = o.path().to_path_buf();
        fs::create_dir(out_dir.join("sub")).expect("mk");
        fs::write(out_dir.join("sub/f"), "victim").expect("w");
        fs::write(out_dir.join("file"), "victim").expect("w");
        set_mode(&out_dir.join("file"), 0o600);
        set_mode(&out_dir.join("sub"), 0o700);
        let before = listing(&out_dir);
        let rootfd = at::open_root(&root, None).expect("root");
        let name = std::ffi::OsStr::new;
        // put_file over a symlink to a file outside.
        symlink(out_dir.join("file"), root.join("a")).expect("ln");
        at::put_file(rootfd.as_fd(), name("a"), b"mine", 0o644).expect("put");
        assert!(fs::symlink_metadata(root.join("a")).expect("md").is_file());
        assert_eq!(fs::read(root.join("a")).expect("r"), b"mine");
        // put_dir over a symlink to a directory outside: not chmod-ed.
        symlink(out_dir.join("sub"), root.join("b")).expect("ln");
        at::put_dir(rootfd.as_fd(), name("b"), 0o755).expect("put");
        assert!(fs::symlink_metadata(root.join("b")).expect("md").is_dir());
        assert_eq!(mode(&root.join("b")), 0o755);
        // remove of a symlink to a directory outside: its files stay.
        symlink(out_dir.join("sub"), root.join("c")).expect("ln");
        at::remove(rootfd.as_fd(), name("c")).expect("rm");
        assert!(fs::symlink_metadata(root.join("c")).is_err());
        // An ancestor planted as a symlink: replaced, never entered.
        symlink(&out_dir, root.join("d")).expect("ln");
        assert!(
            at::open_parent(rootfd.as_fd(), Path::new("d/sub/f"), at::Ancestors::Fix)
                .expect("open")
                .is_none()
        );
        assert!(fs::symlink_metadata(root.join("d")).expect("md").is_dir());
        symlink(&out_dir, root.join("e")).expect("ln");
        let (pd, last) = at::open_parent(rootfd.as_fd(), Path::new("e/file"), at::Ancestors::Make)
            .expect("open")
            .expect("some");
        at::put_file(pd.as_fd(), last, b"mine", 0o600).expect("put");
        // A missing ancestor: nothing to remove.
        assert!(
            at::open_parent(rootfd.as_fd(), Path::new("nope/x"), at::Ancestors::Fix)
                .expect("open")
                .is_none()
        );
        assert_eq!(listing(&out_dir), before);
        // A nest deeper than the descriptors kept open is removed whole.
        let mut deep = root.join("deep");
        for _ in 0..200 {
            deep.push("d");
        }
        fs::create_dir_all(&deep).expect("mk");
        fs::write(deep.join("f"), "x").expect("w");
        at::remove(rootfd.as_fd(), name("deep")).expect("rm");
        assert!(fs::symlink_metadata(root.join("deep")).is_err());
        // No temporary entry is left behind.
        assert!(
            !fs::read_dir(&root)
                .expect("ls")
                .flatten()
                .any(|e| e.file_name().to_string_lossy().contains("safe-exec")),
            "{:?}",
            listing(&root)
        );
    }
}

/// Red team 9: F1 (a venv or a directory on the way to protected files
/// swapped for a symlink or a file), F2 (the venv's other start-up files),
/// F4 (`core.hooksPath`).
#[cfg(test)]
mod tests_rt9 {
    use super::*;
    use std::os::unix::fs::symlink;

    fn venv_pats() -> Vec<String> {
        [
            "**/site-packages/*.pth",
            "**/site-packages/sitecustomize.py",
            "**/site-packages/usercustomize.py",
            "**/pyvenv.cfg",
            "**/bin/activate*",
            "**/bin/Activate.ps1",
        ]
        .map(String::from)
        .to_vec()
    }

    /// A venv without any `.pth` (`python3.12 -m venv --without-pip`).
    fn venv(root: &Path) -> PathBuf {
        let sp = root.join(".venv/lib/python3.12/site-packages");
        fs::create_dir_all(&sp).expect("mk");
        fs::create_dir_all(root.join(".venv/bin")).expect("mk");
        fs::write(root.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").expect("w");
        fs::write(root.join(".venv/bin/activate"), "# activate\n").expect("w");
        symlink("/usr/bin/python3", root.join(".venv/bin/python")).expect("ln");
        symlink("lib", root.join(".venv/lib64")).expect("ln");
        sp
    }

    fn copy_tree(from: &Path, to: &Path) {
        let st = std::process::Command::new("cp")
            .arg("-a")
            .arg(from)
            .arg(to)
            .status()
            .expect("cp");
        assert!(st.success());
    }

    #[test]
    fn a_venv_or_its_lib_swapped_for_a_symlink_or_a_file_is_put_back() {
        let pats = venv_pats();
        // (what the command does, the directory that must be real after)
        type Swap = fn(&Path);
        let swaps: [(&str, Swap, &str); 4] = [
            (
                ".venv -> .venv2",
                |r| {
                    copy_tree(&r.join(".venv"), &r.join(".venv2"));
                    fs::write(
                        r.join(".venv2/lib/python3.12/site-packages/zz.pth"),
                        "import os",
                    )
                    .expect("w");
                    fs::remove_dir_all(r.join(".venv")).expect("rm");
                    symlink(".venv2", r.join(".venv")).expect("ln");
                },
                ".venv",
            ),
            (
                ".venv/lib -> lib2",
                |r| {
                    copy_tree(&r.join(".venv/lib"), &r.join(".venv/lib2"));
                    fs::write(
                        r.join(".venv/lib2/python3.12/site-packages/zz.pth"),
                        "import os",
                    )
                    .expect("w");
                    fs::remove_dir_all(r.join(".venv/lib")).expect("rm");
                    symlink("lib2", r.join(".venv/lib")).expect("ln");
                },
                ".venv/lib",
            ),
            (
                "site-packages -> elsewhere",
                |r| {
                    let sp = r.join(".venv/lib/python3.12/site-packages");
                    fs::create_dir_all(r.join("sp2")).expect("mk");
                    fs::write(r.join("sp2/zz.pth"), "import os").expect("w");
                    fs::remove_dir_all(&sp).expect("rm");
                    symlink(r.join("sp2"), &sp).expect("ln");
                },
                ".venv/lib/python3.12/site-packages",
            ),
            (
                ".venv/lib a file",
                |r| {
                    fs::remove_dir_all(r.join(".venv/lib")).expect("rm");
                    fs::write(r.join(".venv/lib"), "x").expect("w");
                },
                ".venv/lib",
            ),
        ];
        for (what, swap, dir) in swaps {
            let d = tempfile::tempdir().expect("tmp");
            let root = d.path().to_path_buf();
            venv(&root);
            let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
            assert!(snap.refused.is_empty(), "{what}: {:?}", snap.refused);
            swap(&root);
            let out = snap.restore(std::slice::from_ref(&root), &pats);
            assert!(!out.is_empty(), "{what}: nothing reported");
            assert!(
                out.iter()
                    .any(|l| l.contains("on the way to protected files")),
                "{what}: {out:?}"
            );
            let m = fs::symlink_metadata(root.join(dir)).expect("md");
            assert!(m.is_dir(), "{what}: {dir} is not a real directory again");
            // Nothing the command planted is reachable through the venv.
            assert!(
                !root
                    .join(".venv/lib/python3.12/site-packages/zz.pth")
                    .exists(),
                "{what}: {out:?}"
            );
            // The venv's own start-up files are back where they were.
            assert_eq!(
                fs::read_to_string(root.join(".venv/pyvenv.cfg")).expect("r"),
                "home = /usr/bin\n",
                "{what}"
            );
            // A second look finds nothing more to do.
            assert!(
                snap.restore(std::slice::from_ref(&root), &pats).is_empty(),
                "{what}"
            );
        }
    }

    #[test]
    fn venv_startup_files_are_protected_and_pip_work_is_not() {
        let pats = venv_pats();
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        let sp = venv(&root);
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        // Positive control: what `pip install` writes (a package, its
        // dist-info, a console script, a RECORD) stays, with nothing to report.
        fs::create_dir_all(sp.join("pkg")).expect("mk");
        fs::write(sp.join("pkg/__init__.py"), "").expect("w");
        fs::create_dir_all(sp.join("pkg-1.0.dist-info")).expect("mk");
        fs::write(sp.join("pkg-1.0.dist-info/RECORD"), "").expect("w");
        fs::write(root.join(".venv/bin/pkg-cli"), "#!/usr/bin/env python\n").expect("w");
        assert!(
            snap.restore(std::slice::from_ref(&root), &pats).is_empty(),
            "pip's writes must not count"
        );
        assert!(sp.join("pkg/__init__.py").exists());
        assert!(root.join(".venv/bin/pkg-cli").exists());
        // Each start-up file: created, changed, or the lib64 symlink
        // pointed elsewhere: put back.
        fs::write(sp.join("sitecustomize.py"), "import os").expect("w");
        fs::write(sp.join("usercustomize.py"), "import os").expect("w");
        fs::write(root.join(".venv/pyvenv.cfg"), "home = /tmp/evil\n").expect("w");
        fs::write(root.join(".venv/bin/activate"), "touch pwned\n").expect("w");
        fs::write(root.join(".venv/bin/activate.fish"), "touch pwned\n").expect("w");
        fs::remove_file(root.join(".venv/lib64")).expect("rm");
        symlink("/tmp", root.join(".venv/lib64")).expect("ln");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert_eq!(out.len(), 6, "{out:?}");
        assert!(!sp.join("sitecustomize.py").exists());
        assert!(!sp.join("usercustomize.py").exists());
        assert!(!root.join(".venv/bin/activate.fish").exists());
        assert_eq!(
            fs::read_to_string(root.join(".venv/bin/activate")).expect("r"),
            "# activate\n"
        );
        assert_eq!(
            fs::read_link(root.join(".venv/lib64")).expect("rl"),
            Path::new("lib")
        );
        // The pyvenv.cfg removed while a `.pth` is planted: still found.
        fs::remove_file(root.join(".venv/pyvenv.cfg")).expect("rm");
        fs::write(sp.join("zz.pth"), "import os").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(!sp.join("zz.pth").exists());
        assert!(root.join(".venv/pyvenv.cfg").exists());
    }

    #[test]
    fn a_walked_or_fixed_directory_swapped_for_a_symlink_is_put_back() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        fs::create_dir_all(root.join(".git/modules/sub/hooks")).expect("mk");
        fs::create_dir_all(root.join(".git/worktrees")).expect("mk");
        let pats: Vec<String> = [".git/modules/**/hooks/", ".git/worktrees/*/gitdir"]
            .map(String::from)
            .to_vec();
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        // `.git/worktrees` (fixed part of a glob pattern) swapped for a
        // symlink to a copy holding a new linked worktree.
        fs::create_dir_all(root.join("wt2/x")).expect("mk");
        fs::write(root.join("wt2/x/gitdir"), "/tmp/evil").expect("w");
        fs::remove_dir(root.join(".git/worktrees")).expect("rm");
        symlink(root.join("wt2"), root.join(".git/worktrees")).expect("ln");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert!(!out.is_empty());
        assert!(
            fs::symlink_metadata(root.join(".git/worktrees"))
                .expect("md")
                .is_dir()
        );
        assert!(!root.join(".git/worktrees/x/gitdir").exists(), "{out:?}");
    }

    #[test]
    fn protected_directories_swapped_for_symlinks_are_put_back_and_said() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        fs::create_dir_all(root.join(".git/hooks")).expect("mk");
        fs::write(root.join(".git/config"), "[core]\n").expect("w");
        fs::create_dir_all(root.join(".claude")).expect("mk");
        fs::write(root.join(".claude/settings.json"), "{}").expect("w");
        let pats: Vec<String> = [".git", ".git/config", ".git/hooks/", ".claude/"]
            .map(String::from)
            .to_vec();
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        // `.git/hooks -> hooks2` with a new hook; `.claude -> .claude2`
        // with changed settings.
        fs::create_dir_all(root.join("hooks2")).expect("mk");
        fs::write(root.join("hooks2/pre-commit"), "evil").expect("w");
        fs::remove_dir(root.join(".git/hooks")).expect("rm");
        symlink(root.join("hooks2"), root.join(".git/hooks")).expect("ln");
        copy_tree(&root.join(".claude"), &root.join(".claude2"));
        fs::write(root.join(".claude2/settings.json"), "{\"hooks\":1}").expect("w");
        fs::remove_dir_all(root.join(".claude")).expect("rm");
        symlink(".claude2", root.join(".claude")).expect("ln");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        for dir in [".git/hooks", ".claude"] {
            assert!(
                fs::symlink_metadata(root.join(dir)).expect("md").is_dir(),
                "{dir}"
            );
            assert!(
                out.iter()
                    .any(|l| l.contains(dir) && l.contains("replaced by a symlink")),
                "{dir}: {out:?}"
            );
        }
        assert!(!root.join(".git/hooks/pre-commit").exists());
        assert_eq!(
            fs::read_to_string(root.join(".claude/settings.json")).expect("r"),
            "{}"
        );
        assert!(snap.restore(std::slice::from_ref(&root), &pats).is_empty());
    }

    #[test]
    fn hooks_under_core_hookspath_are_restored() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        fs::create_dir_all(root.join(".git/hooks")).expect("mk");
        fs::create_dir_all(root.join("tools/hooks")).expect("mk");
        fs::write(
            root.join(".git/config"),
            "[core]\n\thooksPath = tools/hooks\n[include]\n\tpath = ../team.gitconfig\n",
        )
        .expect("w");
        fs::write(root.join("team.gitconfig"), "[user]\n\tname = t\n").expect("w");
        fs::write(root.join("tools/hooks/pre-commit"), "#!/bin/sh\n").expect("w");
        let pats: Vec<String> = [".git", ".git/config", ".git/hooks/"]
            .map(String::from)
            .to_vec();
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        assert!(snap.refused.is_empty(), "{:?}", snap.refused);
        fs::write(
            root.join("tools/hooks/pre-commit"),
            "#!/bin/sh\ntouch pwned\n",
        )
        .expect("w");
        fs::write(
            root.join("tools/hooks/pre-push"),
            "#!/bin/sh\ntouch pwned\n",
        )
        .expect("w");
        fs::write(root.join("team.gitconfig"), "[core]\n\tfsmonitor = evil\n").expect("w");
        // Positive control: a file beside the hooks directory stays.
        fs::write(root.join("tools/build.sh"), "make\n").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert_eq!(out.len(), 3, "{out:?}");
        assert_eq!(
            fs::read_to_string(root.join("tools/hooks/pre-commit")).expect("r"),
            "#!/bin/sh\n"
        );
        assert!(!root.join("tools/hooks/pre-push").exists());
        assert_eq!(
            fs::read_to_string(root.join("team.gitconfig")).expect("r"),
            "[user]\n\tname = t\n"
        );
        assert!(root.join("tools/build.sh").exists());
    }

    /// Review C: `core.hooksPath = lnk/hooks` with `lnk -> scripts`: the
    /// real directory is protected, the symlink too (pointed elsewhere: put
    /// back), and `scripts` swapped for a symlink is a directory again.
    #[test]
    fn hookspath_through_a_symlinked_directory_is_restored() {
        let pats: Vec<String> = [".git", ".git/config", ".git/hooks/"]
            .map(String::from)
            .to_vec();
        let world = || {
            let d = tempfile::tempdir().expect("tmp");
            let root = d.path().to_path_buf();
            fs::create_dir_all(root.join(".git/hooks")).expect("mk");
            fs::create_dir_all(root.join("scripts/hooks")).expect("mk");
            fs::create_dir_all(root.join("other/hooks")).expect("mk");
            fs::write(
                root.join(".git/config"),
                "[core]\n\thooksPath = lnk/hooks\n",
            )
            .expect("w");
            fs::write(root.join("scripts/hooks/pre-commit"), "#!/bin/sh\n").expect("w");
            std::os::unix::fs::symlink("scripts", root.join("lnk")).expect("ln");
            let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
            assert!(snap.refused.is_empty(), "{:?}", snap.refused);
            (d, root, snap)
        };
        // Writes through the real directory and through the link.
        let (_d, root, snap) = world();
        fs::write(root.join("scripts/hooks/pre-commit"), "evil\n").expect("w");
        fs::write(root.join("lnk/hooks/pre-push"), "evil\n").expect("w");
        fs::write(root.join("scripts/notes.txt"), "kept\n").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(
            fs::read_to_string(root.join("scripts/hooks/pre-commit")).expect("r"),
            "#!/bin/sh\n"
        );
        assert!(!root.join("scripts/hooks/pre-push").exists());
        assert!(root.join("scripts/notes.txt").exists(), "control");
        // The link pointed at another directory.
        let (_d, root, snap) = world();
        fs::write(root.join("other/hooks/pre-commit"), "evil\n").expect("w");
        fs::remove_file(root.join("lnk")).expect("rm");
        std::os::unix::fs::symlink("other", root.join("lnk")).expect("ln");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert!(!out.is_empty(), "{out:?}");
        assert_eq!(
            fs::read_link(root.join("lnk")).expect("l"),
            Path::new("scripts")
        );
        // `scripts` swapped for a symlink to a copy with a new hook.
        let (_d, root, snap) = world();
        fs::create_dir_all(root.join("copy/hooks")).expect("mk");
        fs::write(root.join("copy/hooks/pre-commit"), "evil\n").expect("w");
        fs::remove_dir_all(root.join("scripts")).expect("rm");
        std::os::unix::fs::symlink("copy", root.join("scripts")).expect("ln");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert!(!out.is_empty(), "{out:?}");
        assert!(
            fs::symlink_metadata(root.join("scripts"))
                .expect("m")
                .is_dir()
        );
        assert_eq!(
            fs::read_to_string(root.join("lnk/hooks/pre-commit")).expect("r"),
            "#!/bin/sh\n"
        );
        // A link out of the root is not followed: a note, the link kept.
        let d = tempfile::tempdir().expect("tmp");
        let out_dir = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        fs::create_dir_all(root.join(".git")).expect("mk");
        fs::write(
            root.join(".git/config"),
            "[core]\n\thooksPath = lnk/hooks\n",
        )
        .expect("w");
        std::os::unix::fs::symlink(out_dir.path(), root.join("lnk")).expect("ln");
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        assert!(
            snap.notes
                .iter()
                .any(|n| n.contains("out of its writable root")),
            "{:?}",
            snap.notes
        );
        fs::remove_file(root.join("lnk")).expect("rm");
        std::os::unix::fs::symlink("/", root.join("lnk")).expect("ln");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert!(!out.is_empty(), "{out:?}");
        assert_eq!(fs::read_link(root.join("lnk")).expect("l"), out_dir.path());
    }

    /// Review E: an include file and a hooks directory in another writable
    /// root than the repository's are protected under that root.
    #[test]
    fn hookspath_and_includes_in_another_root_are_restored() {
        let a = tempfile::tempdir().expect("tmp");
        let b = tempfile::tempdir().expect("tmp");
        let (ra, rb) = (a.path().to_path_buf(), b.path().to_path_buf());
        fs::create_dir_all(ra.join(".git")).expect("mk");
        fs::create_dir_all(rb.join("hooks")).expect("mk");
        fs::write(
            ra.join(".git/config"),
            format!("[include]\n\tpath = {}/team.gitconfig\n", rb.display()),
        )
        .expect("w");
        fs::write(
            rb.join("team.gitconfig"),
            format!("[core]\n\thooksPath = {}/hooks\n", rb.display()),
        )
        .expect("w");
        fs::write(rb.join("hooks/pre-commit"), "#!/bin/sh\n").expect("w");
        let pats: Vec<String> = [".git", ".git/config", ".git/hooks/"]
            .map(String::from)
            .to_vec();
        let roots = vec![ra.clone(), rb.clone()];
        let snap = Snapshot::take(&roots, &pats);
        assert!(snap.refused.is_empty(), "{:?}", snap.refused);
        fs::write(rb.join("team.gitconfig"), "[core]\n\tfsmonitor = evil\n").expect("w");
        fs::write(rb.join("hooks/pre-commit"), "evil\n").expect("w");
        fs::write(rb.join("notes.txt"), "kept\n").expect("w");
        let out = snap.restore(&roots, &pats);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(
            fs::read_to_string(rb.join("hooks/pre-commit")).expect("r"),
            "#!/bin/sh\n"
        );
        assert!(
            fs::read_to_string(rb.join("team.gitconfig"))
                .expect("r")
                .contains("hooksPath")
        );
        assert!(rb.join("notes.txt").exists(), "control");
    }

    /// Review A: a pattern whose first component the root does not hold
    /// yields no entry, and what the command creates there is still
    /// removed; entries are only for what exists.
    #[test]
    fn absent_patterns_cost_no_entry_and_creations_are_removed() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        fs::write(root.join(".envrc"), "export A=1\n").expect("w");
        let pats: Vec<String> = [
            ".envrc",
            ".cargo/config.toml",
            ".claude/",
            ".npmrc",
            "**/pyvenv.cfg",
        ]
        .map(String::from)
        .to_vec();
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        assert_eq!(snap.entries.len(), 1, "{:?}", snap.entries.keys());
        fs::create_dir_all(root.join(".cargo")).expect("mk");
        fs::write(root.join(".cargo/config.toml"), "[build]\n").expect("w");
        fs::create_dir_all(root.join(".claude/x")).expect("mk");
        fs::write(root.join(".npmrc"), "x\n").expect("w");
        fs::write(root.join(".envrc"), "evil\n").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert!(out.len() >= 4, "{out:?}");
        assert!(!root.join(".cargo/config.toml").exists());
        assert!(!root.join(".claude").exists());
        assert!(!root.join(".npmrc").exists());
        assert_eq!(
            fs::read_to_string(root.join(".envrc")).expect("r"),
            "export A=1\n"
        );
        // The same with the root too large to be listed (probed path by
        // path, as before).
        for i in 0..300 {
            fs::write(root.join(format!("file-with-a-long-name-{i:04}")), "").expect("w");
        }
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        fs::write(root.join(".npmrc"), "x\n").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(!root.join(".npmrc").exists());
    }

    /// Review F: a linked worktree (`.git` a gitfile): `core.hooksPath` is
    /// read from the common directory's config (through `commondir`) and
    /// the worktree's `config.worktree`, relative to the worktree.
    #[test]
    fn hookspath_of_a_linked_worktree_is_read_through_its_gitfile() {
        let main = tempfile::tempdir().expect("tmp");
        let wt = tempfile::tempdir().expect("tmp");
        let (m, root) = (main.path().to_path_buf(), wt.path().to_path_buf());
        let g = m.join(".git/worktrees/wt");
        fs::create_dir_all(&g).expect("mk");
        fs::write(g.join("commondir"), "../..\n").expect("w");
        fs::write(
            m.join(".git/config"),
            "[extensions]\n\tworktreeConfig = true\n[core]\n\thooksPath = tools/hooks\n",
        )
        .expect("w");
        fs::write(
            g.join("config.worktree"),
            "[core]\n\thooksPath = wt-hooks\n",
        )
        .expect("w");
        fs::write(root.join(".git"), format!("gitdir: {}\n", g.display())).expect("w");
        for d in ["tools/hooks", "wt-hooks"] {
            fs::create_dir_all(root.join(d)).expect("mk");
            fs::write(root.join(d).join("pre-commit"), "#!/bin/sh\n").expect("w");
        }
        let pats: Vec<String> = [".git", ".git/config", ".git/hooks/"]
            .map(String::from)
            .to_vec();
        let snap = Snapshot::take(std::slice::from_ref(&root), &pats);
        assert!(snap.refused.is_empty(), "{:?}", snap.refused);
        for d in ["tools/hooks", "wt-hooks"] {
            fs::write(root.join(d).join("pre-commit"), "evil\n").expect("w");
        }
        fs::write(root.join("tools/notes.txt"), "kept\n").expect("w");
        let out = snap.restore(std::slice::from_ref(&root), &pats);
        assert_eq!(out.len(), 2, "{out:?}");
        for d in ["tools/hooks", "wt-hooks"] {
            assert_eq!(
                fs::read_to_string(root.join(d).join("pre-commit")).expect("r"),
                "#!/bin/sh\n"
            );
        }
        assert!(root.join("tools/notes.txt").exists(), "control");
    }
}
