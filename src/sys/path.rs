//! Path helpers: the lexical join the parser uses for `cd DIR`, and
//! resolution against the real filesystem (the longest existing prefix, as
//! the kernel would) that the policy, the profile's placeholders and the
//! sandbox's Landlock plan share.

use std::collections::HashMap;
use std::ffi::OsString;
use std::hash::{BuildHasherDefault, Hasher};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Joins `rel` onto `base` and removes `.` and `..` lexically (symlinks are
/// resolved later, by the path check, against the real filesystem).
pub fn join_clean(base: &Path, rel: &str) -> PathBuf {
    join_with(base, rel, false)
}

/// [`join_clean`] as the kernel reads a path (a redirection's target, the
/// directory of `env -C` or `git -C`): a `..` after a component that is a
/// symbolic link goes up from where the link leads, not from the link's
/// own directory (`a/s/../.envrc` with `a/s -> ../src` is the root's
/// `.envrc`: review 11, F1). Only a `..` asks the filesystem (one `lstat`
/// of what it would drop); a path without one is [`join_clean`]'s. `cd`
/// is logical in the shell and keeps [`join_clean`].
pub fn join_physical(base: &Path, rel: &str) -> PathBuf {
    join_with(base, rel, rel.split('/').any(|c| c == ".."))
}

/// [`join_clean`], and with `physical` [`join_physical`].
fn join_with(base: &Path, rel: &str, physical: bool) -> PathBuf {
    let joined = if rel.starts_with('/') {
        PathBuf::from(rel)
    } else {
        base.join(rel)
    };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            std::path::Component::ParentDir => {
                if physical
                    && out
                        .symlink_metadata()
                        .is_ok_and(|m| m.file_type().is_symlink())
                    && let Ok(real) = canonicalize(&out)
                {
                    out = real;
                }
                if physical && magic_split(&out).is_some() {
                    out.push("..");
                } else {
                    out.pop();
                }
            }
            std::path::Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// Resolves `p` (relative to `cwd`) to an absolute path with symlinks of the
/// longest existing prefix resolved.
pub fn resolve(cwd: &Path, p: &str) -> PathBuf {
    match lexical_join(cwd, p) {
        Some(lexical) => real_prefix_clean(&lexical),
        // `..` after a symlink goes up from where the link leads, not from
        // the link's own directory (`/proc/self/cwd/../x`): resolve such
        // paths one component at a time, as the kernel does.
        None => walk(&if p.starts_with('/') {
            PathBuf::from(p)
        } else {
            cwd.join(p)
        }),
    }
}

/// [`join_clean`]`(cwd, p)` when `cwd.join(p)` (or `p` alone, absolute)
/// has no `..` component, else `None`: on the bytes, without the component
/// iterator. On Unix the normal components of a path are its `/`-separated
/// pieces other than empty and `.`, and every `..` piece is a parent
/// component (unit test below).
fn lexical_join(cwd: &Path, p: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let base: &[u8] = if p.starts_with('/') {
        b""
    } else {
        cwd.as_os_str().as_bytes()
    };
    let pieces = || {
        base.split(|b| *b == b'/')
            .chain(p.as_bytes().split(|b| *b == b'/'))
            .filter(|c| !c.is_empty() && *c != b".")
    };
    if pieces().any(|c| c == b"..") {
        return None;
    }
    let mut out = Vec::with_capacity(base.len() + p.len() + 2);
    for c in pieces() {
        out.push(b'/');
        out.extend_from_slice(c);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    Some(PathBuf::from(OsString::from_vec(out)))
}

/// Kernel-style resolution: symlinks are followed as they are met, `..`
/// applies to the real directory so far; the rest of a missing path is kept.
fn walk(p: &Path) -> PathBuf {
    let mut cur = PathBuf::from("/");
    let mut missing = false;
    for c in p.components() {
        match c {
            std::path::Component::ParentDir if missing && magic_split(&cur).is_some() => {
                cur.push("..");
            }
            std::path::Component::ParentDir => {
                cur.pop();
            }
            std::path::Component::Normal(n) => {
                cur.push(n);
                if !missing {
                    match cur.symlink_metadata() {
                        Ok(m) if m.file_type().is_symlink() => {
                            if let Ok(real) = canonicalize(&cur) {
                                cur = real;
                            }
                            // Past a magic link the rest is the command's to
                            // resolve, `..` included (see `magic_split`).
                            if magic_split(&cur).is_some() {
                                missing = true;
                            }
                        }
                        Ok(_) => {}
                        Err(_) => missing = true,
                    }
                }
            }
            _ => {}
        }
    }
    cur
}

/// The kernel's magic links in `/proc`: a process's `cwd`, `root` and
/// `exe`, and the entries of its `fd/`, `map_files/` and `ns/` (and the
/// same under `task/TID/`). What they lead to depends on the process that
/// follows them.
///
/// When `p` goes through one (`/proc/PID/cwd/x/../y`), the link's path
/// (`/proc/PID/cwd`, with `PID` a number, `self` or `thread-self`, or
/// `/proc/PID/task/TID/cwd`) and what follows it, as written.
pub fn magic_split(p: &Path) -> Option<(PathBuf, PathBuf)> {
    let mut c = p.components();
    if c.next() != Some(std::path::Component::RootDir) {
        return None;
    }
    let mut link = PathBuf::from("/");
    let mut take = |c: &mut std::path::Components<'_>| {
        let n = c.next()?.as_os_str().to_str()?.to_string();
        link.push(&n);
        Some(n)
    };
    let number = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    if take(&mut c)? != "proc" {
        return None;
    }
    let pid = take(&mut c)?;
    if !(number(&pid) || pid == "self" || pid == "thread-self") {
        return None;
    }
    let mut name = take(&mut c)?;
    if name == "task" {
        if !number(&take(&mut c)?) {
            return None;
        }
        name = take(&mut c)?;
    }
    match name.as_str() {
        "cwd" | "root" | "exe" => {}
        "fd" | "map_files" | "ns" => {
            take(&mut c)?;
        }
        _ => return None,
    }
    Some((link, c.as_path().to_path_buf()))
}

/// `p` with the symbolic links before its first magic link followed by
/// their text (at most 40), that link left as it is and the rest of `p`
/// appended as written; `p` as written when it meets none.
fn through_to_magic(p: &Path) -> PathBuf {
    match by_link_text(p) {
        (out, true) => out,
        (_, false) => p.to_path_buf(),
    }
}

/// Where `p` (absolute) leads when each symbolic link met is followed by
/// its text (at most 40), a dangling one too, and a `..` goes up from where
/// the path so far leads: what the kernel will resolve once the missing
/// parts exist (`hl -> tools/hooks` before `tools/hooks` is made leads to
/// `tools/hooks`). A magic link of `/proc` ([`magic_split`]) is not
/// followed: the path is given up to it with the rest as written, and
/// `true`.
pub fn by_link_text(p: &Path) -> (PathBuf, bool) {
    let mut queue: std::collections::VecDeque<OsString> =
        p.iter().skip(1).map(OsString::from).collect();
    let mut cur = PathBuf::from("/");
    let mut links = 0;
    while let Some(c) = queue.pop_front() {
        if c == ".." {
            cur.pop();
            continue;
        }
        if c == "." {
            continue;
        }
        cur.push(&c);
        if magic_split(&cur).is_some() {
            cur.extend(queue);
            return (cur, true);
        }
        if links < 40
            && cur
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
            && let Ok(text) = std::fs::read_link(&cur)
        {
            links += 1;
            if text.is_absolute() {
                cur = PathBuf::from("/");
            } else {
                cur.pop();
            }
            for (i, t) in text
                .iter()
                .skip(usize::from(text.is_absolute()))
                .enumerate()
            {
                queue.insert(i, OsString::from(t));
            }
        }
    }
    (cur, false)
}

/// `std::fs::canonicalize` in three syscalls whatever the depth: the kernel
/// resolves the path once (`open` with `O_PATH`, which neither reads nor
/// triggers a device or FIFO open) and `/proc/self/fd/N` names the result.
/// glibc's `realpath` issues one `readlink` per component instead (a HOME 20
/// levels deep: ~25 per path, ~50 paths per start). Falls back to
/// `std::fs::canonicalize` when `/proc` cannot tell (not mounted, or the
/// file was removed meanwhile).
pub fn canonicalize(p: impl AsRef<Path>) -> std::io::Result<PathBuf> {
    canonicalize_fd(p.as_ref()).map(|(real, _)| real)
}

/// [`canonicalize`], and the `O_PATH` descriptor it named (`None` when the
/// name came from `std::fs::canonicalize`): [`real_prefix_memo`] keeps a
/// directory's, to look its entries up relative to it.
fn canonicalize_fd(p: &Path) -> std::io::Result<(PathBuf, Option<OwnedFd>)> {
    use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
    // Through nix, not `OpenOptions::custom_flags`: Rust's standard library
    // masks the custom flags with `O_ACCMODE`, which musl defines as
    // `03 | O_PATH`, so the static build lost `O_PATH` and opened the path
    // for real (a FIFO blocked until the time bound; a device was opened).
    // A magic link (`/proc/self/cwd`, `/proc/PID/root`, `/dev/fd/N`) names
    // what it names for the process that follows it: for safe-exec, its
    // own working directory, not the command's after the string's `cd`
    // (review 12, F9). The kernel refuses to follow one here (`ELOOP`), and
    // the path is given up to that link, unresolved ([`magic_split`]), for
    // the caller to read as the command's.
    let flags = OFlag::O_PATH | OFlag::O_CLOEXEC;
    let how = OpenHow::new()
        .flags(flags)
        .resolve(ResolveFlag::RESOLVE_NO_MAGICLINKS);
    let f = match nix::fcntl::openat2(nix::fcntl::AT_FDCWD, p, how) {
        Ok(f) => f,
        // No `openat2` (Linux < 5.6, or a seccomp filter around safe-exec
        // that refuses it): the plain open, which follows magic links.
        Err(nix::errno::Errno::ENOSYS | nix::errno::Errno::EPERM | nix::errno::Errno::EINVAL) => {
            nix::fcntl::open(p, flags, nix::sys::stat::Mode::empty())
                .map_err(std::io::Error::from)?
        }
        Err(nix::errno::Errno::ELOOP) => {
            let m = through_to_magic(p);
            return match magic_split(&m) {
                Some(_) => Ok((m, None)),
                None => Err(std::io::Error::from_raw_os_error(libc::ELOOP)),
            };
        }
        Err(e) => return Err(e.into()),
    };
    match proc_name(&f) {
        Some(real) => Ok((real, Some(f))),
        None => std::fs::canonicalize(p).map(|real| (real, None)),
    }
}

/// The absolute path `/proc/self/fd/N` gives for descriptor `f`; `None`
/// when `/proc` cannot tell (not mounted, or the file was removed).
fn proc_name(f: &OwnedFd) -> Option<PathBuf> {
    use std::os::unix::io::AsRawFd;
    // `/proc/self/fd/N`, spelled on the stack (`format!` allocated and
    // formatted a string for each path; N has at most ten digits).
    let mut buf = [0u8; 32];
    let link = {
        use std::io::Write;
        use std::os::unix::ffi::OsStrExt;
        let mut w: &mut [u8] = &mut buf;
        let fits = write!(w, "/proc/self/fd/{}", f.as_raw_fd()).is_ok();
        let len = 32 - w.len();
        fits.then(|| Path::new(std::ffi::OsStr::from_bytes(&buf[..len])))
    };
    let link = match link {
        Some(l) => std::borrow::Cow::Borrowed(l),
        None => std::borrow::Cow::Owned(PathBuf::from(format!("/proc/self/fd/{}", f.as_raw_fd()))),
    };
    match std::fs::read_link(&link) {
        Ok(real)
            if real.is_absolute()
                && !real.as_os_str().as_encoded_bytes().ends_with(b" (deleted)") =>
        {
            Some(real)
        }
        _ => None,
    }
}

/// The reference `real_prefix_clean` is tested against.
#[cfg(test)]
fn real_prefix(p: &Path) -> PathBuf {
    real_prefix_with(p, None)
}

/// The real paths [`real_prefix_memo`] met, by path: keyed by the path's
/// bytes with FNV-1a. `Path`'s own `Hash` goes component by component
/// (`/a//b` and `/a/b` are equal paths), several times slower, and the
/// paths kept here are all clean (no empty, `.` or `..` component), for
/// which equal bytes and equal paths are the same thing.
///
/// Each answer also says whether nothing below the path exists (`lstat`
/// said `ENOENT` of the path or of one above it, or of a path right below
/// a dangling symlink): then [`real_prefix_memo`] does not ask about
/// `{home}/.config/gh` once `{home}/.config` is known to be missing (a
/// profile's denied paths are mostly in a few such directories).
/// And whether the path itself existed (its `lstat` succeeded and its real
/// path was found): the existing directories of the situation are the
/// [`Anchors`] a decision's paths are resolved from.
///
/// It also keeps an `O_PATH` descriptor of the directories it resolved
/// (at most one per directory holding a profile path, ~6), and asks about
/// an entry of such a directory with `fstatat` relative to it: one
/// component for the kernel to look up instead of the whole path (a HOME
/// 20 levels deep: ~40 denied paths of 25 components each, one
/// dentry-cache lookup per component). The answers are the same but for a
/// directory renamed or replaced meanwhile, which the policy's answers
/// never covered (it resolves once; the sandbox resolves again for itself).
#[derive(Debug, Default, Clone)]
pub struct RealMemo(
    HashMap<OsString, (PathBuf, bool, bool), BuildHasherDefault<Fnv>>,
    HashMap<OsString, Arc<OwnedFd>, BuildHasherDefault<Fnv>>,
);

impl RealMemo {
    fn get(&self, p: &Path) -> Option<&PathBuf> {
        self.0.get(p.as_os_str()).map(|(real, _, _)| real)
    }

    /// The answer for `p` and whether `p` is known to be missing.
    fn entry(&self, p: &Path) -> Option<(&PathBuf, bool)> {
        self.0
            .get(p.as_os_str())
            .map(|(real, missing, _)| (real, *missing))
    }

    /// `p` exists and `real` is its real path.
    fn insert(&mut self, p: PathBuf, real: PathBuf) {
        self.0.insert(p.into_os_string(), (real, false, true));
    }

    /// `real` is the answer for `p`, which does not exist; `missing`:
    /// nothing below `p` exists.
    fn insert_known(&mut self, p: PathBuf, real: PathBuf, missing: bool) {
        self.0.insert(p.into_os_string(), (real, missing, false));
    }

    /// Starts the memo with directory `dir` when it is real (`/proc` names
    /// it as spelled): HOME, which most of a profile's paths are under, is
    /// then opened once and each of them looked up relative to it (the
    /// first one asked would otherwise be resolved by its whole path, and
    /// HOME after it).
    pub fn seed_dir(&mut self, dir: &Path) {
        use nix::fcntl::OFlag;
        if !dir.is_absolute() || self.1.contains_key(dir.as_os_str()) {
            return;
        }
        let Ok(fd) = nix::fcntl::open(
            dir,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        ) else {
            return;
        };
        if proc_name(&fd).as_deref() == Some(dir) {
            self.insert(dir.to_path_buf(), dir.to_path_buf());
            self.1.insert(dir.as_os_str().to_os_string(), Arc::new(fd));
        }
    }

    /// The descriptor kept for the nearest of the directories holding
    /// `path` (a clean absolute path), at most [`FD_REACH`] levels up, and
    /// what follows it in `path`; `None` when none is kept.
    fn dir_fd<'p>(&self, path: &'p [u8]) -> Option<(&OwnedFd, &'p [u8])> {
        use std::os::unix::ffi::OsStrExt;
        if self.1.is_empty() {
            return None;
        }
        let mut end = path.len();
        for _ in 0..FD_REACH {
            let slash = path[..end].iter().rposition(|b| *b == b'/')?;
            if slash == 0 {
                return None; // `/` is never kept: a whole path is one lookup shorter
            }
            if let Some(fd) = self.1.get(std::ffi::OsStr::from_bytes(&path[..slash])) {
                return Some((fd.as_ref(), &path[slash + 1..]));
            }
            end = slash;
        }
        None
    }

    /// The longest prefix of the clean absolute path `p` (`p` itself
    /// included, `/` not) that this memo met existing, with its real path.
    pub fn existing_prefix(&self, p: &Path) -> Option<(PathBuf, PathBuf)> {
        use std::os::unix::ffi::OsStrExt;
        let bytes = p.as_os_str().as_bytes();
        let mut end = bytes.len();
        while end > 1 {
            let prefix = Path::new(std::ffi::OsStr::from_bytes(&bytes[..end]));
            if let Some((real, _, true)) = self.0.get(prefix.as_os_str()) {
                return Some((prefix.to_path_buf(), real.clone()));
            }
            end = bytes[..end].iter().rposition(|b| *b == b'/')?;
        }
        None
    }
}

/// Directories of the situation (the working directory, the home, the
/// temporary directory: each one's longest prefix that existed) with the
/// real paths read when the situation's roots were resolved, longest
/// first: [`resolve_anchored`] starts from them instead of asking the
/// filesystem for the real path of the directories every decision's paths
/// are in. The situation is the caller's snapshot of where the command
/// runs; what lies below these directories is asked afresh every time.
#[derive(Debug, Default, Clone)]
pub struct Anchors(Vec<(PathBuf, PathBuf)>);

impl Anchors {
    /// The anchors from (spelled, real) pairs; `/` is always one.
    pub fn new(pairs: impl IntoIterator<Item = (PathBuf, PathBuf)>) -> Self {
        let mut v: Vec<(PathBuf, PathBuf)> = pairs
            .into_iter()
            .filter(|(p, _)| p.to_str().is_some_and(|s| s != "/" && is_clean_absolute(s)))
            .collect();
        v.sort_by(|a, b| {
            b.0.as_os_str()
                .len()
                .cmp(&a.0.as_os_str().len())
                .then_with(|| a.0.cmp(&b.0))
        });
        v.dedup_by(|a, b| a.0 == b.0);
        Self(v)
    }

    /// The anchor `p` (clean and absolute) is in or is: its real path and
    /// where the rest of `p` starts (at a `/`, or the end); `/` and 0 when
    /// no other anchor holds it.
    fn of(&self, bytes: &[u8]) -> (PathBuf, usize) {
        use std::os::unix::ffi::OsStrExt;
        for (a, real) in &self.0 {
            let ab = a.as_os_str().as_bytes();
            if bytes.starts_with(ab) && (bytes.len() == ab.len() || bytes[ab.len()] == b'/') {
                return (real.clone(), ab.len());
            }
        }
        (PathBuf::from("/"), 0)
    }
}

/// [`resolve`] starting from the situation's [`Anchors`]: the same answer
/// while the anchors' real paths hold (the situation's snapshot), in one
/// `lstat` per component below the anchor instead of an `lstat` per
/// missing component and an `open`, a `readlink` of `/proc/self/fd/N`
/// and a `close` of the longest existing prefix (~2 µs in a VM, more than
/// the rest of a decision's path checks). A component that is not a
/// symlink, in a directory whose real path is known, has that directory's
/// real path and its own name (the rule the profile's paths are resolved
/// by, [`real_prefix_memo`]); at the first symlink the whole path is
/// resolved as [`resolve`] does, through the kernel.
pub fn resolve_anchored(anchors: &Anchors, cwd: &Path, p: &str) -> PathBuf {
    match lexical_join(cwd, p) {
        Some(lexical) => real_prefix_anchored(anchors, &lexical),
        None => resolve(cwd, p),
    }
}

/// [`resolve_anchored`] of a clean absolute path.
fn real_prefix_anchored(anchors: &Anchors, p: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let bytes = p.as_os_str().as_bytes();
    let (mut out, mut at) = anchors.of(bytes);
    let mut missing = false;
    // `at` is where the next component's `/` is (or the end).
    while at + 1 < bytes.len() {
        let next = bytes[at + 1..]
            .iter()
            .position(|b| *b == b'/')
            .map_or(bytes.len(), |i| at + 1 + i);
        out.push(std::ffi::OsStr::from_bytes(&bytes[at + 1..next]));
        if !missing {
            match out.symlink_metadata() {
                Ok(m) if m.file_type().is_symlink() => return real_prefix_clean(p),
                Ok(_) => {}
                // Whatever stops the `lstat` (`ENOENT`, `ENOTDIR`,
                // `EACCES`) stops every path below it too: the rest is
                // kept as written, as `resolve` keeps it.
                Err(_) => missing = true,
            }
        }
        at = next;
    }
    out
}

/// How many directories up [`RealMemo::dir_fd`] looks for a kept
/// descriptor: a profile's paths sit at most a few levels below HOME
/// (`{home}/.local/share/fish/fish_history`: 4).
const FD_REACH: usize = 4;

/// What [`real_prefix_memo`] needs of an `lstat`: whether the entry is a
/// symlink, and whether it is a directory.
struct Kind {
    symlink: bool,
    dir: bool,
}

/// `lstat` of `path` (clean, absolute), relative to the descriptor of the
/// nearest directory above it that the memo keeps (see [`RealMemo`]): the
/// names below that directory are looked up as the whole path's would be
/// (a symlink among them followed, the last one not).
fn lstat_in(memo: &RealMemo, path: &Path) -> std::io::Result<Kind> {
    use std::os::unix::ffi::OsStrExt;
    if let Some((fd, rest)) = memo.dir_fd(path.as_os_str().as_bytes()) {
        let st = nix::sys::stat::fstatat(
            fd,
            std::ffi::OsStr::from_bytes(rest),
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .map_err(std::io::Error::from)?;
        let fmt = st.st_mode & libc::S_IFMT;
        return Ok(Kind {
            symlink: fmt == libc::S_IFLNK,
            dir: fmt == libc::S_IFDIR,
        });
    }
    let meta = path.symlink_metadata()?;
    Ok(Kind {
        symlink: meta.file_type().is_symlink(),
        dir: meta.is_dir(),
    })
}

/// FNV-1a taken eight bytes at a time (each step a multiply, then the high
/// half folded into the low one, which picks the bucket): the keys of
/// [`RealMemo`] are whole paths, ~100 bytes under a HOME 20 levels deep,
/// where one multiply per byte cost most of a lookup. Not exposed to input
/// an attacker chooses in bulk (the profile's paths).
#[derive(Default)]
pub struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        const PRIME: u64 = 0x0100_0000_01b3;
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            h = (h ^ u64::from_le_bytes(word)).wrapping_mul(PRIME);
            h ^= h >> 32;
        }
        for b in words.remainder() {
            h = (h ^ u64::from(*b)).wrapping_mul(PRIME);
        }
        h ^= h >> 29;
        self.0 = h;
    }
}

