//! The Landlock ruleset: which trees the command may read, write and
//! execute, which TCP ports it may connect to, and the IPC scopes.
//!
//! Landlock only ever *grants*, and a grant on a directory covers everything
//! below it. To keep a secret (`~/.ssh`) unreadable inside a readable root
//! (`/`), the root is not granted as a whole: the rules grant each sibling
//! along the path to the secret instead (every entry of `/` but `home`, every
//! entry of `/home` but `u`, every entry of `/home/u` but `.ssh`), plus
//! `ReadDir` alone on the ancestors so that `ls ~` still works. Limits of
//! that carving, documented in `docs/sandbox.md`:
//! - `ReadDir` is hierarchical, so names inside the denied directory can
//!   still be listed (their contents cannot be read);
//! - entries created in a carved ancestor after the sandbox starts are not
//!   covered by any rule, so they are not accessible to the command. A
//!   denied path that does not exist yet relies on this: its deepest
//!   existing directory is carved (`~/.cargo` for a missing
//!   `~/.cargo/credentials.toml`), so the secret is unreadable when it is
//!   created during the run; except inside a writable root, where that
//!   directory is not carved (see `deny_points`);
//! - in a writable root that contains a denied path, the carved ancestors
//!   themselves only get `ReadDir`: new files cannot be created directly in
//!   them (existing entries stay writable);
//! - a hard link or bind mount of the secret elsewhere is another inode
//!   path and is readable if that place is.

use std::fs;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};
use serde::Serialize;

use super::{NetworkAccess, SandboxError, SandboxSpec};

/// Highest Landlock ABI the `landlock` crate (and so safe-exec) knows.
pub const CRATE_ABI: u32 = 9;
const LATEST: ABI = ABI::V9;

/// Rights on a read-only root: run programs, read files, list directories.
fn read_access() -> BitFlags<AccessFs> {
    AccessFs::from_read(LATEST)
}

/// Rights on a writable root: everything but device ioctls (only granted on
/// terminal devices) and creating device nodes (a root-owned command could
/// otherwise `mknod` a raw disk inside its workspace and open it).
fn write_access() -> BitFlags<AccessFs> {
    AccessFs::from_all(LATEST) & !(AccessFs::IoctlDev | AccessFs::MakeChar | AccessFs::MakeBlock)
}

/// Rights on the writable root `root` (real path). The temporary directory
/// (`tmp`, real path: `$TMPDIR`, else `/tmp`) is where the user's own
/// daemons keep their sockets (tmux's server, `ssh-agent`, X11, editors'
/// IPC): connecting to a pathname socket there (`resolve_unix`, Landlock
/// ABI 9) is withheld unless the profile allows Unix sockets. A project's
/// own sockets, below the other roots, stay reachable.
fn write_rights(root: &Path, tmp: Option<&Path>, unix_sockets: bool) -> BitFlags<AccessFs> {
    if !unix_sockets && tmp == Some(root) {
        write_access() & !AccessFs::ResolveUnix
    } else {
        write_access()
    }
}

/// Rights on the harmless character devices every program expects.
fn dev_rw() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate
}

/// Rights on devices a profile lists in `[sandbox] devices`.
fn device_access() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev | AccessFs::ReadDir
}

/// Rights on the controlling terminal (`stty`, `script`, line editors).
fn tty_access() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev | AccessFs::ReadDir
}

/// TCP ports the command may connect to, per network mode.
pub(crate) fn connect_ports(network: NetworkAccess) -> &'static [u16] {
    match network {
        NetworkAccess::Dns => &[53],
        NetworkAccess::Http => &[53, 80, 443],
        NetworkAccess::Off
        | NetworkAccess::Full
        | NetworkAccess::Ping
        | NetworkAccess::Loopback => &[],
    }
}

/// One planned path rule, for `describe` and tests.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PlannedRule {
    /// Path the rule is attached to (opened with `O_PATH`).
    pub path: PathBuf,
    /// Rights granted; serialized as Landlock names them (`read_file`,
    /// `make_reg`...), computed only when serialized.
    #[serde(rename = "access", serialize_with = "ser_rights")]
    pub rights: BitFlags<AccessFs>,
    #[serde(skip)]
    pub(crate) is_dir: bool,
    /// `path` is real (resolved when planned: no component is a symlink),
    /// so `build` opens it without following any: a component swapped for
    /// a symlink since planning (by another process writing in a carved
    /// directory) gets no rule instead of handing the rule to the
    /// symlink's target. Devices are opened as named (`/dev/tty`...).
    #[serde(skip)]
    pub(crate) real: bool,
    /// For an entry of a directory the carving listed: the index of that
    /// directory's own rule in [`LandlockPlan::rules`] and where the
    /// entry's name starts in `path`. [`build`] then opens the entry
    /// relative to the listing's descriptor (see [`LandlockPlan::listed`])
    /// without parsing `path` or searching for its directory (a HOME 20
    /// levels deep with 200 entries: a scan and a comparison of a 100-byte
    /// path per rule).
    #[serde(skip)]
    pub(crate) entry_of: Option<(u32, u32)>,
}

/// The whole ruleset, computed before anything is opened.
#[derive(Debug, Clone, Serialize)]
pub struct LandlockPlan {
    /// Filesystem rules.
    pub rules: Vec<PlannedRule>,
    /// Whether TCP bind/connect is handled (closed except `connect_ports`).
    pub handle_net: bool,
    /// TCP ports allowed for connect.
    pub connect_ports: Vec<u16>,
    /// IPC scopes: `abstract_unix_socket`, `signal`.
    pub scopes: Vec<String>,
    #[serde(skip)]
    pub(crate) scope_flags: BitFlags<Scope>,
    /// Directories on the way to a denied path that could not be listed.
    pub unlisted: Vec<Unlisted>,
    /// Each `deny_read` path and how the rules keep it unreadable.
    pub deny_read: Vec<DenyState>,
    /// The directories the carving listed (the carved ancestors), still
    /// open, each with the index of its own rule (`read_dir` alone), in
    /// the order of the rules: [`build`] adds that rule with this
    /// descriptor and opens the directory's entries relative to it,
    /// instead of opening the directory again.
    #[serde(skip)]
    pub(crate) listed: std::sync::Arc<Vec<(usize, OwnedFd)>>,
}

/// How one `deny_read` path is kept unreadable (`check --json`:
/// `sandbox.landlock.deny_read`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct DenyState {
    /// The path as the profile gave it (placeholders expanded).
    pub path: PathBuf,
    /// `denied`: it exists, and no rule grants it (`real`: where it
    /// resolved to). `absent`: it does not exist; `carved` is its deepest
    /// existing directory, granted `read_dir` alone, so whatever is created
    /// in it during the run is covered by no rule (`real`: where it would
    /// appear). `unguarded`: it does not exist and would appear inside the
    /// writable root `writable_root`, which is not carved for it (the
    /// command could not create files there otherwise): created during the
    /// run, it is readable. `ignored`: not an absolute path, or behind a
    /// loop of symlinks; no rule is planned for it.
    pub state: &'static str,
    /// Where the path resolves (or would appear), symlinks followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub real: Option<PathBuf>,
    /// `absent`, `unguarded`: the deepest existing directory on the way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carved: Option<PathBuf>,
    /// `unguarded`: the writable root it lies in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writable_root: Option<PathBuf>,
}

fn ser_rights<S: serde::Serializer>(r: &BitFlags<AccessFs>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(names(*r))
}

/// Snake-case names of `access` (`read_file`, `make_reg`...).
pub fn names(access: BitFlags<AccessFs>) -> Vec<String> {
    access
        .iter()
        .map(|a| {
            let mut out = String::new();
            for (i, c) in format!("{a:?}").chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            }
            out
        })
        .collect()
}

fn push_rule(out: &mut Vec<PlannedRule>, path: &Path, access: BitFlags<AccessFs>) {
    let Ok(meta) = fs::metadata(path) else {
        return; // does not exist (or vanished): nothing to grant
    };
    push_known(out, path, access, meta.is_dir(), None);
}

/// [`push_rule`] for a device path, opened as named (not [`PlannedRule::real`]).
fn push_device(out: &mut Vec<PlannedRule>, path: &Path, access: BitFlags<AccessFs>) {
    let before = out.len();
    push_rule(out, path, access);
    if let Some(r) = out.get_mut(before) {
        r.real = false;
    }
}

/// [`push_rule`] when the file type is already known (from `readdir`);
/// `path` is moved in when the caller owns it (an entry of a listing,
/// `entry_of`: see [`PlannedRule::entry_of`]).
fn push_known(
    out: &mut Vec<PlannedRule>,
    path: impl Into<PathBuf>,
    access: BitFlags<AccessFs>,
    is_dir: bool,
    entry_of: Option<(u32, u32)>,
) {
    let rights = if is_dir {
        access
    } else {
        access & AccessFs::from_file(LATEST)
    };
    if rights.is_empty() {
        return;
    }
    out.push(PlannedRule {
        path: path.into(),
        rights,
        is_dir,
        real: true,
        entry_of,
    });
}

/// Canonical form of `p`, or `None` when it does not exist.
fn canonical(p: &Path) -> Option<PathBuf> {
    crate::sys::path::canonicalize(p).ok()
}

/// The canonical forms of one plan's paths, each asked of the kernel once.
/// The profile's paths sit in a few directories (two dozen denied paths,
/// most directly in HOME or `~/.config`): each such directory is opened
/// (`O_PATH`) and named (`/proc/self/fd`) once, and an entry of it needs
/// one `fstatat` relative to it: not a symlink, its canonical form is the
/// directory's and its name; missing, it has none. A symlink, or any other
/// answer, is resolved by [`canonical`] as before. This gives what
/// [`canonical`] gives for every path (`canonical_matches_the_kernel`),
/// with one short lookup per path instead of three syscalls that each walk
/// the whole path (a HOME 20 levels deep).
///
/// The memos are keyed by the paths' bytes, not by `Path` (whose hash and
/// equality go component by component: a prefix of a HOME 20 levels deep
/// hashed 25 times over). A path spelled two ways (`/a//b`, `/a/b`) only
/// misses the memo and is resolved again, to the same answer.
#[derive(Default)]
struct Canon {
    paths: std::collections::HashMap<Vec<u8>, Option<PathBuf>, FastHash>,
    dirs: std::collections::HashMap<Vec<u8>, Result<(PathBuf, OwnedFd), i32>, FastHash>,
    /// Paths `fstatat` found missing (not a dangling symlink: no entry at
    /// all), spelled as their real directory and their name: where a
    /// denied path would appear is then known without asking again.
    absent: std::collections::HashSet<Vec<u8>, FastHash>,
}