/// [`resolve`] of a clean absolute path (no `..`) for a caller that
/// resolves many paths at once (a profile's paths for one situation): the
/// real path of each existing prefix is asked of the filesystem once and
/// kept in `memo` (the profile's paths mostly sit in the same few
/// directories: HOME, the project, TMPDIR), and an entry that is not a
/// symlink in a directory whose real path is known needs no more than its
/// `lstat`.
pub fn real_prefix_memo(p: &Path, memo: &mut RealMemo) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let bytes = p.as_os_str().as_bytes();
    let Ok(text) = std::str::from_utf8(bytes) else {
        return real_prefix_with(p, Some(memo));
    };
    if !is_clean_absolute(text) {
        return real_prefix_with(p, Some(memo));
    }
    // `real_prefix_with` on the path's bytes: a clean absolute path's
    // parent is what precedes its last `/` and its name what follows, so no
    // component parsing and no copies of the prefixes tried.
    let path = |end: usize| Path::new(std::ffi::OsStr::from_bytes(&bytes[..end.max(1)]));
    let mut end = bytes.len();
    // Whether the component below the existing prefix found is missing
    // (`ENOENT`), and with it everything below: what the missing rest's
    // answers are marked with.
    let mut rest_missing = false;
    loop {
        let existing = path(end);
        let slash = bytes[..end].iter().rposition(|b| *b == b'/');
        let real = match memo.entry(existing) {
            Some((real, _)) => Some(real.clone()),
            // Below a directory known to be missing: missing too, no `lstat`.
            None if matches!(slash, Some(i) if end > 1
                && memo.entry(path(i)).is_some_and(|(_, missing)| missing)) =>
            {
                rest_missing = true;
                None
            }
            // `/` is `/`: no `lstat` and no realpath for it.
            None if end <= 1 => {
                let root = PathBuf::from("/");
                memo.insert(root.clone(), root.clone());
                Some(root)
            }
            None => match lstat_in(memo, existing) {
                Ok(meta) => {
                    // Not a symlink, in a directory whose real path is
                    // known: its real path is that directory's and its name.
                    let via_parent = match slash {
                        Some(i) if end > 1 && !meta.symlink => memo
                            .get(path(i))
                            .map(|r| r.join(std::ffi::OsStr::from_bytes(&bytes[i + 1..end]))),
                        _ => None,
                    };
                    let real = via_parent.or_else(|| match canonicalize_fd(existing) {
                        Ok((real, fd)) => {
                            // A directory's descriptor is kept for its
                            // entries (see `RealMemo`).
                            if let (true, Some(fd)) = (meta.dir, fd) {
                                memo.1
                                    .insert(existing.as_os_str().to_os_string(), Arc::new(fd));
                            }
                            Some(real)
                        }
                        Err(_) => None,
                    });
                    if let Some(r) = &real {
                        memo.insert(existing.to_path_buf(), r.clone());
                    }
                    real
                }
                Err(e) => {
                    // Only "no such entry" says the same of what is below
                    // (`ENOTDIR`, a file in the way, says nothing of it).
                    rest_missing = e.kind() == std::io::ErrorKind::NotFound;
                    None
                }
            },
        };
        if let Some(mut out) = real {
            // The missing rest, each missing prefix memoised as it resolves
            // (`{home}/.config/gh`, then `{home}/.config/gcloud`).
            let mut at = if end <= 1 { 0 } else { end };
            while at < bytes.len() {
                let next = bytes[at + 1..]
                    .iter()
                    .position(|b| *b == b'/')
                    .map_or(bytes.len(), |i| at + 1 + i);
                out.push(std::ffi::OsStr::from_bytes(&bytes[at + 1..next]));
                memo.insert_known(path(next).to_path_buf(), out.clone(), rest_missing);
                at = next;
            }
            return out;
        }
        match slash {
            Some(i) if end > 1 => end = i,
            _ => return p.to_path_buf(),
        }
    }
}

/// [`real_prefix`] of a clean absolute path (what [`lexical_join`] gives),
/// on its bytes: a clean path's parent is what precedes its last `/` and
/// its name what follows, so no component parsing and no copy of each
/// prefix tried (as [`real_prefix_memo`] does, without a memo).
fn real_prefix_clean(p: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let bytes = p.as_os_str().as_bytes();
    let path = |end: usize| Path::new(std::ffi::OsStr::from_bytes(&bytes[..end.max(1)]));
    let mut end = bytes.len();
    loop {
        let existing = path(end);
        let real = match existing.symlink_metadata() {
            Ok(_) => canonicalize(existing).ok(),
            Err(_) => None,
        };
        if let Some(mut out) = real {
            // The missing rest, as it was written.
            let at = if end <= 1 { 0 } else { end };
            if at < bytes.len() {
                out.push(std::ffi::OsStr::from_bytes(&bytes[at + 1..]));
            }
            return out;
        }
        match bytes[..end].iter().rposition(|b| *b == b'/') {
            Some(i) if end > 1 => end = i,
            _ => return p.to_path_buf(),
        }
    }
}

/// Whether `s` is a clean absolute path: `/`, or `/` and components none
/// of which is empty, `.` or `..` (no trailing `/`). Its lexical join onto
/// `/` is itself.
pub fn is_clean_absolute(s: &str) -> bool {
    // On the bytes (`/` is one byte in UTF-8 and never part of another
    // character): `str::split` with a `char` pattern costs several times
    // more per path, and every profile path is asked twice per start.
    let b = s.as_bytes();
    b == b"/"
        || (b.first() == Some(&b'/')
            && b.last() != Some(&b'/')
            && b[1..]
                .split(|c| *c == b'/')
                .all(|c| !c.is_empty() && c != b"." && c != b".."))
}