/// The memos' hasher: the keys are whole paths (~100 bytes under a HOME 20
/// levels deep), which SipHash took a byte at a time (see
/// [`crate::sys::path::Fnv`]).
type FastHash = std::hash::BuildHasherDefault<crate::sys::path::Fnv>;

/// The bytes of `p`, the memos' key (see [`Canon`]).
fn key(p: &Path) -> &[u8] {
    p.as_os_str().as_bytes()
}

impl Canon {
    fn get(&mut self, p: &Path) -> Option<PathBuf> {
        if let Some(known) = self.paths.get(key(p)) {
            return known.clone();
        }
        let found = self.resolve(p);
        self.paths.insert(key(p).to_vec(), found.clone());
        found
    }

    fn resolve(&mut self, p: &Path) -> Option<PathBuf> {
        let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
            return canonical(p);
        };
        if !plain_last(p, name) {
            return canonical(p);
        }
        if !self.dirs.contains_key(key(parent)) {
            // A directory whose own parent is already open is opened
            // relative to it (`~/.config` from `~`): one component to look
            // up instead of the whole path; a missing parent means a
            // missing directory.
            let opened = match (parent.parent(), parent.file_name()) {
                (Some(up), Some(pname)) if plain_last(parent, pname) => {
                    match self.dirs.get(key(up)) {
                        Some(Ok((_, up_fd))) => open_dir_at(Some(up_fd), Path::new(pname)),
                        Some(Err(e)) if matches!(*e, libc::ENOENT | libc::ENOTDIR) => Err(*e),
                        _ => self.open_below(parent),
                    }
                }
                _ => open_dir(parent),
            };
            self.dirs.insert(key(parent).to_vec(), opened);
        }
        let Some(dir) = self.dirs.get(key(parent)) else {
            return canonical(p);
        };
        let (dir_real, dir_fd) = match dir.as_ref() {
            Ok(d) => d,
            // No such directory: nothing in it.
            Err(&(libc::ENOENT | libc::ENOTDIR)) => return None,
            // It cannot be opened or named: ask for the path itself.
            Err(_) => return canonical(p),
        };
        let st =
            match nix::sys::stat::fstatat(dir_fd, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
                Ok(st) => st,
                Err(nix::errno::Errno::ENOENT) => {
                    self.absent
                        .insert(dir_real.join(name).into_os_string().into_vec());
                    return None;
                }
                Err(_) => return canonical(p),
            };
        if st.st_mode & libc::S_IFMT == libc::S_IFLNK {
            return canonical(p);
        }
        Some(dir_real.join(name))
    }
}

impl Canon {
    /// [`open_dir`] of `dir`, relative to the nearest open directory a few
    /// levels above it when there is one (`~/.local/share` from `~` when
    /// `~/.local` was never opened): the names below it are looked up as
    /// the whole path's would be, without the 25 components above.
    fn open_below(&self, dir: &Path) -> Result<(PathBuf, OwnedFd), i32> {
        let bytes = key(dir);
        let mut end = bytes.len();
        for _ in 0..3 {
            let Some(slash) = bytes[..end].iter().rposition(|&b| b == b'/') else {
                break;
            };
            if slash == 0 {
                break;
            }
            if let Some(Ok((_, fd))) = self.dirs.get(&bytes[..slash]) {
                let rest = std::ffi::OsStr::from_bytes(&bytes[slash + 1..]);
                return open_dir_at(Some(fd), Path::new(rest));
            }
            end = slash;
        }
        open_dir(dir)
    }
}

/// Whether real path `p` is `dir` or inside it (both real: absolute, no
/// `.`, `..` or trailing slash), on bytes; the same answer as
/// `Path::starts_with` for such paths.
fn inside(p: &Path, dir: &Path) -> bool {
    below(p, dir).is_some()
}

/// What follows `dir/` in real path `p` (empty when `p` is `dir`); `None`
/// when `p` is not inside `dir`. See [`inside`].
fn below<'p>(p: &'p Path, dir: &Path) -> Option<&'p [u8]> {
    let (p, d) = (p.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    let rest = p.strip_prefix(d)?;
    if rest.is_empty() {
        return Some(rest);
    }
    if d.ends_with(b"/") {
        return Some(rest);
    }
    rest.strip_prefix(b"/")
}

/// Most symlinks followed while resolving a denied path that does not
/// exist (the kernel's own limit, `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Where a `deny_read` path that does not exist would appear, and the
/// deepest existing directory on the way (the one to carve, so that an
/// entry created in it later is covered by no rule), as the kernel would
/// resolve it once created: the existing prefix is resolved by [`Canon`],
/// the rest one component at a time, following a symlink met there (a
/// dangling `~/.kube -> /data/kube`: the secret would appear at
/// `/data/kube`, so `/data` is the directory to carve). A file on the way
/// (`~/.docker` a file, `~/.docker/config.json` denied) is its directory's
/// entry: the point is below it, so its directory is carved and the file
/// still granted as a file. `None`: a relative path, or a loop of links.
fn deny_point(canon: &mut Canon, p: &Path) -> Option<(PathBuf, PathBuf)> {
    use std::path::Component;
    let mut path = p.to_path_buf();
    for _ in 0..=MAX_LINKS {
        if !path.is_absolute() {
            return None;
        }
        let comps: Vec<Component<'_>> = path.components().collect();
        // Where each prefix of `comps` ends in `path`'s bytes, when `path`
        // is spelled plainly (see `prefix_ends`): the prefix is then a
        // slice of it, not a path built again component by component.
        let ends = prefix_ends(&path, comps.len());
        // The deepest existing prefix, from the memo (each prefix is one
        // short lookup in its open parent, see `Canon`).
        let mut base = None;
        for k in (1..=comps.len()).rev() {
            let found = match ends.as_deref() {
                Some(ends) => {
                    let bytes = &path.as_os_str().as_bytes()[..ends[k - 1]];
                    canon.get(Path::new(std::ffi::OsStr::from_bytes(bytes)))
                }
                None => canon.get(&comps[..k].iter().collect::<PathBuf>()),
            };
            if let Some(real) = found {
                base = Some((real, k));
                break;
            }
        }
        let (mut cur, k) = base.unwrap_or_else(|| (PathBuf::from("/"), 1));
        let mut rest = comps[k..].iter();
        let mut follow = None;
        while let Some(c) = rest.next() {
            let name = match c {
                Component::Normal(name) => *name,
                Component::ParentDir => {
                    // `cur` is a real directory: its parent is lexical.
                    cur.pop();
                    continue;
                }
                Component::CurDir | Component::RootDir | Component::Prefix(_) => continue,
            };
            let next = cur.join(name);
            let meta = if canon.absent.contains(key(&next)) {
                Err(std::io::Error::from_raw_os_error(libc::ENOENT))
            } else {
                fs::symlink_metadata(&next)
            };
            match meta {
                Ok(m) if m.file_type().is_symlink() => {
                    let Ok(target) = fs::read_link(&next) else {
                        return Some((next, cur));
                    };
                    let mut again = cur.join(target);
                    again.extend(rest.by_ref());
                    follow = Some(again);
                    break;
                }
                Ok(m) if m.is_dir() => cur = next,
                Ok(_) => {
                    // A file on the way: the point is below it.
                    let below = rest.find_map(|c| match c {
                        Component::Normal(n) => Some(*n),
                        _ => None,
                    });
                    let point = below.map_or_else(|| next.clone(), |n| next.join(n));
                    return Some((point, cur));
                }
                Err(e) => {
                    // Missing (or not searchable): the first missing name,
                    // and the names below it up to a `..`, which only the
                    // entry created later can resolve.
                    let mut point = next;
                    for c in rest {
                        match c {
                            Component::Normal(n) => point.push(n),
                            Component::CurDir => {}
                            _ => break,
                        }
                    }
                    // `cur` is the existing prefix, and a file (only the
                    // first one met can be): its directory is the one.
                    if e.raw_os_error() == Some(libc::ENOTDIR)
                        && let Some(up) = cur.parent()
                    {
                        return Some((point, up.to_path_buf()));
                    }
                    return Some((point, cur));
                }
            }
        }
        match follow {
            Some(again) => path = again,
            // Every component exists now (created since it was asked).
            None => {
                let parent = cur.parent().map_or_else(|| cur.clone(), Path::to_path_buf);
                return Some((cur, parent));
            }
        }
    }
    None
}

/// For an absolute path spelled plainly (`/`, or `/` followed by names
/// joined by single slashes, none of them `.`: what collecting its
/// `components()` gives back, byte for byte), where each of its first
/// `n` component prefixes ends: `ends[k - 1]` is the length of the prefix
/// of `k` components. `None` for any other spelling (`//`, `/./`, a
/// trailing slash), whose prefixes are then built from the components.
fn prefix_ends(path: &Path, n: usize) -> Option<Vec<usize>> {
    let bytes = path.as_os_str().as_bytes();
    let rest = bytes.strip_prefix(b"/")?;
    let mut ends = Vec::with_capacity(n);
    ends.push(1);
    if !rest.is_empty() {
        let mut at = 1;
        for name in rest.split(|&b| b == b'/') {
            if name.is_empty() || name == b"." {
                return None;
            }
            at += name.len();
            ends.push(at);
            at += 1;
        }
    }
    (ends.len() == n).then_some(ends)
}

/// `open(O_PATH | O_DIRECTORY)` of `dir` and its canonical name (from
/// `/proc/self/fd`); the open's errno when it fails (`ENOENT`, `ENOTDIR`:
/// no such directory), `EIO` when the name cannot be read.
fn open_dir(dir: &Path) -> Result<(PathBuf, OwnedFd), i32> {
    open_dir_at(None, dir)
}

/// Whether `p`'s last component is written plainly as `name` (`/a/b`, not
/// `/a/b/` or `/a/b/.`, which also require `b` to be a directory), in an
/// absolute path.
fn plain_last(p: &Path, name: &std::ffi::OsStr) -> bool {
    let bytes = p.as_os_str().as_bytes();
    p.is_absolute()
        && bytes.ends_with(name.as_bytes())
        && bytes.len() > name.len()
        && bytes[bytes.len() - name.len() - 1] == b'/'
}

/// [`open_dir`] of `dir`, relative to `at` when given (`dir` is then one
/// name in it).
fn open_dir_at(at: Option<&OwnedFd>, dir: &Path) -> Result<(PathBuf, OwnedFd), i32> {
    use nix::fcntl::OFlag;
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let mode = nix::sys::stat::Mode::empty();
    let fd = match at {
        Some(at) => nix::fcntl::openat(at, dir, flags, mode),
        None => nix::fcntl::open(dir, flags, mode),
    }
    .map_err(|e| e as i32)?;
    match fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())) {
        Ok(real) if real.is_absolute() && !real.as_os_str().as_bytes().ends_with(b" (deleted)") => {
            Ok((real, fd))
        }
        _ => Err(libc::EIO),
    }
}

/// A directory the carving could not list (issue 16) and what was done
/// instead; `doctor` and `check --json` show them.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Unlisted {
    /// The directory.
    pub path: PathBuf,
    /// The error from listing it (`Permission denied` for a 711 directory).
    pub error: String,
    /// The entries granted through it: only those on the way to a denied
    /// path's directory, a writable root or HOME. Its other entries are not
    /// readable in the sandbox (the caller could only reach them by a name
    /// it already knew).
    pub granted: Vec<PathBuf>,
}

/// What a listed directory entry is (`Other`: a file, device, socket...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    Symlink,
    Other,
}

/// A listing's entries: each name's range in the listing's name buffer,
/// and its kind.
type Entries = Vec<(std::ops::Range<usize>, Kind)>;

/// An open directory, closed on drop; its descriptor is where the carving
/// opens the next directory on the way, relative to it (one short lookup
/// instead of the whole path from `/`: a HOME 20 levels deep).
struct Listing(OwnedFd);

/// Bytes per `getdents64` call of a listing: one buffer for the whole
/// carving, reused by every listing (glibc's `opendir` would allocate and
/// free 32 KiB per directory, and `fdopendir` check the descriptor with
/// three more syscalls). 8 KiB (~250 entries of 16-byte names per call):
/// two pages to fault in, where a zeroed 32 KiB buffer would cost eight.
const LISTING_BUF: usize = 8 * 1024;

impl Listing {
    /// Opens `path` (relative to `at`, by its last component, when `at` is
    /// given) and reads its entries but `.` and `..`, with their types
    /// (`lstat` when the file system does not say, as `std::fs` does).
    /// `buf`: the carving's listing buffer.
    ///
    /// The names are copied, one after the other, into one `names` buffer
    /// (cleared first), each entry their range in it: one allocation per
    /// listing, not one per entry (a HOME with 200 entries).
    fn read(
        at: Option<libc::c_int>,
        path: &Path,
        buf: &mut Vec<u8>,
        names: &mut Vec<u8>,
    ) -> std::io::Result<(Listing, Entries)> {
        use nix::fcntl::OFlag;
        use std::ffi::OsStr;
        // No symlink is followed (`path` is real): a directory swapped for
        // a symlink since it was resolved fails with `ELOOP` instead of
        // having its target's entries listed and granted.
        let flags = OFlag::O_RDONLY
            | OFlag::O_DIRECTORY
            | OFlag::O_CLOEXEC
            | OFlag::O_NONBLOCK
            | OFlag::O_NOFOLLOW;
        let mode = nix::sys::stat::Mode::empty();
        let fd = match (at, path.file_name()) {
            (Some(at), Some(name)) => {
                // SAFETY: `at` is an open directory descriptor of the
                // caller's, alive for this call.
                let at = unsafe { std::os::fd::BorrowedFd::borrow_raw(at) };
                nix::fcntl::openat(at, name, flags, mode)
            }
            _ => open_real(path, flags),
        }
        .map_err(std::io::Error::from)?;
        let listing = Listing(fd);
        if buf.len() < LISTING_BUF {
            buf.resize(LISTING_BUF, 0);
        }
        let mut entries = Vec::new();
        names.clear();
        loop {
            let n = super::fds::getdents(listing.fd(), buf)
                .map_err(std::io::Error::from_raw_os_error)?;
            if n == 0 {
                break; // the end of the directory
            }
            for (name, d_type) in super::fds::dirents(&buf[..n]) {
                if name == b"." || name == b".." {
                    continue;
                }
                let kind = match d_type {
                    libc::DT_DIR => Kind::Dir,
                    libc::DT_LNK => Kind::Symlink,
                    libc::DT_UNKNOWN => {
                        match nix::sys::stat::fstatat(
                            &listing.0,
                            OsStr::from_bytes(name),
                            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
                        ) {
                            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFDIR => Kind::Dir,
                            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => Kind::Symlink,
                            Ok(_) => Kind::Other,
                            Err(_) => continue, // vanished meanwhile
                        }
                    }
                    _ => Kind::Other,
                };
                let start = names.len();
                names.extend_from_slice(name);
                entries.push((start..names.len(), kind));
            }
        }
        Ok((listing, entries))
    }

    /// The directory's descriptor.
    fn fd(&self) -> libc::c_int {
        self.0.as_raw_fd()
    }
}

/// `root.join(name)` for a name read from a directory (not empty, no
/// `/`), built in one allocation of the right size (`join` copies `root`
/// and then grows the copy for the name).
fn join_name(root: &Path, name: &std::ffi::OsStr) -> PathBuf {
    let (root, name) = (key(root), name.as_bytes());
    let slash = !root.ends_with(b"/");
    let mut path = Vec::with_capacity(root.len() + usize::from(slash) + name.len());
    path.extend_from_slice(root);
    if slash {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    PathBuf::from(std::ffi::OsString::from_vec(path))
}

/// The names a carved directory's entries are told apart by (the denied
/// paths in it, the directories on the way to one): each with a word made
/// of its length and first seven bytes, compared first, so that an entry
/// is compared byte by byte only with a name that starts as it does (a
/// HOME with 200 entries against ~30 denied names, many of one length:
/// `.dot12`, `.npmrc`, `.gnupg`).
#[derive(Default)]
struct Names<'a>(Vec<(u64, &'a [u8])>);

impl<'a> Names<'a> {
    fn word(name: &[u8]) -> u64 {
        let mut w = [0u8; 8];
        w[0] = u8::try_from(name.len()).unwrap_or(u8::MAX);
        let head = name.len().min(7);
        w[1..=head].copy_from_slice(&name[..head]);
        u64::from_ne_bytes(w)
    }

    fn push(&mut self, name: &'a [u8]) {
        self.0.push((Self::word(name), name));
    }

    fn contains(&self, name: &[u8]) -> bool {
        let w = Self::word(name);
        self.0.iter().any(|(k, n)| *k == w && *n == name)
    }
}

/// Most listing descriptors one carver keeps for [`build`] (see
/// [`LandlockPlan::listed`]); a plan has two carvers (`/dev` and the rest),
/// so it holds at most twice this. The plain run lists ~10 directories,
/// the benchmark's deep HOME ~30.
const MAX_KEPT: usize = 64;

/// What carving needs besides the root: the denied paths, where the
/// command must be able to reach through a directory it cannot list, and
/// where to record such directories.
struct Carver<'a> {
    denied: &'a [PathBuf],
    targets: &'a [PathBuf],
    unlisted: Vec<Unlisted>,
    /// The listing buffer (see [`LISTING_BUF`]).
    buf: Vec<u8>,
    /// Each listed directory's descriptor, with the index of its own rule
    /// (see [`LandlockPlan::listed`]).
    listed: Vec<(usize, OwnedFd)>,
}