fn real_prefix_with(p: &Path, mut memo: Option<&mut RealMemo>) -> PathBuf {
    let mut existing = p.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        // One lstat per missing component, then a single realpath of the
        // longest existing prefix (asked once per caller's memo).
        let known = memo.as_deref().and_then(|m| m.get(&existing)).cloned();
        let real = match known {
            Some(real) => Some(real),
            None if let Ok(meta) = existing.symlink_metadata() => {
                // Not a symlink, in a directory whose real path is known:
                // its real path is that directory's and its name.
                let via_parent = (!meta.file_type().is_symlink())
                    .then(|| existing.parent().zip(existing.file_name()))
                    .flatten()
                    .and_then(|(dir, name)| {
                        memo.as_deref()
                            .and_then(|m| m.get(dir))
                            .map(|r| r.join(name))
                    });
                let real = via_parent.or_else(|| canonicalize(&existing).ok());
                if let (Some(m), Some(r)) = (memo.as_deref_mut(), &real) {
                    m.insert(existing.clone(), r.clone());
                }
                real
            }
            None => None,
        };
        if let Some(real) = real {
            let mut out = real;
            for r in rest.iter().rev() {
                out.push(r);
                // A missing prefix resolves like this for the next paths
                // under it (`{home}/.config/gh`, `{home}/.config/gcloud`):
                // one failing lstat less each.
                if let Some(m) = memo.as_deref_mut() {
                    existing.push(r);
                    m.insert_known(existing.clone(), out.clone(), false);
                }
            }
            return out;
        }
        match (
            existing.file_name().map(|f| f.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return p.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `canonicalize` (reading `/proc/self/fd/N` spelled on the stack) is
    /// the standard library's, for existing paths through symlinks and
    /// `..`, and fails where it fails.
    #[test]
    fn canonicalize_is_the_standard_one() {
        let d = std::env::temp_dir().join(format!("se-canon-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("a/b")).expect("mkdir");
        std::os::unix::fs::symlink(d.join("a/b"), d.join("l")).expect("symlink");
        for p in [
            d.clone(),
            d.join("a/b"),
            d.join("l"),
            d.join("l/../b"),
            d.join("a/./b/.."),
            PathBuf::from("/"),
            PathBuf::from("/proc/self"),
        ] {
            assert_eq!(
                canonicalize(&p).ok(),
                std::fs::canonicalize(&p).ok(),
                "{}",
                p.display()
            );
        }
        assert!(canonicalize(d.join("missing")).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    /// `real_prefix_clean` answers as `real_prefix` for clean absolute
    /// paths through symlinks (absolute, relative, chained), missing tails
    /// and files, generated from the pieces below.
    #[test]
    fn real_prefix_clean_equals_real_prefix() {
        let d = tempfile::tempdir().expect("tmp");
        let root = canonicalize(d.path()).expect("real tmp");
        std::fs::create_dir_all(root.join("real/sub")).expect("dirs");
        std::fs::write(root.join("real/file"), b"x").expect("file");
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).expect("symlink");
        std::os::unix::fs::symlink(root.join("link"), root.join("linklink")).expect("symlink");
        std::os::unix::fs::symlink("real/sub", root.join("rel")).expect("symlink");
        std::os::unix::fs::symlink("missing", root.join("dangling")).expect("symlink");
        const PIECES: &[&str] = &[
            "real", "sub", "file", "link", "linklink", "rel", "dangling", "missing", "x",
        ];
        let mut next = crate::sys::testing::xorshift(0x2545_F491_4F6C_DD1D);
        for _ in 0..5_000 {
            let mut p = root.clone();
            for _ in 0..(next() % 5) {
                p.push(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            assert_eq!(real_prefix_clean(&p), real_prefix(&p), "{}", p.display());
        }
        for p in [
            "/",
            "/proc/self/cwd",
            "/proc/self/cwd/x/y",
            "/nonexistent/a/b",
        ] {
            let p = Path::new(p);
            assert_eq!(real_prefix_clean(p), real_prefix(p), "{}", p.display());
        }
    }

    /// `lexical_join` is `join_clean` of a join without `..`, as `resolve`
    /// computed it before (the component iterator), over generated
    /// spellings of the working directory and the operand.
    #[test]
    fn lexical_join_equals_join_clean() {
        const PIECES: &[&str] = &[
            "/", "/", "//", ".", "..", "a", "b", "ab", "/.", "./", "..a", ".a", "a.", "é", " ",
        ];
        let mut next = crate::sys::testing::xorshift(0x9E37_79B9_7F4A_7C15);
        let mut spelling = |abs: bool| -> String {
            let n = (next() % 7) as usize;
            let mut s = String::from(if abs { "/" } else { "" });
            for _ in 0..n {
                s.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            s
        };
        for k in 0..200_000u32 {
            let cwd = spelling(k % 5 != 0);
            let p = spelling(k % 3 == 0);
            let joined = if p.starts_with('/') {
                PathBuf::from(&p)
            } else {
                Path::new(&cwd).join(&p)
            };
            let has_parent = joined
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir));
            let want = (!has_parent).then(|| join_clean(Path::new(&cwd), &p));
            assert_eq!(
                lexical_join(Path::new(&cwd), &p),
                want,
                "cwd {cwd:?} p {p:?}"
            );
        }
    }

    #[test]
    fn memo_answers_as_resolving_each_path_alone() {
        memo_answers_alone(false);
    }

    /// The same with directories seeded (HOME in a run): entries below them
    /// are looked up relative to their descriptors, through symlinks on the
    /// way, and the answers stay those of the whole paths.
    #[test]
    fn seeded_memo_answers_as_resolving_each_path_alone() {
        memo_answers_alone(true);
    }

    fn memo_answers_alone(seed: bool) {
        let d = tempfile::tempdir().expect("tmp");
        let root = canonicalize(d.path()).expect("real tmp");
        std::fs::create_dir_all(root.join("real/sub")).expect("dirs");
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).expect("symlink");
        std::os::unix::fs::symlink(root.join("link"), root.join("linklink")).expect("symlink");
        std::os::unix::fs::symlink("real/sub", root.join("rel")).expect("symlink");
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).expect("symlink");
        std::fs::write(root.join("real/file"), b"").expect("file");
        let paths = [
            "link/missing/a",
            "link/missing/b",
            "link/missing",
            "link/sub",
            "link/sub/new/x",
            "real/missing/a",
            "missing/deeper/still",
            "missing/deeper/other",
            "missing",
            "link",
            "linklink/sub/x",
            "linklink",
            "rel/y/z",
            "rel",
            "dangling/a",
            "dangling",
            "real/file",
            "real/file/below",
            "real/file/below/deeper",
            "missing/deeper/still/more",
            "missing/other",
            "dangling/a/b",
            "link/missing/a/b",
            "link/file",
        ];
        let mut memo = RealMemo::default();
        if seed {
            memo.seed_dir(&root);
            memo.seed_dir(&root.join("real"));
            // Not real: not seeded (a symlink, a missing directory).
            memo.seed_dir(&root.join("link"));
            memo.seed_dir(&root.join("missing"));
            assert!(memo.1.contains_key(root.as_os_str()));
            assert!(memo.1.contains_key(root.join("real").as_os_str()));
            assert_eq!(memo.1.len(), 2);
        }
        let mut old_memo = RealMemo::default();
        let absolute = [
            "/",
            "/proc",
            "/nonexistent-safe-exec-test/a/b",
            "/nonexistent-safe-exec-test",
        ];
        for round in 0..2 {
            for p in paths
                .iter()
                .map(|p| root.join(p))
                .chain(absolute.iter().map(PathBuf::from))
            {
                assert_eq!(
                    real_prefix_memo(&p, &mut memo),
                    real_prefix(&p),
                    "{} (round {round})",
                    p.display()
                );
                assert_eq!(
                    real_prefix_with(&p, Some(&mut old_memo)),
                    real_prefix(&p),
                    "{} (round {round}, component memo)",
                    p.display()
                );
            }
        }
        assert_eq!(
            real_prefix_memo(&root.join("link/missing/a"), &mut memo),
            root.join("real/missing/a")
        );
    }

    /// `resolve_anchored` answers as `resolve` (the longest existing
    /// prefix's real path from the kernel) for generated operands through
    /// symlinks (absolute, relative, chained, dangling), files in the way
    /// and missing tails, from working directories inside and outside the
    /// anchors (an anchor spelled through a symlink, one whose directory is
    /// missing, and none), and for `/`, `/proc/self/...` and `..`.
    #[test]
    fn resolve_anchored_equals_resolve() {
        let d = tempfile::tempdir().expect("tmp");
        let root = canonicalize(d.path()).expect("real tmp");
        std::fs::create_dir_all(root.join("real/sub/deep")).expect("dirs");
        std::fs::create_dir_all(root.join("home/.ssh")).expect("dirs");
        std::fs::write(root.join("real/file"), b"x").expect("file");
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).expect("symlink");
        std::os::unix::fs::symlink(root.join("link"), root.join("linklink")).expect("symlink");
        std::os::unix::fs::symlink("sub", root.join("real/rel")).expect("symlink");
        std::os::unix::fs::symlink("missing", root.join("real/dangling")).expect("symlink");
        std::os::unix::fs::symlink("/proc/self", root.join("real/proc")).expect("symlink");
        let anchor_sets: Vec<Anchors> = {
            let mut memo = RealMemo::default();
            let dirs = [
                root.join("real"),
                root.join("link/sub"),
                root.join("home"),
                root.join("gone/project"),
            ];
            for p in &dirs {
                real_prefix_memo(p, &mut memo);
            }
            let all: Vec<(PathBuf, PathBuf)> = dirs
                .iter()
                .filter_map(|p| memo.existing_prefix(p))
                .collect();
            assert_eq!(all.len(), 4, "{all:?}");
            vec![
                Anchors::new(all.clone()),
                Anchors::new(all[..1].to_vec()),
                Anchors::new(all[3..].to_vec()),
                Anchors::default(),
            ]
        };
        const PIECES: &[&str] = &[
            "real", "sub", "deep", "file", "link", "linklink", "rel", "dangling", "missing", "x",
            "home", ".ssh", "proc", "cwd", ".", "..", "gone", "project",
        ];
        let cwds = [
            root.clone(),
            root.join("real"),
            root.join("real/sub"),
            root.join("link/sub"),
            root.join("home"),
            root.join("gone/project"),
            root.join("real/file"),
            PathBuf::from("/"),
        ];
        let mut next = crate::sys::testing::xorshift(0x5851_F42D_4C95_7F2D);
        let mut checked = 0;
        for _ in 0..6_000 {
            let cwd = &cwds[(next() % cwds.len() as u64) as usize];
            let mut p = String::new();
            if next().is_multiple_of(6) {
                p.push_str(&root.to_string_lossy());
            }
            for i in 0..(next() % 5) {
                if i > 0 || !p.is_empty() {
                    p.push('/');
                }
                p.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            let want = resolve(cwd, &p);
            for a in &anchor_sets {
                assert_eq!(
                    resolve_anchored(a, cwd, &p),
                    want,
                    "cwd {} p {p:?} anchors {a:?}",
                    cwd.display()
                );
                checked += 1;
            }
        }
        for (cwd, p) in [
            ("/", "/"),
            ("/", ""),
            ("/", "proc/self/cwd"),
            ("/", "/proc/self/fd/0"),
            ("/", "/nonexistent-safe-exec-test/a/b"),
            ("/tmp", "."),
        ] {
            for a in &anchor_sets {
                assert_eq!(
                    resolve_anchored(a, Path::new(cwd), p),
                    resolve(Path::new(cwd), p),
                    "{cwd} {p}"
                );
            }
        }
        assert!(checked >= 24_000);
    }

    #[test]
    fn clean_absolute_on_bytes_is_the_str_split_definition() {
        fn by_str(s: &str) -> bool {
            s == "/"
                || (s.starts_with('/')
                    && !s.ends_with('/')
                    && s[1..]
                        .split('/')
                        .all(|c| !c.is_empty() && c != "." && c != ".."))
        }
        // Every string of up to 6 of these pieces (`/`, dots, a letter,
        // a multi-byte character).
        let pieces = ["/", ".", "..", "a", "é", "/.", "./"];
        let mut all = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..6 {
            last = last
                .iter()
                .flat_map(|s| pieces.iter().map(move |p| format!("{s}{p}")))
                .collect();
            all.extend(last.iter().cloned());
        }
        assert!(all.len() > 100_000, "{}", all.len());
        for s in &all {
            assert_eq!(is_clean_absolute(s), by_str(s), "{s:?}");
        }
    }
}