impl Carver<'_> {
    /// Grants `access` on `root`, carving out every path of `denied` below it.
    /// `at`: an open descriptor of `root`'s parent directory, when known
    /// (the listing then opens `root` relative to it).
    fn carve(
        &mut self,
        root: &Path,
        at: Option<libc::c_int>,
        access: BitFlags<AccessFs>,
        out: &mut Vec<PlannedRule>,
    ) -> Result<(), SandboxError> {
        // Every path here is real (resolved, absolute, no `.`, `..` or
        // trailing slash), so "inside" is a byte prefix ending at a `/`:
        // comparing component by component cost `depth x deny paths x
        // depth` per plan (a HOME 20 levels deep with two dozen deny
        // paths: most of the plan's instructions).
        let denied = self.denied;
        if denied.iter().any(|d| inside(root, d)) {
            return Ok(()); // the root itself is (inside) a denied path
        }
        let inner: Vec<&Path> = denied
            .iter()
            .filter(|d| inside(d, root))
            .map(PathBuf::as_path)
            .collect();
        if inner.is_empty() {
            push_rule(out, root, access);
            return Ok(());
        }
        let mut names = Vec::new();
        let (dir, entries) = match Listing::read(at, root, &mut self.buf, &mut names) {
            Ok(l) => l,
            // A symlink now (swapped in since it was resolved: `ELOOP`, or
            // `ENOTDIR` with `O_DIRECTORY`): it needs no rule to be
            // followed, and its target has its own. Not a directory any
            // more: nothing below it to grant either.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                return Ok(());
            }
            Err(e) => {
                // The ancestor itself: listable only.
                push_rule(out, root, AccessFs::ReadDir.into());
                return self.through_unlisted(root, access, &inner, e, out);
            }
        };
        // The ancestor itself: listable only (a directory: it was listed).
        let own = out.len();
        push_known(out, root, AccessFs::ReadDir.into(), true, None);
        // The names below `root` on the way to a denied path: the denied
        // path itself (`exact`: no rule) or one of its ancestors (`deeper`:
        // carved in turn). Entries are then told apart by their name's
        // bytes, not by comparing whole paths component by component with
        // every denied path (a HOME 20 levels deep with 200 entries: 200 x
        // two dozen comparisons of 25 components each).
        let mut exact = Names::default();
        let mut deeper = Names::default();
        for d in &inner {
            let Some(rest) = below(d, root) else {
                continue;
            };
            match rest.iter().position(|&b| b == b'/') {
                None if !rest.is_empty() => exact.push(rest),
                Some(i) if i > 0 => deeper.push(&rest[..i]),
                _ => {}
            }
        }
        // Most entries get a rule: one growth of the rules for the listing
        // instead of doublings between the entries' paths (each doubling a
        // copy, and the arena does not reuse the old block).
        out.reserve(entries.len());
        let own_index = u32::try_from(own).ok();
        for (range, kind) in entries {
            let name = std::ffi::OsStr::from_bytes(names.get(range).unwrap_or_default());
            if exact.contains(name.as_bytes()) {
                continue;
            }
            if kind == Kind::Symlink {
                // A symlink needs no rule to be followed; granting it would
                // grant its target, which may be a denied path or lie outside
                // the root. The target is governed by its own rules.
                continue;
            }
            let path = join_name(root, name);
            let is_dir = kind == Kind::Dir;
            if is_dir && deeper.contains(name.as_bytes()) {
                self.carve(&path, Some(dir.fd()), access, out)?;
            } else {
                let name_at = key(&path).len() - name.len();
                let entry_of = own_index.zip(u32::try_from(name_at).ok());
                push_known(out, path, access, is_dir, entry_of);
            }
        }
        // Kept for `build` up to a bound, so that a profile denying paths
        // in hundreds of directories does not hold as many descriptors
        // (and run into RLIMIT_NOFILE): past it, `build` opens the
        // directory by path, as it does for every rule not listed here.
        if self.listed.len() < MAX_KEPT {
            self.listed.push((own, dir.0));
        }
        Ok(())
    }

    /// `root` cannot be listed (mode 711/751 above HOME): grant only the
    /// entries on the way to the denied paths' directories, the writable
    /// roots and HOME, carved in turn, and record what was done. The other
    /// entries stay unreadable in the sandbox; outside it the caller could
    /// only reach them by names it already knew.
    fn through_unlisted(
        &mut self,
        root: &Path,
        access: BitFlags<AccessFs>,
        inner: &[&Path],
        error: std::io::Error,
        out: &mut Vec<PlannedRule>,
    ) -> Result<(), SandboxError> {
        let mut next: Vec<PathBuf> = Vec::new();
        let targets = self.targets.to_vec();
        let ways = inner
            .iter()
            .filter_map(|d| d.parent())
            .chain(targets.iter().map(PathBuf::as_path));
        for target in ways {
            let Ok(rest) = target.strip_prefix(root) else {
                continue;
            };
            let Some(first) = rest.components().next() else {
                continue;
            };
            let child = root.join(first);
            if !next.contains(&child) {
                next.push(child);
            }
        }
        let mut granted = Vec::new();
        for child in next {
            if inner.contains(&child.as_path()) || fs::symlink_metadata(&child).is_err() {
                continue;
            }
            let before = out.len();
            self.carve(&child, None, access, out)?;
            if out.len() > before {
                granted.push(child);
            }
        }
        self.unlisted.push(Unlisted {
            path: root.to_path_buf(),
            error: error.to_string(),
            granted,
        });
        Ok(())
    }
}

/// The terminals the command was given: the character devices behind
/// descriptors 0, 1 and 2 that are terminals (`/dev/pts/3`, `/dev/tty1`).
pub fn given_terminals() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for fd in 0..3 {
        // SAFETY: isatty only inspects the descriptor.
        if unsafe { libc::isatty(fd) } != 1 {
            continue;
        }
        if let Ok(p) = fs::read_link(format!("/proc/self/fd/{fd}"))
            && p.starts_with("/dev/")
            && !out.contains(&p)
        {
            out.push(p);
        }
    }
    out
}

/// Devices every program may use: read/write, and read-only.
const DEV_RW: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];
const DEV_RO: &[&str] = &["/dev/random", "/dev/urandom"];

/// Computes the rules for `spec`. Read roots that do not exist are
/// skipped; a writable root that does not exist is an error; a denied path
/// that does not exist is carved out where it would appear (see
/// `deny_points`).
///
/// `/dev` is carved out of every root that contains it: only null, zero,
/// full, random, urandom, ptmx, tty and the terminal the command was given
/// (when descriptor 0, 1 or 2 is a terminal) and
/// `[sandbox] devices` are granted (plus `/dev/pts` as a whole while no pty
/// broker runs), never other terminals, `/dev/kmsg` or block devices. A
/// root inside `/dev` that a profile names explicitly is granted as named.
pub fn plan(spec: &SandboxSpec) -> Result<LandlockPlan, SandboxError> {
    // Each path is resolved once per plan (the writable roots are both
    // targets and roots, HOME is often one of the read roots' children),
    // and each directory holding such paths once (see `Canon`).
    let mut canon = Canon::default();
    let writable: Vec<PathBuf> = spec.write.iter().filter_map(|p| canon.get(p)).collect();
    let (denied, deny_read) = deny_points(&mut canon, &spec.deny_read, &writable);
    let mut canonical = |p: &Path| canon.get(p);
    let dev = PathBuf::from("/dev");
    let mut hidden = denied.clone();
    hidden.push(dev.clone());
    let mut targets = writable;
    if let Some(home) = std::env::var_os("HOME").and_then(|h| canonical(Path::new(&h))) {
        targets.push(home);
    }
    let mut rules = Vec::new();
    let mut read = read_access();
    if spec.unix_sockets {
        // ABI 9: connecting to pathname sockets below readable roots.
        read |= AccessFs::ResolveUnix;
    }
    let mut in_dev = Carver {
        denied: &denied,
        targets: &targets,
        unlisted: Vec::new(),
        buf: Vec::new(),
        listed: Vec::new(),
    };
    let mut elsewhere = Carver {
        denied: &hidden,
        targets: &targets,
        unlisted: Vec::new(),
        buf: Vec::new(),
        listed: Vec::new(),
    };
    for root in &spec.read {
        if let Some(root) = canonical(root) {
            let c = if root.starts_with(&dev) {
                &mut in_dev
            } else {
                &mut elsewhere
            };
            c.carve(&root, None, read, &mut rules)?;
        }
    }
    let tmp = std::env::var_os("TMPDIR")
        .filter(|t| !t.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    let tmp_real = canonical(&tmp);
    for root in &spec.write {
        let Some(canon) = canonical(root) else {
            if *root == tmp {
                return Err(SandboxError::TmpMissing(root.clone()));
            }
            return Err(SandboxError::WriteRootMissing(root.clone()));
        };
        let c = if canon.starts_with(&dev) {
            &mut in_dev
        } else {
            &mut elsewhere
        };
        let rights = write_rights(&canon, tmp_real.as_deref(), spec.unix_sockets);
        c.carve(&canon, None, rights, &mut rules)?;
    }
    let mut unlisted = in_dev.unlisted;
    unlisted.extend(elsewhere.unlisted);
    let mut listed = in_dev.listed;
    listed.extend(elsewhere.listed);
    listed.sort_unstable_by_key(|(i, _)| *i);
    // `ls /dev`: names only.
    push_device(&mut rules, &dev, AccessFs::ReadDir.into());
    for d in DEV_RW {
        push_device(&mut rules, Path::new(d), dev_rw());
    }
    for d in DEV_RO {
        push_device(&mut rules, Path::new(d), AccessFs::ReadFile.into());
    }
    // /dev/ptmx always creates a new pty. /dev/tty means the opener's own
    // controlling terminal: granted only when the command was given a
    // terminal on descriptor 0, 1 or 2; otherwise it is the user's terminal
    // behind a harness that redirected the command's stdio (red team 10
    // F20: keystrokes read, escape sequences written to it).
    let given = given_terminals();
    push_device(&mut rules, Path::new("/dev/ptmx"), tty_access());
    if !given.is_empty() {
        push_device(&mut rules, Path::new("/dev/tty"), tty_access());
    }
    if spec.pty_broker {
        push_device(&mut rules, Path::new("/dev/pts"), AccessFs::ReadDir.into());
    } else {
        push_device(&mut rules, Path::new("/dev/pts"), tty_access());
    }
    for tty in given {
        push_device(&mut rules, &tty, tty_access());
    }
    for d in &spec.devices {
        if let Some(d) = canonical(d) {
            push_device(&mut rules, &d, device_access());
        }
    }

    let mut scope_flags: BitFlags<Scope> = Scope::Signal.into();
    if !spec.unix_sockets {
        scope_flags |= Scope::AbstractUnixSocket;
    }
    let scopes = scope_flags
        .iter()
        .map(|s| match s {
            Scope::AbstractUnixSocket => "abstract_unix_socket".to_string(),
            Scope::Signal => "signal".to_string(),
            _ => format!("{s:?}"),
        })
        .collect();
    Ok(LandlockPlan {
        rules,
        // Loopback: the supervisor checks connect addresses (Landlock only
        // knows ports), and servers the command starts must bind.
        handle_net: !matches!(spec.network, NetworkAccess::Full | NetworkAccess::Loopback),
        connect_ports: connect_ports(spec.network).to_vec(),
        scopes,
        scope_flags,
        unlisted,
        deny_read,
        listed: std::sync::Arc::new(listed),
    })
}

/// The paths to carve out for `deny_read`, and what holds for each. A path
/// that exists is carved out where it resolves. One that does not is
/// carved out where it would appear ([`deny_point`]): its deepest existing
/// directory is then carved (`read_dir` alone, each entry its own rule),
/// so a secret created there during the run (`cargo login`, `gh auth
/// login`, a refreshed token) is covered by no rule. Not so inside a
/// writable root (`writable`, canonical): carving a directory there would
/// keep the command from creating files in it (and in every directory on
/// the way up to the root), so such a path is left out, as it always was,
/// and reported `unguarded`. A path that exists inside a writable root is
/// carved out as before.
fn deny_points(
    canon: &mut Canon,
    deny_read: &[PathBuf],
    writable: &[PathBuf],
) -> (Vec<PathBuf>, Vec<DenyState>) {
    let mut denied = Vec::with_capacity(deny_read.len());
    let mut states = Vec::with_capacity(deny_read.len());
    for p in deny_read {
        let mut state = DenyState {
            path: p.clone(),
            state: "denied",
            real: None,
            carved: None,
            writable_root: None,
        };
        if let Some(real) = canon.get(p) {
            denied.push(real.clone());
            state.real = Some(real);
        } else if let Some((point, dir)) = deny_point(canon, p) {
            match writable.iter().find(|w| dir.starts_with(w)) {
                Some(root) => {
                    state.state = "unguarded";
                    state.writable_root = Some(root.clone());
                }
                None => {
                    state.state = "absent";
                    denied.push(point.clone());
                }
            }
            state.real = Some(point);
            state.carved = Some(dir);
        } else {
            state.state = "ignored";
        }
        states.push(state);
    }
    (denied, states)
}

/// What `p.parent()` and `p.file_name()` give, for a rule's path: found
/// on the bytes when `p` is spelled plainly (absolute, single slashes, no
/// `.` or `..` component, no trailing slash: every path the plan makes),
/// from the components otherwise; `None` for `/`.
fn parent_and_name(p: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    use std::ffi::OsStr;
    let bytes = key(p);
    let plain = bytes.len() > 1
        && bytes[0] == b'/'
        && bytes[1..]
            .split(|&b| b == b'/')
            .all(|n| !n.is_empty() && n != b"." && n != b"..");
    if !plain {
        return p.parent().zip(p.file_name());
    }
    let slash = bytes.iter().rposition(|&b| b == b'/')?;
    let parent = if slash == 0 {
        &bytes[..1]
    } else {
        &bytes[..slash]
    };
    Some((
        Path::new(OsStr::from_bytes(parent)),
        OsStr::from_bytes(&bytes[slash + 1..]),
    ))
}

/// `open(O_PATH)` of `name`, relative to `dir` when given (as `PathFd`
/// does: the last component is followed if it is a symlink). `buf`: where
/// the NUL-terminated name is written (reused from call to call).
fn open_path(
    dir: Option<libc::c_int>,
    name: &std::ffi::OsStr,
    buf: &mut Vec<u8>,
    real: bool,
) -> Option<OwnedFd> {
    if real && dir.is_none() {
        return open_real(
            Path::new(name),
            nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_CLOEXEC,
        )
        .ok();
    }
    let bytes = name.as_bytes();
    if bytes.contains(&0) {
        return None; // no such name (as `CString::new` refused it)
    }
    buf.clear();
    buf.extend_from_slice(bytes);
    buf.push(0);
    let at = dir.unwrap_or(libc::AT_FDCWD);
    // A real path's last component relative to its open directory: not
    // followed if it became a symlink (the rule then lands on the symlink,
    // which grants nothing: Landlock checks the file a path resolves to).
    let flags = libc::O_PATH | libc::O_CLOEXEC | if real { libc::O_NOFOLLOW } else { 0 };
    // SAFETY: `buf` holds `name` and a NUL, and outlives the call; `at` is
    // AT_FDCWD or a descriptor the caller keeps open across the call.
    let fd = unsafe { libc::openat(at, buf.as_ptr().cast(), flags) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just returned by openat and is owned by no one else.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens the real (resolved) absolute `path` with `flags` following no
/// symlink on the way (`openat2` with `RESOLVE_NO_SYMLINKS`): one swapped
/// in since the path was resolved fails with `ELOOP`. Where `openat2` is
/// refused (`ENOSYS`: an older container seccomp profile), the last
/// component alone is not followed.
fn open_real(path: &Path, flags: nix::fcntl::OFlag) -> nix::Result<OwnedFd> {
    use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
    let how = OpenHow::new()
        .flags(flags)
        .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS);
    match nix::fcntl::openat2(nix::fcntl::AT_FDCWD, path, how) {
        Err(nix::errno::Errno::ENOSYS) => nix::fcntl::open(
            path,
            flags | OFlag::O_NOFOLLOW,
            nix::sys::stat::Mode::empty(),
        ),
        r => r,
    }
}

/// `landlock_add_rule(LANDLOCK_RULE_PATH_BENEATH)` of `fd` with `rights`
/// (already limited to what the kernel knows). A path that is no longer a
/// directory since planning (`EINVAL` for directory rights on a file) gets
/// the file rights only, as the crate would give it; nothing left to grant
/// is no rule.
fn add_path_rule(
    ruleset: &OwnedFd,
    fd: &OwnedFd,
    rights: BitFlags<AccessFs>,
) -> Result<(), SandboxError> {
    /// `struct landlock_path_beneath_attr` (packed in the kernel's UAPI).
    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }
    let mut rights = rights;
    loop {
        if rights.is_empty() {
            return Ok(());
        }
        let attr = PathBeneathAttr {
            allowed_access: rights.bits(),
            parent_fd: fd.as_raw_fd(),
        };
        // LANDLOCK_RULE_PATH_BENEATH = 1.
        // SAFETY: the attribute struct lives across the call and has the
        // kernel's layout; both descriptors are ours.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                1 as libc::c_int,
                &attr as *const PathBeneathAttr,
                0 as libc::c_uint,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        let file_rights = rights & AccessFs::from_file(LATEST);
        if e.raw_os_error() == Some(libc::EINVAL) && file_rights != rights {
            rights = file_rights;
            continue;
        }
        return Err(SandboxError::Io {
            what: "add a Landlock rule for",
            path: std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
                .unwrap_or_default(),
            source: e,
        });
    }
}

/// Creates the ruleset in the kernel and adds every rule. Best-effort
/// compatibility: rights the kernel does not know are dropped by the crate;
/// [`super::prepare`] has already refused (under `Required`) whatever that
/// would leave unenforced.
pub(crate) fn build(plan: &LandlockPlan) -> Result<RulesetCreated, SandboxError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(LATEST))?;
    if plan.handle_net {
        ruleset = ruleset.handle_access(AccessNet::from_all(LATEST))?;
    }
    if !plan.scope_flags.is_empty() {
        ruleset = ruleset.scope(plan.scope_flags)?;
    }
    let mut created = ruleset.create()?;
    // The rules go to the kernel directly (`landlock_add_rule` on a
    // duplicate of the ruleset's descriptor): the crate's `PathBeneath`
    // would `fstat` every rule's descriptor to tell files from
    // directories, which the plan already knows (from `readdir` or
    // `statx`). Rights the kernel does not know are dropped here as the
    // crate's best-effort mode drops them (the ruleset handles no more).
    let raw: Option<OwnedFd> = created.try_clone().ok().and_then(Option::from);
    let known = AccessFs::from_all(ABI::from(
        i32::try_from(super::kernel::landlock_abi()).unwrap_or(i32::MAX),
    ));
    // The carving's rules come directory by directory: each directory is
    // opened once and its entries relative to it, so a rule costs the same
    // short lookup however deep the directory is (a HOME 20 levels down).
    // A carved ancestor (a directory granted `ReadDir` alone, whose entries
    // get rules of their own) keeps the descriptor its own rule was added
    // with: it is the directory its entries are opened from, so no
    // directory on the way is looked up twice, nor from `/` again.
    // A directory the carving listed is not opened again: its listing's
    // descriptor is in the plan (`listed`).
    let mut dirs: Vec<(&Path, Option<libc::c_int>)> = Vec::new();
    // The descriptors opened here that `dirs` names, closed at the end.
    let mut keep: Vec<OwnedFd> = Vec::new();
    let mut listed = plan.listed.iter().peekable();
    let list_only: BitFlags<AccessFs> = AccessFs::ReadDir.into();
    // The rules of one directory come one after the other: the directory
    // of the previous rule is tried first.
    let mut last = 0;
    // The name being opened, NUL-terminated (one buffer for every rule).
    let mut cname = Vec::new();
    for (i, rule) in plan.rules.iter().enumerate() {
        let own = match listed.peek() {
            Some((j, fd)) if *j == i => {
                listed.next();
                Some(fd)
            }
            _ => None,
        };
        // An entry of a listed directory: opened relative to the listing.
        let in_listing = match (own, rule.entry_of) {
            (None, Some((dir, name_at))) => plan
                .listed
                .binary_search_by_key(&(dir as usize), |(j, _)| *j)
                .ok()
                .and_then(|k| plan.listed.get(k))
                .zip(key(&rule.path).get(name_at as usize..)),
            _ => None,
        };
        let opened = match (own, in_listing) {
            (Some(_), _) => None,
            (None, Some((dir, name))) => open_path(
                Some(dir.1.as_raw_fd()),
                std::ffi::OsStr::from_bytes(name),
                &mut cname,
                rule.real,
            ),
            (None, None) => match parent_and_name(&rule.path) {
                Some((parent, name)) => {
                    let at = match dirs.get(last) {
                        Some((p, _)) if key(p) == key(parent) => last,
                        _ => match dirs.iter().position(|(p, _)| key(p) == key(parent)) {
                            Some(i) => i,
                            None => {
                                let fd = open_path(None, parent.as_os_str(), &mut cname, rule.real);
                                dirs.push((parent, fd.as_ref().map(AsRawFd::as_raw_fd)));
                                keep.extend(fd);
                                dirs.len() - 1
                            }
                        },
                    };
                    last = at;
                    dirs[at]
                        .1
                        .and_then(|d| open_path(Some(d), name, &mut cname, rule.real))
                }
                None => open_path(None, rule.path.as_os_str(), &mut cname, rule.real),
            },
        };
        let Some(fd) = own.or(opened.as_ref()) else {
            continue; // vanished since planning
        };
        match &raw {
            Some(ruleset) => add_path_rule(ruleset, fd, rule.rights & known)?,
            None => {
                created = created.add_rule(PathBeneath::new(fd, rule.rights))?;
            }
        }
        if rule.is_dir
            && rule.rights == list_only
            && !dirs.iter().any(|(p, _)| key(p) == key(&rule.path))
        {
            dirs.push((&rule.path, Some(fd.as_raw_fd())));
            keep.extend(opened);
        }
    }
    for port in &plan.connect_ports {
        created = created.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_and_below_on_bytes_answer_as_path_methods_for_real_paths() {
        let names = ["a", "ab", "b", "a.b", ".a", "a-b", "é"];
        let mut paths = vec![PathBuf::from("/")];
        for x in names {
            paths.push(PathBuf::from("/").join(x));
            for y in names {
                paths.push(PathBuf::from("/").join(x).join(y));
                for z in ["a", "ab"] {
                    paths.push(PathBuf::from("/").join(x).join(y).join(z));
                }
            }
        }
        for p in &paths {
            for d in &paths {
                assert_eq!(inside(p, d), p.starts_with(d), "{p:?} in {d:?}");
                let want = p
                    .strip_prefix(d)
                    .ok()
                    .map(|r| r.as_os_str().as_bytes().to_vec());
                assert_eq!(below(p, d).map(<[u8]>::to_vec), want, "{p:?} below {d:?}");
            }
        }
    }

    /// Spellings of paths: plain ones and every kind the byte shortcuts
    /// must hand back to the component methods.
    fn spellings() -> Vec<PathBuf> {
        let names = ["a", "bc", ".", "..", "", ".a", "é", "a.b"];
        let mut out = vec![PathBuf::from("/"), PathBuf::from("//"), PathBuf::new()];
        for x in names {
            out.push(PathBuf::from(format!("/{x}")));
            out.push(PathBuf::from(x));
            out.push(PathBuf::from(format!("/{x}/")));
            for y in names {
                out.push(PathBuf::from(format!("/{x}/{y}")));
                out.push(PathBuf::from(format!("/{x}//{y}")));
                out.push(PathBuf::from(format!("{x}/{y}")));
                for z in ["a", ".", "..", ""] {
                    out.push(PathBuf::from(format!("/{x}/{y}/{z}")));
                }
            }
        }
        out
    }

    #[test]
    fn prefixes_sliced_from_the_bytes_are_the_collected_components() {
        let mut sliced = 0;
        for p in spellings() {
            let comps: Vec<std::path::Component<'_>> = p.components().collect();
            let Some(ends) = prefix_ends(&p, comps.len()) else {
                continue;
            };
            sliced += 1;
            for k in 1..=comps.len() {
                let want: PathBuf = comps[..k].iter().collect();
                let got = &p.as_os_str().as_bytes()[..ends[k - 1]];
                assert_eq!(got, want.as_os_str().as_bytes(), "{p:?} prefix {k}");
            }
        }
        // Both ways are taken (`/a/b` sliced, `/a//b` not).
        assert!(sliced > 100, "{sliced}");
        assert!(prefix_ends(Path::new("/a//b"), 3).is_none());
        assert!(prefix_ends(Path::new("/a/./b"), 3).is_none());
        assert!(prefix_ends(Path::new("/a/b/"), 3).is_none());
        assert!(prefix_ends(Path::new("a/b"), 2).is_none());
    }

    #[test]
    fn parent_and_name_on_bytes_answer_as_path_methods() {
        for p in spellings() {
            assert_eq!(parent_and_name(&p), p.parent().zip(p.file_name()), "{p:?}");
            // The parent is the same bytes, not only an equal `Path`: it is
            // the key of the directories opened by `build`.
            if let (Some((got, _)), Some(want)) = (parent_and_name(&p), p.parent()) {
                assert_eq!(got.as_os_str(), want.as_os_str(), "{p:?}");
            }
        }
    }

    #[test]
    fn join_name_is_join() {
        for root in ["/", "/a", "/a/bc", "/a/"] {
            for name in ["x", ".x", "é", "a b"] {
                let root = Path::new(root);
                let name = std::ffi::OsStr::new(name);
                assert_eq!(
                    key(&join_name(root, name)),
                    key(&root.join(name)),
                    "{root:?} {name:?}"
                );
            }
        }
    }

    use crate::sandbox::{Enforcement, Limits};

    fn spec(read: Vec<PathBuf>, write: Vec<PathBuf>, deny: Vec<PathBuf>) -> SandboxSpec {
        SandboxSpec {
            read,
            write,
            deny_read: deny,
            network: NetworkAccess::Off,
            unix_sockets: false,
            sysv_ipc: false,
            capabilities: vec![],
            devices: vec![],
            pty_broker: true,
            job_control: false,
            limits: Limits::default(),
            enforcement: Enforcement::Required,
            timeout: None,
        }
    }

    #[test]
    fn carving_grants_siblings_not_the_secret() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(t.path()).expect("canon");
        let home = root.join("home");
        fs::create_dir_all(home.join(".ssh")).expect("mkdir");
        fs::create_dir_all(home.join("proj")).expect("mkdir");
        fs::write(home.join(".bashrc"), "x").expect("write");
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).expect("symlink");
        let p = plan(&spec(vec![root.clone()], vec![], vec![home.join(".ssh")])).expect("plan");
        let paths: Vec<&Path> = p.rules.iter().map(|r| r.path.as_path()).collect();
        assert!(!paths.contains(&home.join(".ssh").as_path()));
        assert!(
            !paths.contains(&home.join("keys").as_path()),
            "symlink to secret"
        );
        assert!(paths.contains(&home.join(".bashrc").as_path()));
        assert!(paths.contains(&home.join("proj").as_path()));
        let home_rule = p.rules.iter().find(|r| r.path == home).expect("home rule");
        assert_eq!(names(home_rule.rights), vec!["read_dir".to_string()]);
        let file_rule = p
            .rules
            .iter()
            .find(|r| r.path == home.join(".bashrc"))
            .expect("file rule");
        assert!(!names(file_rule.rights).contains(&"read_dir".to_string()));
        // Each entry of a listed directory names that directory's own rule
        // (a listed one) and its own name, which `build` opens it by.
        let mut entries = 0;
        for r in &p.rules {
            let Some((dir, name_at)) = r.entry_of else {
                continue;
            };
            entries += 1;
            let dir = dir as usize;
            assert!(p.listed.iter().any(|(j, _)| *j == dir), "{r:?}");
            assert_eq!(Some(p.rules[dir].path.as_path()), r.path.parent(), "{r:?}");
            assert_eq!(
                Some(std::ffi::OsStr::from_bytes(
                    &key(&r.path)[name_at as usize..]
                )),
                r.path.file_name(),
                "{r:?}"
            );
        }
        assert_eq!(entries, 2, "proj and .bashrc");
        assert!(file_rule.entry_of.is_some());
    }

    #[test]
    fn carving_tells_entries_apart_by_their_whole_name() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(t.path()).expect("canon");
        let home = root.join("home");
        for d in [
            ".ssh",
            ".ssh2",
            ".ss",
            ".config/gh",
            ".config/ghx",
            ".config/git",
            "proj",
        ] {
            fs::create_dir_all(home.join(d)).expect("mkdir");
        }
        for f in [
            ".netrc",
            ".netrc.bak",
            ".config/gh.toml",
            ".config/git/credentials",
            ".config/git/config",
        ] {
            fs::write(home.join(f), "x").expect("write");
        }
        let denied =
            [".ssh", ".netrc", ".config/gh", ".config/git/credentials"].map(|d| home.join(d));
        let p = plan(&spec(vec![home.clone()], vec![], denied.to_vec())).expect("plan");
        let mut got: Vec<(String, Vec<String>)> = p
            .rules
            .iter()
            .filter(|r| r.path.starts_with(&home))
            .map(|r| {
                let rel = r.path.strip_prefix(&home).expect("below home");
                (rel.display().to_string(), names(r.rights))
            })
            .collect();
        got.sort();
        let dir = names(read_access());
        let file = names(read_access() & AccessFs::from_file(LATEST));
        let list = vec!["read_dir".to_string()];
        let mut want: Vec<(String, Vec<String>)> = vec![
            (String::new(), list.clone()),
            (".ss".into(), dir.clone()),
            (".ssh2".into(), dir.clone()),
            ("proj".into(), dir.clone()),
            (".netrc.bak".into(), file.clone()),
            (".config".into(), list.clone()),
            (".config/ghx".into(), dir.clone()),
            (".config/gh.toml".into(), file.clone()),
            (".config/git".into(), list.clone()),
            (".config/git/config".into(), file.clone()),
        ];
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn carving_lists_a_directory_larger_than_one_read() {
        // More entries than one `getdents64` into the listing buffer
        // returns (names of 60 bytes: ~80 bytes a record, 1,500 records),
        // files, directories and a symlink: every one is seen.
        let t = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(t.path()).expect("canon");
        let home = root.join("home");
        fs::create_dir_all(home.join(".ssh")).expect("mkdir");
        let mut want = Vec::new();
        for i in 0..1500 {
            let name = format!("{i:0>60}");
            if i % 2 == 0 {
                fs::create_dir(home.join(&name)).expect("mkdir");
            } else {
                fs::write(home.join(&name), "x").expect("write");
            }
            want.push((home.join(&name), i % 2 == 0));
        }
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).expect("symlink");
        let p = plan(&spec(vec![root.clone()], vec![], vec![home.join(".ssh")])).expect("plan");
        let mut got: Vec<(PathBuf, bool)> = p
            .rules
            .iter()
            .filter(|r| r.path.parent() == Some(home.as_path()))
            .map(|r| (r.path.clone(), r.is_dir))
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        const { assert!(LISTING_BUF < 1500 * 80) };
    }

    #[test]
    fn canonical_matches_the_kernel() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path();
        let home = root.join("home");
        fs::create_dir_all(home.join(".ssh")).expect("mkdir");
        fs::create_dir_all(home.join(".config/gh")).expect("mkdir");
        fs::create_dir_all(root.join("elsewhere/keys")).expect("mkdir");
        fs::write(home.join(".netrc"), "x").expect("write");
        fs::write(home.join("file"), "x").expect("write");
        let link = |target: &Path, at: &Path| std::os::unix::fs::symlink(target, at).expect("ln");
        link(&root.join("elsewhere/keys"), &home.join(".aws"));
        link(&home.join(".netrc"), &home.join(".npmrc"));
        link(&root.join("nowhere"), &home.join(".kube"));
        link(Path::new("../elsewhere"), &home.join("rel"));
        link(&home, &root.join("homelink"));
        let mut cases: Vec<PathBuf> = Vec::new();
        for base in [home.clone(), root.join("homelink"), root.join("home/./")] {
            for name in [
                ".ssh",
                ".netrc",
                ".aws",
                ".npmrc",
                ".kube",
                ".missing",
                ".config/gh",
                ".config/gcloud",
                ".docker/config.json",
                "file/x",
                "rel",
                "rel/keys",
                ".config/gh/hosts.yml",
                ".docker/x/y",
                "file/x/y",
                "rel/keys/z",
                ".aws/z",
                ".ssh/",
                ".ssh/.",
                "file/",
                "file/.",
                ".ssh/..",
                "..",
                ".",
                "",
            ] {
                cases.push(base.join(name));
            }
        }
        cases.extend(["/", "/usr", "/usr/", "relative", "/proc/self"].map(PathBuf::from));
        // Twice, so that the second answer comes from the memo.
        let mut c = Canon::default();
        for _ in 0..2 {
            for p in &cases {
                assert_eq!(c.get(p), canonical(p), "{}", p.display());
            }
        }
        // The cases do cover both answers.
        assert_eq!(
            c.get(&home.join(".aws")),
            Some(fs::canonicalize(root.join("elsewhere/keys")).expect("canon"))
        );
        assert_eq!(c.get(&home.join(".kube")), None);
        assert_eq!(c.get(&home.join("file/x")), None);
        assert_eq!(
            c.get(&home.join(".ssh")),
            Some(fs::canonicalize(&home).expect("canon").join(".ssh"))
        );
    }

    /// The rules below `root`, relative to it, with their rights' names.
    fn rel_rules(p: &LandlockPlan, root: &Path) -> Vec<(String, Vec<String>)> {
        let mut got: Vec<(String, Vec<String>)> = p
            .rules
            .iter()
            .filter(|r| r.path.starts_with(root))
            .map(|r| {
                let rel = r.path.strip_prefix(root).expect("below root");
                (rel.display().to_string(), names(r.rights))
            })
            .collect();
        got.sort();
        got
    }

    #[test]
    fn missing_deny_paths_carve_their_deepest_existing_directory() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(t.path()).expect("canon");
        let home = root.join("home");
        for d in [
            ".cargo/registry",
            ".config/nvim",
            ".local",
            "proj",
            "data/other",
            "aws-real",
        ] {
            fs::create_dir_all(home.join(d)).expect("mkdir");
        }
        fs::write(home.join(".cargo/env"), "x").expect("write");
        fs::write(home.join(".docker"), "a file").expect("write");
        let link = |target: &Path, at: &Path| std::os::unix::fs::symlink(target, at).expect("ln");
        // A dangling link whose target's directory exists, and a link to
        // an existing directory that lacks the secret.
        link(&home.join("data/kube"), &home.join(".kube"));
        link(Path::new("aws-real"), &home.join(".aws"));
        let denied = [
            ".cargo/credentials.toml",
            ".config/gh",
            ".local/share/keyrings",
            ".kube/config",
            ".aws/credentials",
            ".docker/config.json",
            "nothing/at/all",
        ]
        .map(|d| home.join(d));
        let p = plan(&spec(vec![home.clone()], vec![], denied.to_vec())).expect("plan");
        let dir = names(read_access());
        let file = names(read_access() & AccessFs::from_file(LATEST));
        let list = vec!["read_dir".to_string()];
        let mut want: Vec<(String, Vec<String>)> = vec![
            (String::new(), list.clone()),
            (".cargo".into(), list.clone()),
            (".cargo/registry".into(), dir.clone()),
            (".cargo/env".into(), file.clone()),
            (".config".into(), list.clone()),
            (".config/nvim".into(), dir.clone()),
            (".local".into(), list.clone()),
            ("proj".into(), dir.clone()),
            ("data".into(), list.clone()),
            ("data/other".into(), dir.clone()),
            ("aws-real".into(), list.clone()),
            (".docker".into(), file.clone()),
        ];
        want.sort();
        assert_eq!(rel_rules(&p, &home), want);
        let states: Vec<(&str, Option<PathBuf>)> = p
            .deny_read
            .iter()
            .map(|d| (d.state, d.carved.clone()))
            .collect();
        assert_eq!(
            states,
            vec![
                ("absent", Some(home.join(".cargo"))),
                ("absent", Some(home.join(".config"))),
                ("absent", Some(home.join(".local"))),
                ("absent", Some(home.join("data"))),
                ("absent", Some(home.join("aws-real"))),
                ("absent", Some(home.clone())),
                ("absent", Some(home.clone())),
            ]
        );
        assert_eq!(p.deny_read[3].real, Some(home.join("data/kube/config")));
        assert_eq!(p.deny_read[5].real, Some(home.join(".docker/config.json")));
    }

    #[test]
    fn sockets_in_the_temporary_directory_are_not_reachable_without_unix_sockets() {
        let tmp = Path::new("/tmp");
        let proj = Path::new("/home/u/proj");
        let resolve = |r: BitFlags<AccessFs>| r.contains(AccessFs::ResolveUnix);
        // The temporary root: the user's tmux, ssh-agent and X11 sockets.
        assert!(!resolve(write_rights(tmp, Some(tmp), false)));
        // Everything else a writable root gets is kept there.
        assert_eq!(
            write_rights(tmp, Some(tmp), false) | AccessFs::ResolveUnix,
            write_access()
        );
        // Controls: the project's own sockets; a profile allowing Unix
        // sockets; a root inside the temporary directory is not the
        // directory itself.
        assert!(resolve(write_rights(proj, Some(tmp), false)));
        assert!(resolve(write_rights(tmp, Some(tmp), true)));
        assert!(resolve(write_rights(
            Path::new("/tmp/proj"),
            Some(tmp),
            false
        )));
        assert!(resolve(write_rights(proj, None, false)));
    }

    #[test]
    fn missing_deny_paths_in_a_writable_root_are_reported_not_carved() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(t.path()).expect("canon");
        let work = root.join("work");
        fs::create_dir_all(work.join("sub")).expect("mkdir");
        fs::create_dir_all(work.join("keys")).expect("mkdir");
        fs::write(work.join("keys/k"), "x").expect("write");
        let denied = [
            work.join(".env"),
            work.join("sub/secret"),
            work.join("keys"),
        ];
        let p = plan(&spec(vec![], vec![work.clone()], denied.to_vec())).expect("plan");
        // The existing one carves the root as before; the missing ones do
        // not carve `sub` (nor would they carve the root).
        let w = names(write_access());
        let list = vec!["read_dir".to_string()];
        assert_eq!(
            rel_rules(&p, &work),
            vec![(String::new(), list), ("sub".into(), w)]
        );
        let states: Vec<(&str, Option<&Path>)> = p
            .deny_read
            .iter()
            .map(|d| (d.state, d.writable_root.as_deref()))
            .collect();
        assert_eq!(
            states,
            vec![
                ("unguarded", Some(work.as_path())),
                ("unguarded", Some(work.as_path())),
                ("denied", None),
            ]
        );
    }

    #[test]
    fn deny_point_follows_links_and_stops_at_what_cannot_resolve() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(t.path()).expect("canon");
        fs::create_dir_all(root.join("a/b")).expect("mkdir");
        let link = |target: &Path, at: &Path| std::os::unix::fs::symlink(target, at).expect("ln");
        link(Path::new("../a/b/x"), &root.join("a/rel"));
        link(&root.join("loop2"), &root.join("loop1"));
        link(&root.join("loop1"), &root.join("loop2"));
        let mut c = Canon::default();
        let mut at = |p: &Path| deny_point(&mut c, p);
        assert_eq!(
            at(&root.join("a/rel/y")),
            Some((root.join("a/b/x/y"), root.join("a/b")))
        );
        assert_eq!(
            at(&root.join("a/missing/../b/z")),
            Some((root.join("a/missing"), root.join("a")))
        );
        assert_eq!(
            at(&root.join("a/./b/../c")),
            Some((root.join("a/c"), root.join("a")))
        );
        assert_eq!(at(&root.join("loop1/x")), None);
        assert_eq!(at(Path::new("relative/x")), None);
    }

    #[test]
    fn missing_write_root_is_an_error_missing_read_root_is_skipped() {
        let t = tempfile::tempdir().expect("tempdir");
        let gone = t.path().join("gone");
        assert!(matches!(
            plan(&spec(vec![], vec![gone.clone()], vec![])),
            Err(SandboxError::WriteRootMissing(_))
        ));
        let p = plan(&spec(vec![gone.clone()], vec![], vec![])).expect("plan");
        assert!(p.rules.iter().all(|r| r.path != gone));
    }

    #[test]
    fn root_inside_denied_path_gets_nothing() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(t.path()).expect("canon");
        let inner = root.join("secret/inner");
        fs::create_dir_all(&inner).expect("mkdir");
        let p = plan(&spec(
            vec![inner.clone()],
            vec![],
            vec![root.join("secret")],
        ))
        .expect("plan");
        assert!(p.rules.iter().all(|r| !r.path.starts_with(&root)));
    }

    /// Opens each of `probes` for reading in a child restricted by
    /// `ruleset`: 0 or the errno, per path.
    fn reads_under(ruleset: &RulesetCreated, probes: &[PathBuf]) -> Vec<i32> {
        opens_under(ruleset, probes, libc::O_RDONLY)
    }

    /// Ends a forked child without running the parent's exit handlers.
    fn child_exit(code: i32) -> ! {
        // SAFETY: `_exit` ends the calling process at once; nothing of the
        // parent's (atexit handlers, buffers) runs in the child.
        unsafe { libc::_exit(code) }
    }

    /// Opens each of `probes` with `flags` (and `O_CLOEXEC`) in a child
    /// restricted by `ruleset`: 0 or the errno, per path.
    fn opens_under(ruleset: &RulesetCreated, probes: &[PathBuf], flags: libc::c_int) -> Vec<i32> {
        let fd: OwnedFd = ruleset
            .try_clone()
            .ok()
            .and_then(Option::from)
            .expect("ruleset descriptor");
        let names: Vec<std::ffi::CString> = probes
            .iter()
            .map(|p| std::ffi::CString::new(p.as_os_str().as_bytes()).expect("cstring"))
            .collect();
        let (rx, tx) = nix::unistd::pipe().expect("pipe");
        // SAFETY: the child only makes system calls (prctl, the Landlock
        // restriction, open, close, write) on memory prepared before the
        // fork, and leaves with `_exit`.
        match unsafe { nix::unistd::fork() }.expect("fork") {
            nix::unistd::ForkResult::Child => {
                if nix::sys::prctl::set_no_new_privs().is_err() {
                    child_exit(3);
                }
                // SAFETY: the raw Landlock syscall (no wrapper) on a
                // descriptor this process owns.
                if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) }
                    != 0
                {
                    child_exit(2);
                }
                let flags =
                    nix::fcntl::OFlag::from_bits_retain(flags) | nix::fcntl::OFlag::O_CLOEXEC;
                for n in &names {
                    let e = match nix::fcntl::open(
                        n.as_c_str(),
                        flags,
                        nix::sys::stat::Mode::empty(),
                    ) {
                        Ok(f) => {
                            drop(f);
                            0
                        }
                        Err(e) => e as i32,
                    };
                    let _ = nix::unistd::write(&tx, &e.to_ne_bytes());
                }
                child_exit(0)
            }
            nix::unistd::ForkResult::Parent { child } => {
                drop(tx);
                let mut out = Vec::new();
                let mut f = fs::File::from(rx);
                let mut all = Vec::new();
                std::io::Read::read_to_end(&mut f, &mut all).expect("read");
                let st = nix::sys::wait::waitpid(child, None).expect("wait");
                assert_eq!(st, nix::sys::wait::WaitStatus::Exited(child, 0));
                for c in all.chunks(4) {
                    out.push(i32::from_ne_bytes(c.try_into().expect("4 bytes")));
                }
                out
            }
        }
    }

    #[test]
    fn listing_descriptors_kept_are_bounded_and_the_rest_opened_by_path() {
        if crate::sandbox::kernel::landlock_abi() == 0 {
            eprintln!("skipped: no Landlock on this kernel");
            return;
        }
        let t = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(t.path()).expect("canon");
        let mut denied = Vec::new();
        for k in 0..MAX_KEPT + 6 {
            let d = root.join(format!("d{k}"));
            fs::create_dir(&d).expect("mkdir");
            fs::write(d.join("secret"), "x").expect("write");
            fs::write(d.join("open"), "x").expect("write");
            denied.push(d.join("secret"));
        }
        let p = plan(&spec(vec![root.clone()], vec![], denied)).expect("plan");
        // The root and every `dK` were listed; only MAX_KEPT are kept.
        assert_eq!(p.listed.len(), MAX_KEPT);
        let last = root.join(format!("d{}", MAX_KEPT + 5));
        let probes = vec![
            root.join("d0/secret"),
            root.join("d0/open"),
            last.join("secret"),
            last.join("open"),
        ];
        let e = libc::EACCES;
        assert_eq!(
            reads_under(&build(&p).expect("build"), &probes),
            vec![e, 0, e, 0]
        );
    }

    #[test]
    fn build_with_the_listings_descriptors_grants_what_opening_by_path_grants() {
        if crate::sandbox::kernel::landlock_abi() == 0 {
            eprintln!("skipped: no Landlock on this kernel");
            return;
        }
        let t = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(t.path()).expect("canon");
        let home = root.join("home");
        for d in [".ssh", ".config/gh", ".config/other", "proj/sub"] {
            fs::create_dir_all(home.join(d)).expect("mkdir");
        }
        for f in [
            ".ssh/id",
            ".config/gh/hosts",
            ".config/other/x",
            ".bashrc",
            "proj/sub/y",
        ] {
            fs::write(home.join(f), "x").expect("write");
        }
        std::os::unix::fs::symlink(home.join(".ssh/id"), home.join("key")).expect("symlink");
        let denied = vec![home.join(".ssh"), home.join(".config/gh")];
        let p = plan(&spec(vec![root.clone()], vec![], denied)).expect("plan");
        // The carved ancestors (root, home, .config) were listed, and each
        // listing's descriptor is the very directory of the rule it is
        // paired with, a `read_dir` rule.
        assert_eq!(p.listed.len(), 3, "{:?}", p.listed);
        for (i, fd) in p.listed.iter() {
            let rule = &p.rules[*i];
            assert!(
                rule.is_dir && names(rule.rights) == ["read_dir"],
                "{rule:?}"
            );
            let by_fd = nix::sys::stat::fstat(fd).expect("fstat");
            let by_path = nix::sys::stat::stat(&rule.path).expect("stat");
            assert_eq!(
                (by_fd.st_dev, by_fd.st_ino),
                (by_path.st_dev, by_path.st_ino),
                "{}",
                rule.path.display()
            );
        }
        // The same plan built the old way: every directory opened by path.
        let mut by_path = p.clone();
        by_path.listed = std::sync::Arc::new(Vec::new());
        let probes: Vec<PathBuf> = [
            ".ssh/id",
            "key",
            ".config/gh/hosts",
            ".config/other/x",
            ".bashrc",
            "proj/sub/y",
        ]
        .iter()
        .map(|f| home.join(f))
        .collect();
        let fast = reads_under(&build(&p).expect("build"), &probes);
        let slow = reads_under(&build(&by_path).expect("build"), &probes);
        assert_eq!(fast, slow);
        // Exact outcomes: the secrets (also through a symlink) refused,
        // their siblings read (the positive control).
        let e = libc::EACCES;
        assert_eq!(fast, vec![e, e, e, 0, 0, 0]);
        // And outside the sandbox every probe reads.
        for f in &probes {
            fs::read(f).expect("readable outside the sandbox");
        }
    }

    /// A regular file of a carved directory swapped for a symlink between
    /// `plan` and `build` (by another process writing there): the rule must
    /// not reach the symlink's target. Read and write roots, a file and a
    /// directory entry, several targets; controls beside each.
    #[test]
    fn an_entry_swapped_for_a_symlink_after_planning_grants_nothing_through_it() {
        if crate::sandbox::kernel::landlock_abi() == 0 {
            // As this module's other kernel tests; the integration suite
            // (tests/sandbox) fails instead where Landlock is missing.
            eprintln!("skipped: no Landlock on this kernel");
            return;
        }
        let t = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(t.path()).expect("canon");
        // Read root: `notes` becomes a symlink to the denied secret.
        let home = root.join("home");
        fs::create_dir_all(home.join("vault")).expect("mkdir");
        fs::write(home.join("vault/key"), "CANARY").expect("w");
        fs::write(home.join("notes"), "x").expect("w");
        fs::write(home.join("other"), "y").expect("w");
        // Write root: `notes` to a file outside every root, `sub` (a
        // directory) to a directory outside.
        let proj = root.join("proj");
        fs::create_dir_all(proj.join("vault")).expect("mkdir");
        fs::create_dir_all(proj.join("sub")).expect("mkdir");
        fs::write(proj.join("vault/key"), "CANARY").expect("w");
        fs::write(proj.join("notes"), "x").expect("w");
        fs::write(proj.join("other"), "y").expect("w");
        let outside = root.join("outside");
        fs::create_dir_all(&outside).expect("mkdir");
        fs::write(outside.join("bashrc"), "orig").expect("w");
        let p = plan(&spec(
            vec![home.clone()],
            vec![proj.clone()],
            vec![home.join("vault"), proj.join("vault")],
        ))
        .expect("plan");
        let swap = |at: &Path, to: &Path| {
            if at.is_dir() {
                fs::remove_dir(at).expect("rmdir");
            } else {
                fs::remove_file(at).expect("rm");
            }
            std::os::unix::fs::symlink(to, at).expect("ln");
        };
        swap(&home.join("notes"), &home.join("vault/key"));
        swap(&proj.join("notes"), &outside.join("bashrc"));
        swap(&proj.join("sub"), &outside);
        let rs = build(&p).expect("build");
        assert_eq!(
            reads_under(
                &rs,
                &[
                    home.join("vault/key"),
                    home.join("notes"),
                    home.join("other"),
                ]
            ),
            vec![libc::EACCES, libc::EACCES, 0],
            "the secret stays denied, through the swapped entry too; the sibling reads"
        );
        assert_eq!(
            opens_under(
                &rs,
                &[
                    outside.join("bashrc"),
                    proj.join("notes"),
                    proj.join("sub/bashrc"),
                    proj.join("other"),
                ],
                libc::O_WRONLY | libc::O_APPEND
            ),
            vec![libc::EACCES, libc::EACCES, libc::EACCES, 0],
            "nothing outside the roots is writable through the swapped entries; the sibling is"
        );
        assert_eq!(
            fs::read_to_string(outside.join("bashrc")).expect("r"),
            "orig"
        );
    }

    /// A carved directory on the way to a secret swapped for a symlink
    /// before it is listed: it gets no rule and nothing of its target's is
    /// granted through it.
    #[test]
    fn a_carved_directory_that_is_a_symlink_when_listed_is_not_followed() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(t.path()).expect("canon");
        fs::create_dir_all(root.join("a/b")).expect("mkdir");
        fs::create_dir_all(root.join("elsewhere")).expect("mkdir");
        fs::write(root.join("elsewhere/file"), "x").expect("w");
        let mut buf = Vec::new();
        let mut names = Vec::new();
        // Control: the real directory lists.
        let (dir, _) = Listing::read(None, &root, &mut buf, &mut names).expect("root lists");
        assert!(Listing::read(Some(dir.fd()), &root.join("a"), &mut buf, &mut names).is_ok());
        fs::rename(root.join("a"), root.join("a.old")).expect("mv");
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join("a")).expect("ln");
        // `ENOTDIR` (O_DIRECTORY on the symlink itself) or `ELOOP`.
        let e = Listing::read(Some(dir.fd()), &root.join("a"), &mut buf, &mut names)
            .err()
            .and_then(|e| e.raw_os_error());
        assert!(matches!(e, Some(libc::ELOOP | libc::ENOTDIR)), "{e:?}");
        let e = Listing::read(None, &root.join("a"), &mut buf, &mut names)
            .err()
            .and_then(|e| e.raw_os_error());
        assert!(
            matches!(e, Some(libc::ELOOP | libc::ENOTDIR)),
            "by path: no symlink followed: {e:?}"
        );
        // Nor one on the way: `a/b` through the symlink `a`.
        let e = Listing::read(None, &root.join("a/b"), &mut buf, &mut names)
            .err()
            .and_then(|e| e.raw_os_error());
        fs::create_dir_all(root.join("elsewhere/b")).expect("mkdir");
        let e2 = Listing::read(None, &root.join("a/b"), &mut buf, &mut names)
            .err()
            .and_then(|e| e.raw_os_error());
        // Whether or not the target holds a `b`.
        assert_eq!((e, e2), (Some(libc::ELOOP), Some(libc::ELOOP)));
        // The carving then grants nothing under `a` nor in `elsewhere`.
        let denied = [root.join("a/b/secret")];
        let mut c = Carver {
            denied: &denied,
            targets: &[],
            unlisted: Vec::new(),
            buf: Vec::new(),
            listed: Vec::new(),
        };
        let mut out = Vec::new();
        c.carve(&root.join("a"), Some(dir.fd()), read_access(), &mut out)
            .expect("carve");
        assert!(out.is_empty(), "{out:?}");
    }
}
