//! Concurrent runs share one trusted baseline (docs/threat-model.md,
//! "Protected files: concurrent runs").
//!
//! Without this, each run compared with its own snapshot: run B, started
//! while run A's command had planted `.git/hooks/pre-commit`, took the
//! planted hook as its baseline, and B's restore put it back after A's had
//! removed it. Now every run publishes the baseline it restores to, and a
//! run that starts while another run whose roots overlap its own is active
//! takes, for every path that run protects, the state that run's restore
//! will put back (its published baseline, or "missing" for what it would
//! remove), never the state the other command may have produced.
//!
//! The files, in `{state}/protect/` (mode 0700, owned by the user; the
//! state directory is in every built-in profile's `deny_read`, and a run
//! whose sandbox could write this directory is refused):
//!
//! - `lock`: a short `flock(LOCK_EX)` around "who is active, publish my
//!   baseline" at the start and "restore, withdraw my baseline" at the
//!   end. One lock per state directory, not per root: roots overlap (a
//!   project inside TMPDIR, a run in a subdirectory of another run's
//!   root, two profiles with different protected lists in one root), and
//!   finding the runs a root overlaps needs one place to look. Holding one
//!   lock at a time also leaves no lock order to get wrong.
//! - `run-PID-RANDOM.json`: one per active run, written atomically (a
//!   `tmp-` file, then `rename`), held with `flock(LOCK_EX)` for the
//!   whole run, until its restore is done. The kernel drops the lock when
//!   the process dies, so a file whose lock can be taken belongs to no
//!   active run: it is stale (a killed run) and is removed, never used
//!   (the user may have edited `.git/config` since).
//!
//! Each published file holds two JSON lines, a header (its roots and
//! protected patterns, the start time) and the snapshot (every protected
//! path's state: mode, kind, the length of its content; the venvs and `**`
//! directories seen; paths hex-encoded), then the files' contents one after
//! the other, raw (a tenth of the cost of encoding them in the JSON). A file of an active run that is malformed, too large
//! or not the user's refuses the run (fail closed), with what to do.

use super::{MAX_BYTES, Pass, Probe, Snapshot, State, covered, join, matches, parsed};
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg, OFlag, openat, renameat};
use nix::sys::stat::{Mode, fchmod, fstat};
use nix::unistd::{UnlinkatFlags, unlinkat};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

/// The format's version (the header's `v`).
const VERSION: u32 = 1;

/// Largest published file read: the contents (at most [`MAX_BYTES`]) and
/// room for the paths.
const MAX_FILE: u64 = MAX_BYTES + 32 * 1024 * 1024;

/// The directory of the published baselines under the state directory.
pub fn dir_in(state: &Path) -> PathBuf {
    state.join("protect")
}

/// Makes `dir` (and the state directory) if missing, mode 0700, before the
/// sandbox is planned: a `deny_read` path that exists is denied wherever it
/// is, one that does not and would appear inside a writable root is not
/// (docs/threat-model.md, "Secrets that do not exist yet"). Errors are left
/// to [`begin`], which says what they mean.
pub fn prepare_dir(dir: &Path) {
    use std::os::unix::fs::DirBuilderExt;
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir);
}

/// One run's place among the runs that share baselines: its published
/// file (held locked until [`Shared::finish`]) and the directory.
#[derive(Debug)]
pub struct Shared {
    /// The directory, opened without following a link.
    dir: OwnedFd,
    /// This run's published file, locked.
    mine: Flock<OwnedFd>,
    /// Its name in the directory.
    name: OsString,
}

/// A published file's first line.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    v: u32,
    pid: u32,
    /// Nanoseconds since the epoch at publication (older runs' baselines
    /// win where baselines disagree).
    started: u64,
    roots: Vec<Hex>,
    patterns: Vec<String>,
}

/// A published file's second line: the snapshot (the contents follow it).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    /// Index of the root in the header, path relative to it, state.
    entries: Vec<(u32, Hex, Dto)>,
    venvs: Vec<Hex>,
    walked: Vec<Hex>,
    root_ids: Vec<(u32, u64, u64)>,
}

/// [`State`] as published (`F`: the length of the content, which follows
/// the JSON lines, and the mode).
#[derive(Serialize, Deserialize)]
enum Dto {
    M,
    F(u64, u32),
    L(Hex),
    D(u32),
    S(u32, u32),
    T,
    U(String),
}

/// Bytes as a hex string (paths need not be UTF-8; contents need not be
/// text).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hex(Vec<u8>);

const DIGITS: &[u8; 16] = b"0123456789abcdef";

impl Serialize for Hex {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = Vec::with_capacity(self.0.len() * 2);
        for b in &self.0 {
            out.push(DIGITS[usize::from(b >> 4)]);
            out.push(DIGITS[usize::from(b & 15)]);
        }
        // Only ASCII digits were pushed.
        s.serialize_str(std::str::from_utf8(&out).map_err(serde::ser::Error::custom)?)
    }
}

impl<'de> Deserialize<'de> for Hex {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s: std::borrow::Cow<'de, str> = Deserialize::deserialize(d)?;
        unhex(s.as_bytes())
            .map(Hex)
            .ok_or_else(|| serde::de::Error::custom("not a hex string"))
    }
}

fn unhex(s: &[u8]) -> Option<Vec<u8>> {
    fn v(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        }
    }
    if !s.len().is_multiple_of(2) {
        return None;
    }
    s.chunks_exact(2)
        .map(|p| Some((v(p[0])? << 4) | v(p[1])?))
        .collect()
}

fn hex_path(p: &Path) -> Hex {
    Hex(p.as_os_str().as_bytes().to_vec())
}

fn path_of(h: Hex) -> PathBuf {
    PathBuf::from(OsString::from_vec(h.0))
}

/// The published text of `snap` (taken under `roots` for `patterns`).
fn serialize(snap: &Snapshot, roots: &[PathBuf], patterns: &[String]) -> io::Result<Vec<u8>> {
    let idx = |r: &Path| -> io::Result<u32> {
        roots
            .iter()
            .position(|x| x.as_os_str() == r.as_os_str())
            .and_then(|i| u32::try_from(i).ok())
            .ok_or_else(|| io::Error::other("an entry's root is not one of the run's"))
    };
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    let header = Header {
        v: VERSION,
        pid: std::process::id(),
        started,
        roots: roots.iter().map(|r| hex_path(r)).collect(),
        patterns: patterns.to_vec(),
    };
    let mut entries = Vec::with_capacity(snap.entries.len());
    for (root, rel, st) in snap.entries.values() {
        let dto = match st {
            State::Missing => Dto::M,
            State::File { content, mode } => Dto::F(content.len() as u64, *mode),
            State::Symlink(t) => Dto::L(hex_path(t)),
            State::Dir { mode } => Dto::D(*mode),
            State::Special { kind, mode } => Dto::S(*kind, *mode),
            State::Tampered => Dto::T,
            State::Unreadable(why) => Dto::U(why.clone()),
        };
        entries.push((idx(root)?, hex_path(rel), dto));
    }
    let mut root_ids = Vec::with_capacity(snap.root_ids.len());
    for (r, (dev, ino)) in &snap.root_ids {
        root_ids.push((idx(r)?, *dev, *ino));
    }
    let body = Body {
        entries,
        venvs: snap.venvs.iter().map(|v| hex_path(v)).collect(),
        walked: snap
            .walked
            .iter()
            .map(|w| Hex(w.as_bytes().to_vec()))
            .collect(),
        root_ids,
    };
    let mut out = serde_json::to_vec(&header).map_err(io::Error::other)?;
    out.push(b'\n');
    serde_json::to_writer(&mut out, &body).map_err(io::Error::other)?;
    out.push(b'\n');
    out.reserve(usize::try_from(snap.content_bytes()).unwrap_or(0));
    for (_, _, st) in snap.entries.values() {
        if let State::File { content, .. } = st {
            out.extend_from_slice(content);
        }
    }
    Ok(out)
}

/// A published baseline, read back and checked.
#[derive(Debug)]
struct Published {
    roots: Vec<PathBuf>,
    patterns: Vec<String>,
    snap: Snapshot,
}

/// An absolute path of plain components (what the run's canonical roots
/// and every path built from them are).
fn plain_abs(p: &Path) -> bool {
    let mut c = p.components();
    c.next() == Some(Component::RootDir) && c.all(|c| matches!(c, Component::Normal(_)))
}

/// A path relative to a root as the snapshot makes them: plain names, or
/// `.` alone (the pattern naming the root itself).
fn plain_rel(p: &Path) -> bool {
    let n = p.components().count();
    n > 0
        && p.components()
            .all(|c| matches!(c, Component::Normal(_)) || (n == 1 && c == Component::CurDir))
}

/// The header alone (for a file of an active run whose roots may not
/// overlap this run's).
fn parse_header(text: &[u8]) -> Result<(Header, &[u8]), String> {
    let nl = text
        .iter()
        .position(|b| *b == b'\n')
        .ok_or("no header line")?;
    let h: Header = serde_json::from_slice(&text[..nl]).map_err(|e| format!("header: {e}"))?;
    if h.v != VERSION {
        return Err(format!("version {} (this safe-exec reads {VERSION})", h.v));
    }
    Ok((h, &text[nl + 1..]))
}

/// Reads back a published file's text; `Err` says what is wrong with it.
fn parse(text: &[u8]) -> Result<Published, String> {
    let (h, rest) = parse_header(text)?;
    let roots: Vec<PathBuf> = h.roots.into_iter().map(path_of).collect();
    if roots.is_empty() || !roots.iter().all(|r| plain_abs(r)) {
        return Err("a root is not an absolute plain path".into());
    }
    let nl = rest
        .iter()
        .position(|b| *b == b'\n')
        .ok_or("no snapshot line")?;
    let body: Body = serde_json::from_slice(&rest[..nl]).map_err(|e| format!("snapshot: {e}"))?;
    let mut contents = &rest[nl + 1..];
    let root = |i: u32| -> Result<&PathBuf, String> {
        usize::try_from(i)
            .ok()
            .and_then(|i| roots.get(i))
            .ok_or_else(|| format!("root index {i} out of range"))
    };
    let mut snap = Snapshot::default();
    let mut bytes = 0u64;
    for (i, rel, dto) in body.entries {
        let r = root(i)?.clone();
        let rel = path_of(rel);
        if !plain_rel(&rel) {
            return Err(format!(
                "entry {} is not a plain relative path",
                rel.display()
            ));
        }
        let mode_ok = |m: u32| m <= 0o7777;
        let st = match dto {
            Dto::M => State::Missing,
            Dto::F(len, mode) if mode_ok(mode) => {
                bytes = bytes.saturating_add(len);
                let n = usize::try_from(len)
                    .ok()
                    .filter(|n| *n <= contents.len() && bytes <= MAX_BYTES)
                    .ok_or_else(|| format!("entry {}: content cut short", rel.display()))?;
                let (c, more) = contents.split_at(n);
                contents = more;
                State::File {
                    content: c.to_vec(),
                    mode,
                }
            }
            Dto::L(t) => State::Symlink(path_of(t)),
            Dto::D(mode) if mode_ok(mode) => State::Dir { mode },
            Dto::S(kind, mode)
                if mode_ok(mode)
                    && [libc::S_IFIFO, libc::S_IFSOCK, libc::S_IFBLK, libc::S_IFCHR]
                        .contains(&kind) =>
            {
                State::Special { kind, mode }
            }
            Dto::T => State::Tampered,
            Dto::U(why) => State::Unreadable(why),
            _ => {
                return Err(format!(
                    "entry {}: a mode or kind out of range",
                    rel.display()
                ));
            }
        };
        if bytes > MAX_BYTES {
            return Err(format!("more than {MAX_BYTES} bytes of content"));
        }
        snap.entries
            .insert(join(&r, &rel).into_os_string(), (r, rel, st));
    }
    if !contents.is_empty() {
        return Err("content past the last file's".into());
    }
    for v in body.venvs {
        let v = path_of(v);
        if !plain_abs(&v) {
            return Err("a venv is not an absolute plain path".into());
        }
        snap.venvs.insert(v);
    }
    for w in body.walked {
        let w = path_of(w);
        if !plain_abs(&w) {
            return Err("a walked directory is not an absolute plain path".into());
        }
        snap.walked.insert(w.into_os_string());
    }
    for (i, dev, ino) in body.root_ids {
        snap.root_ids.insert(root(i)?.clone(), (dev, ino));
    }
    Ok(Published {
        roots,
        patterns: h.patterns,
        snap,
    })
}

/// Whether some root of `a` is one of `b`'s, or inside or above one.
fn overlaps(a: &[PathBuf], b: &[PathBuf]) -> bool {
    a.iter()
        .any(|x| b.iter().any(|y| x.starts_with(y) || y.starts_with(x)))
}

/// Where the roots `a` and `b` overlap: of two nested roots, the inner.
fn shared_parts(a: &[PathBuf], b: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for x in a {
        for y in b {
            if x.starts_with(y) {
                out.push(x.clone());
            } else if y.starts_with(x) {
                out.push(y.clone());
            }
        }
    }
    out
}

impl Snapshot {
    /// Takes, for every path the active run `l` protects, the state `l`'s
    /// restore will put back instead of the state found now (which that
    /// run's command may have produced): `l`'s baseline for a path it has,
    /// missing for a path its restore would remove (a file planted in a
    /// protected tree, a `.pth` in one of its venvs). A path `l` had that
    /// this run's patterns cover under its roots but that is gone now (a
    /// hook the other command deleted) is added, so that this restore puts
    /// it back too. Paths `l` does not protect keep what this snapshot
    /// found.
    fn adopt(&mut self, roots: &[PathBuf], patterns: &[String], l: &Published) {
        let l_roots: Vec<PathBuf> = l
            .roots
            .iter()
            .filter(|q| overlaps(std::slice::from_ref(q), roots))
            .cloned()
            .collect();
        // What `l`'s restore would look at now: the same pass it makes.
        let mut pass = Pass {
            before: Some(&l.snap),
            refused: Vec::new(),
            walked: BTreeSet::new(),
            unlistable: Vec::new(),
            ways: Vec::new(),
            broken: Vec::new(),
        };
        let mut probe = Probe::default();
        let l_pats = parsed(&l.patterns);
        let mut venvs = l.snap.venvs.clone();
        let mut now: BTreeSet<OsString> = BTreeSet::new();
        for q in &l_roots {
            for rel in covered(&mut probe, q, &l_pats, &mut pass, &mut venvs) {
                now.insert(join(q, &rel).into_os_string());
            }
        }
        // Directories `l` could not list are removed whole by its restore.
        let gone: Vec<PathBuf> = pass.unlistable.iter().map(|(r, p)| join(r, p)).collect();
        for (abs, (_, _, st)) in self.entries.iter_mut() {
            if let Some((_, _, was)) = l.snap.entries.get(abs) {
                *st = was.clone();
            } else if now.contains(abs)
                || gone
                    .iter()
                    .any(|g| Path::new(abs).starts_with(g) && Path::new(abs) != g)
            {
                *st = State::Missing;
            } else {
                continue;
            }
            // What this run saw of the file may be `l`'s command's doing
            // (a second name it made): no link is taken as the user's.
            self.linked.remove(abs);
        }
        // The submodules' entries this run found through the index and
        // `.gitmodules` ([`super::gitlinks`]), which `l`'s command may have
        // written (a gitlink and its gitfile): where `l` protects the
        // repository's git directory and covers the path, an entry `l` did
        // not have was no submodule when `l` started, and `l`'s check after
        // its run moves it aside; so its baseline is missing, never what
        // `l`'s command wrote (review F2).
        if super::protects_git(&l.patterns) {
            for (root, before) in &self.git {
                if before.protect.is_empty() {
                    continue;
                }
                for (abs, (r, rel, st)) in self.entries.iter_mut() {
                    if r != root
                        || l.snap.entries.contains_key(abs)
                        || !l_roots.iter().any(|q| Path::new(abs).starts_with(q))
                    {
                        continue;
                    }
                    if before.protect.iter().any(|pat| matches(pat, rel)) {
                        *st = State::Missing;
                    }
                }
            }
        }
        for (abs, (_, _, was)) in &l.snap.entries {
            if self.entries.contains_key(abs) {
                continue;
            }
            let p = Path::new(abs);
            // The last root that covers it, as [`Snapshot::take`] keeps it.
            let found = roots.iter().rev().find_map(|r| {
                let rel = p.strip_prefix(r).ok()?;
                patterns
                    .iter()
                    .any(|pat| matches(pat, rel))
                    .then(|| (r.clone(), rel.to_path_buf()))
            });
            if let Some((r, rel)) = found {
                self.entries.insert(abs.clone(), (r, rel, was.clone()));
            }
        }
        for v in &l.snap.venvs {
            if roots.iter().any(|r| v.starts_with(r)) {
                self.venvs.insert(v.clone());
            }
        }
    }

    /// Bytes of content kept.
    fn content_bytes(&self) -> u64 {
        self.entries
            .values()
            .map(|(_, _, st)| match st {
                State::File { content, .. } => content.len() as u64,
                _ => 0,
            })
            .sum()
    }
}

fn io_err(e: Errno) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

/// `flock(LOCK_EX)`, waiting, again after a signal.
fn lock_ex(mut fd: OwnedFd) -> io::Result<Flock<OwnedFd>> {
    loop {
        match Flock::lock(fd, FlockArg::LockExclusive) {
            Ok(l) => return Ok(l),
            Err((f, Errno::EINTR)) => fd = f,
            Err((_, e)) => return Err(io_err(e)),
        }
    }
}

/// Opens the directory of the baselines: not through a symlink, the
/// user's own, nobody else's to write (made so when it is the user's).
fn open_dir(dir: &Path) -> io::Result<OwnedFd> {
    let fd = openat(
        nix::fcntl::AT_FDCWD,
        dir,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io_err)?;
    let st = fstat(&fd).map_err(io_err)?;
    let me = nix::unistd::geteuid().as_raw();
    if st.st_uid != me {
        return Err(io::Error::other(format!(
            "it belongs to uid {}, not to this user (uid {me})",
            st.st_uid
        )));
    }
    if st.st_mode & 0o077 != 0 {
        fchmod(&fd, Mode::from_bits_truncate(0o700)).map_err(io_err)?;
    }
    Ok(fd)
}

/// Where `fd` (a directory) is, symlinks resolved.
fn real_path(fd: &OwnedFd, spelled: &Path) -> PathBuf {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .ok()
        .filter(|p| p.is_absolute())
        .or_else(|| std::fs::canonicalize(spelled).ok())
        .unwrap_or_else(|| spelled.to_path_buf())
}

/// The names in `dir` (an open directory, listed from its start).
fn names(dir: &OwnedFd) -> io::Result<Vec<OsString>> {
    use crate::sandbox::fds::{dirents, getdents};
    // A fresh description: the listing starts at the first entry whatever
    // was read from `dir` before.
    let fd = openat(
        dir,
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io_err)?;
    let mut buf = vec![0u8; 4096];
    let mut out = Vec::new();
    loop {
        let n = getdents(fd.as_raw_fd(), &mut buf).map_err(io::Error::from_raw_os_error)?;
        if n == 0 {
            return Ok(out);
        }
        for (name, _) in dirents(&buf[..n]) {
            if name != b"." && name != b".." {
                out.push(OsStr::from_bytes(name).to_os_string());
            }
        }
    }
}

/// A name no other run picks.
fn unique(prefix: &str, suffix: &str) -> OsString {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    OsString::from(format!(
        "{prefix}{}-{:016x}{suffix}",
        std::process::id(),
        h.finish()
    ))
}

/// Another run's published file, as found under the lock.
enum Other {
    /// Its run is gone (the lock could be taken): removed. Its roots and
    /// pid when its header could be read (for the warning).
    Stale(Option<(Vec<PathBuf>, u32)>),
    /// Its run is active; its text.
    Active(Vec<u8>),
}

/// Looks at the published file `name`: removes it when its run is gone,
/// reads it (bounded, as the user's regular file) when it is active.
fn look(dir: &OwnedFd, name: &OsStr) -> Result<Other, String> {
    let fd = openat(
        dir,
        name,
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| format!("cannot be opened ({e})"))?;
    let fd = match Flock::lock(fd, FlockArg::LockExclusiveNonblock) {
        Ok(held) => {
            // Nobody holds it: its run ended without withdrawing it (it
            // was killed before its restore). Its header says where.
            let mut head = Vec::new();
            let whose = held
                .as_fd()
                .try_clone_to_owned()
                .ok()
                .map(std::fs::File::from)
                .and_then(|f| f.take(64 * 1024).read_to_end(&mut head).ok())
                .and_then(|_| {
                    let nl = head.iter().position(|b| *b == b'\n')?;
                    serde_json::from_slice::<Header>(&head[..nl]).ok()
                })
                .map(|h| (h.roots.into_iter().map(path_of).collect(), h.pid));
            let _ = unlinkat(dir, name, UnlinkatFlags::NoRemoveDir);
            drop(held);
            return Ok(Other::Stale(whose));
        }
        Err((fd, Errno::EWOULDBLOCK)) => fd,
        Err((_, e)) => return Err(format!("cannot be locked ({e})")),
    };
    let st = fstat(&fd).map_err(|e| format!("cannot be read ({e})"))?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err("not a regular file".into());
    }
    if st.st_uid != nix::unistd::geteuid().as_raw() {
        return Err(format!("it belongs to uid {}", st.st_uid));
    }
    let mut text = Vec::new();
    std::fs::File::from(fd)
        .take(MAX_FILE + 1)
        .read_to_end(&mut text)
        .map_err(|e| format!("cannot be read ({e})"))?;
    if text.len() as u64 > MAX_FILE {
        return Err(format!("larger than {MAX_FILE} bytes"));
    }
    Ok(Other::Active(text))
}

/// Why `dir` is not safe from the command: inside a writable root and
/// under no `deny_read` path (each as it resolves now; the directory was
/// made before the sandbox was planned, so an existing `deny_read` path
/// was denied).
fn writable_by_command(real: &Path, roots: &[PathBuf], deny_read: &[PathBuf]) -> Option<String> {
    let root = roots.iter().find(|r| real.starts_with(r))?;
    if deny_read
        .iter()
        .any(|d| std::fs::canonicalize(d).is_ok_and(|c| real.starts_with(c)))
    {
        return None;
    }
    Some(format!(
        "the protected files' shared baselines in {} would be writable by the command (inside the writable root {}, not in [paths] deny_read): add the state directory to deny_read (the built-in profiles have `{{state}}`) or move it (SAFE_EXEC_STATE_DIR) out of the writable roots, and run again",
        real.display(),
        root.display()
    ))
}

/// A snapshot that refuses the run.
fn refusal(why: String) -> Snapshot {
    Snapshot {
        refused: vec![why],
        ..Snapshot::default()
    }
}

/// Takes this run's baseline before its command starts, in the place of
/// [`Snapshot::take`], for a run whose published baselines live in `dir`
/// (`deny_read`: the run's, to check the command cannot write there).
/// With no other active run whose roots overlap, it is this run's own
/// snapshot; otherwise each such run's baseline wins for the paths that run
/// protects ([`Snapshot::adopt`]). The baseline is published before the
/// lock is let go, and stays until [`Shared::finish`].
///
/// `None`: the directory cannot be used (it cannot be made, or is not the
/// user's): a warning says so and the run's snapshot is its own, as when
/// runs did not share baselines. A refused snapshot (a bound, a malformed
/// baseline of an active run, a directory the command could write, a
/// baseline that cannot be published) publishes nothing.
pub fn begin(
    dir: &Path,
    roots: &[PathBuf],
    patterns: &[String],
    deny_read: &[PathBuf],
) -> (Snapshot, Option<Shared>) {
    let uncoordinated = |why: String| {
        eprintln!(
            "safe-exec: warning: protected files: {} cannot hold the baselines that concurrent runs share ({why}); this run's snapshot is its own, so a run in the same root at the same time can carry a change over; make the state directory the user's own and writable",
            dir.display()
        );
        let mut s = Snapshot::take(roots, patterns);
        s.notes.push(format!("shared baselines unavailable: {why}"));
        (s, None)
    };
    let d = match open_dir(dir) {
        Ok(d) => d,
        Err(e) => return uncoordinated(e.to_string()),
    };
    if let Some(why) = writable_by_command(&real_path(&d, dir), roots, deny_read) {
        return (refusal(why), None);
    }
    let lock = match openat(
        &d,
        "lock",
        OFlag::O_RDWR | OFlag::O_CREAT | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o600),
    ) {
        Ok(fd) => fd,
        Err(e) => return uncoordinated(format!("lock: {e}")),
    };
    let lock = match lock_ex(lock) {
        Ok(l) => l,
        Err(e) => return uncoordinated(format!("lock: {e}")),
    };
    let listed = match names(&d) {
        Ok(n) => n,
        Err(e) => return uncoordinated(format!("listing: {e}")),
    };
    let mut snap = Snapshot::take(roots, patterns);
    let mut active: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut killed: Vec<(Vec<PathBuf>, u32)> = Vec::new();
    for name in &listed {
        let b = name.as_bytes();
        if b.starts_with(b"tmp-") {
            // Only written under the lock, which this run holds: left by
            // a run that died writing it.
            let _ = unlinkat(&d, name.as_os_str(), UnlinkatFlags::NoRemoveDir);
            continue;
        }
        if !b.starts_with(b"run-") {
            continue;
        }
        let what = match look(&d, name) {
            Ok(Other::Stale(whose)) => {
                if let Some((their, pid)) = whose
                    && overlaps(&their, roots)
                {
                    killed.push((their, pid));
                }
                continue;
            }
            Ok(Other::Active(text)) => parse_header(&text)
                .map(|(h, _)| (h, text.clone()))
                .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        match what {
            Ok((h, text)) => {
                let their: Vec<PathBuf> = h.roots.into_iter().map(path_of).collect();
                if overlaps(&their, roots) {
                    snap.concurrent.extend(shared_parts(&their, roots));
                    active.push((h.started, text));
                }
            }
            Err(why) => {
                return (refusal(malformed(dir, name, &why)), None);
            }
        }
    }
    for (their, pid) in &killed {
        let w = format!(
            "a run in {} (pid {pid}) ended without putting its protected files back (killed before its restore): a change its command made to them may remain; check .git/config, .git/hooks/ and the other protected files there (this run does not restore to that run's baseline: it cannot tell such a change from your own edit since)",
            their
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        eprintln!("safe-exec: warning: {w}");
        snap.notes.push(w);
    }
    // Where baselines disagree, the oldest run's wins: adopted last.
    active.sort_by_key(|a| std::cmp::Reverse(a.0));
    for (_, text) in &active {
        match parse(text) {
            Ok(p) => snap.adopt(roots, patterns, &p),
            Err(why) => {
                return (refusal(malformed(dir, OsStr::new("run-*"), &why)), None);
            }
        }
    }
    if snap.content_bytes() > MAX_BYTES {
        snap.refused.push(format!(
            "the protected files of this run and of the runs active in the same roots hold more than {} MiB together: too much to keep, so a change could not be undone; wait for the other runs to end and run again",
            MAX_BYTES / (1024 * 1024)
        ));
    }
    if !snap.refused.is_empty() {
        return (snap, None);
    }
    match publish(&d, &snap, roots, patterns) {
        Ok((mine, name)) => {
            drop(lock);
            (snap, Some(Shared { dir: d, mine, name }))
        }
        Err(e) => (
            refusal(format!(
                "the protected files' baseline could not be recorded in {} ({e}), so a run in the same root at the same time could carry a change over; free space there or make it writable, and run again",
                dir.display()
            )),
            None,
        ),
    }
}

/// The message for a baseline of an active run that cannot be used.
fn malformed(dir: &Path, name: &OsStr, why: &str) -> String {
    format!(
        "the protected files' baseline {} of a run still active is unusable ({why}), so this run cannot know what that run will restore; wait for the other safe-exec runs to end (or end them), then remove the file and run again",
        dir.join(name).display()
    )
}

/// Writes this run's baseline: a new `tmp-` file, locked, then renamed to
/// its `run-` name (readers only look under the lock, which the caller
/// holds; the rename keeps a run that dies writing from leaving a `run-`
/// file half written).
fn publish(
    d: &OwnedFd,
    snap: &Snapshot,
    roots: &[PathBuf],
    patterns: &[String],
) -> io::Result<(Flock<OwnedFd>, OsString)> {
    let text = serialize(snap, roots, patterns)?;
    // What a reader would refuse (and with it every run that starts while
    // this one is active) is not published: this run is refused instead
    // (review N3).
    if text.len() as u64 > MAX_FILE {
        return Err(io::Error::other(format!(
            "the baseline would be {} bytes, more than the {MAX_FILE} another run reads",
            text.len()
        )));
    }
    let tmp = unique("tmp-", "");
    let name = unique("run-", ".json");
    let fd = openat(
        d,
        tmp.as_os_str(),
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )
    .map_err(io_err)?;
    let held = match Flock::lock(fd, FlockArg::LockExclusiveNonblock) {
        Ok(h) => h,
        Err((_, e)) => {
            let _ = unlinkat(d, tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
            return Err(io_err(e));
        }
    };
    let written = (|| -> io::Result<()> {
        let mut f = std::fs::File::from(held.as_fd().try_clone_to_owned()?);
        f.write_all(&text)?;
        renameat(d, tmp.as_os_str(), d, name.as_os_str()).map_err(io_err)
    })();
    if let Err(e) = written {
        let _ = unlinkat(d, tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
        return Err(e);
    }
    Ok((held, name))
}

impl Shared {
    /// After the whole tree has exited: under the lock, restores against
    /// this run's baseline, then withdraws it. A run still active whose
    /// roots overlap makes the report say the change may be that run's.
    pub fn finish(
        self,
        snap: &mut Snapshot,
        roots: &[PathBuf],
        patterns: &[String],
    ) -> Vec<String> {
        let lock = openat(
            &self.dir,
            "lock",
            OFlag::O_RDWR | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(io_err)
        .and_then(lock_ex);
        if lock.is_ok() {
            for name in names(&self.dir).unwrap_or_default() {
                if name == self.name || !name.as_bytes().starts_with(b"run-") {
                    continue;
                }
                if let Ok(Other::Active(text)) = look(&self.dir, &name)
                    && let Ok((h, _)) = parse_header(&text)
                {
                    let their: Vec<PathBuf> = h.roots.into_iter().map(path_of).collect();
                    snap.concurrent.extend(shared_parts(&their, roots));
                }
            }
        }
        let out = snap.restore(roots, patterns);
        let _ = unlinkat(&self.dir, self.name.as_os_str(), UnlinkatFlags::NoRemoveDir);
        drop(self.mine);
        drop(lock);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn pats(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    /// A root with a repository's protected files, and a state directory.
    fn world() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let d = tempfile::tempdir().expect("tmp");
        let base = fs::canonicalize(d.path()).expect("canon");
        let root = base.join("root");
        fs::create_dir_all(root.join(".git/hooks")).expect("mk");
        fs::write(root.join(".git/config"), "[core]\n").expect("w");
        fs::write(root.join(".git/hooks/pre-push.sample"), "sample").expect("w");
        let dir = base.join("state/protect");
        prepare_dir(&dir);
        (d, root, dir)
    }

    const PATS: &[&str] = &[
        ".git/config",
        ".git/hooks/",
        ".envrc",
        "**/site-packages/*.pth",
    ];

    #[test]
    fn a_published_baseline_reads_back_as_taken() {
        let (_d, root, _) = world();
        fs::write(root.join(".envrc"), [0u8, 1, 0xff, b'\n']).expect("w");
        std::os::unix::fs::symlink("/nowhere", root.join(".git/hooks/x")).expect("ln");
        let roots = vec![root.clone()];
        let p = pats(PATS);
        let snap = Snapshot::take(&roots, &p);
        let text = serialize(&snap, &roots, &p).expect("ser");
        let back = parse(&text).expect("parse");
        assert_eq!(back.roots, roots);
        assert_eq!(back.patterns, p);
        assert_eq!(back.snap.entries, snap.entries);
        assert_eq!(back.snap.venvs, snap.venvs);
        assert_eq!(back.snap.walked, snap.walked);
        assert_eq!(back.snap.root_ids, snap.root_ids);
    }

    #[test]
    fn malformed_baselines_are_refused() {
        let (_d, root, _) = world();
        let roots = vec![root.clone()];
        let p = pats(PATS);
        let text = serialize(&Snapshot::take(&roots, &p), &roots, &p).expect("ser");
        let s = String::from_utf8(text.clone()).expect("utf8");
        let rel = hex_path(Path::new(".git/config"));
        let rel = serde_json::to_string(&rel).expect("j");
        let dotdot = serde_json::to_string(&hex_path(Path::new("../x"))).expect("j");
        for (what, bad) in [
            ("truncated", s[..s.len() / 2].to_string()),
            ("no body", s.lines().next().unwrap_or("").to_string()),
            ("version", s.replacen("{\"v\":1", "{\"v\":2", 1)),
            ("escaping path", s.replacen(&rel, &dotdot, 1)),
            ("bad hex", s.replacen(&rel, "\"zz\"", 1)),
            (
                "unknown field",
                s.replacen("{\"v\":1", "{\"x\":0,\"v\":1", 1),
            ),
            ("content past the end", format!("{s}x")),
            ("content cut short", s[..s.len() - 1].to_string()),
        ] {
            assert_ne!(bad, s, "{what}: the test changed nothing");
            assert!(parse(bad.as_bytes()).is_err(), "{what}");
        }
        // Positive control.
        assert!(parse(&text).is_ok());
    }

    /// The carry-over: B starts while A's command has planted a hook and
    /// changed `.git/config`; A's restore undoes them; B's must not put
    /// them back.
    #[test]
    fn a_second_run_restores_to_the_first_runs_baseline() {
        let (_d, root, dir) = world();
        let roots = vec![root.clone()];
        let p = pats(PATS);
        let (mut a, sa) = begin(&dir, &roots, &p, &[]);
        let sa = sa.expect("shared");
        assert!(a.concurrent.is_empty());
        fs::write(root.join(".git/hooks/pre-commit"), "evil").expect("w");
        fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = evil\n").expect("w");
        fs::remove_file(root.join(".git/hooks/pre-push.sample")).expect("rm");
        let (mut b, sb) = begin(&dir, &roots, &p, &[]);
        let sb = sb.expect("shared");
        assert!(b.refused.is_empty(), "{:?}", b.refused);
        assert!(!b.concurrent.is_empty());
        let out_a = sa.finish(&mut a, &roots, &p);
        assert_eq!(out_a.len(), 3, "{out_a:?}");
        let out_b = sb.finish(&mut b, &roots, &p);
        assert!(out_b.is_empty(), "{out_b:?}");
        assert!(!root.join(".git/hooks/pre-commit").exists());
        assert_eq!(fs::read(root.join(".git/config")).expect("r"), b"[core]\n");
        assert!(root.join(".git/hooks/pre-push.sample").exists());
        // Nothing left published.
        let left: Vec<_> = fs::read_dir(&dir)
            .expect("ls")
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != "lock")
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    /// Review of round eight: run A's command links `.git/config` to a name
    /// of its own; run B starts then (and sees that file with a link count
    /// of two); A's restore gives `.git/config` an inode of its own; B's
    /// command moves A's linked file back, with a second name again. B must
    /// not take the link it saw at its start as the user's.
    #[test]
    fn a_link_made_by_a_concurrent_run_is_not_taken_as_the_users() {
        use std::os::unix::fs::MetadataExt;
        let (_d, root, dir) = world();
        let roots = vec![root.clone()];
        let p = pats(PATS);
        let (mut a, sa) = begin(&dir, &roots, &p, &[]);
        let sa = sa.expect("shared");
        fs::hard_link(root.join(".git/config"), root.join("x")).expect("ln");
        let (mut b, sb) = begin(&dir, &roots, &p, &[]);
        let sb = sb.expect("shared");
        assert!(b.refused.is_empty(), "{:?}", b.refused);
        let out_a = sa.finish(&mut a, &roots, &p);
        assert_eq!(out_a.len(), 1, "{out_a:?}");
        assert_eq!(
            fs::metadata(root.join(".git/config")).expect("m").nlink(),
            1
        );
        // B's command puts A's linked file back under the protected name,
        // with a second name: the very file and link count B saw at its
        // start.
        fs::hard_link(root.join("x"), root.join("y")).expect("ln");
        fs::rename(root.join("x"), root.join(".git/config")).expect("mv");
        let out_b = sb.finish(&mut b, &roots, &p);
        assert_eq!(out_b.len(), 1, "{out_b:?}");
        let (m, y) = (
            fs::metadata(root.join(".git/config")).expect("m"),
            fs::metadata(root.join("y")).expect("m"),
        );
        assert_eq!(m.nlink(), 1);
        assert_ne!(m.ino(), y.ino());
    }

    /// Review F2: run A's command registers a gitlink with a gitfile naming
    /// a repository it controls; run B starts then, and its submodule
    /// lookup finds the new gitlink in the index. A's check moves the
    /// gitfile aside when A ends; B's restore must not put it back (it did:
    /// B took the planted gitfile as its baseline), whichever ends first.
    #[test]
    fn a_gitlink_planted_by_a_concurrent_run_is_not_put_back() {
        use super::super::gitlinks::tests_support::World;
        for a_ends_first in [true, false] {
            let w = World::new();
            let p = w.patterns();
            let roots = vec![w.sup.clone()];
            let dir = w.base.join("state/protect");
            prepare_dir(&dir);
            let sha = w.head(&w.sup.join("sub"));
            let evil = w.evil_gitdir();
            let (mut a, sa) = begin(&dir, &roots, &p, &[]);
            let sa = sa.expect("shared");
            assert!(a.refused.is_empty(), "{:?}", a.refused);
            // A's command.
            w.plant_gitlink(&w.sup, &sha, "n1", &format!("gitdir: {}\n", evil.display()));
            assert!(w.status_runs_canary(), "the attack itself (control)");
            let (mut b, sb) = begin(&dir, &roots, &p, &[]);
            let sb = sb.expect("shared");
            assert!(b.refused.is_empty(), "{:?}", b.refused);
            let (out_first, out_second) = if a_ends_first {
                let oa = sa.finish(&mut a, &roots, &p);
                (oa, sb.finish(&mut b, &roots, &p))
            } else {
                let ob = sb.finish(&mut b, &roots, &p);
                (ob, sa.finish(&mut a, &roots, &p))
            };
            assert!(
                fs::symlink_metadata(w.sup.join("n1/.git")).is_err(),
                "a_ends_first {a_ends_first}: {out_first:?} {out_second:?}"
            );
            assert!(
                !w.status_runs_canary(),
                "a_ends_first {a_ends_first}: {out_first:?} {out_second:?}"
            );
            // Positive control: the existing submodule is untouched.
            assert!(w.sup.join("sub/.git").is_file());
        }
    }

    #[test]
    fn a_baseline_nobody_holds_is_ignored() {
        let (_d, root, dir) = world();
        let roots = vec![root.clone()];
        let p = pats(PATS);
        // A run that died: its file stays, its lock is gone.
        let (_a, sa) = begin(&dir, &roots, &p, &[]);
        let sa = sa.expect("shared");
        drop(sa);
        assert_eq!(fs::read_dir(&dir).expect("ls").count(), 2);
        // The user's own edit between runs is the next run's baseline.
        fs::write(root.join(".git/config"), "[user]\n\tname = me\n").expect("w");
        let (mut b, sb) = begin(&dir, &roots, &p, &[]);
        assert!(b.concurrent.is_empty());
        assert!(
            b.notes
                .iter()
                .any(|n| n.contains("ended without putting its protected files back")),
            "{:?}",
            b.notes
        );
        let out = sb.expect("shared").finish(&mut b, &roots, &p);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(
            fs::read(root.join(".git/config")).expect("r"),
            b"[user]\n\tname = me\n"
        );
        assert_eq!(fs::read_dir(&dir).expect("ls").count(), 1);
    }

    #[test]
    fn overlapping_roots_share_the_venvs() {
        // A's root holds B's: a venv two levels below A's root is one
        // below B's, protected by both.
        let (_d, root, dir) = world();
        let sub = root.join("sub");
        let sp = sub.join(".venv/lib/python3.12/site-packages");
        fs::create_dir_all(&sp).expect("mk");
        fs::write(sub.join(".venv/pyvenv.cfg"), "home = /usr\n").expect("w");
        let p = pats(PATS);
        let ra = vec![root.clone()];
        let rb = vec![sub.clone()];
        let (mut a, sa) = begin(&dir, &ra, &p, &[]);
        fs::write(sp.join("evil.pth"), "import os").expect("w");
        let (mut b, sb) = begin(&dir, &rb, &p, &[]);
        assert!(!b.concurrent.is_empty());
        let out_a = sa.expect("a").finish(&mut a, &ra, &p);
        assert_eq!(out_a.len(), 1, "{out_a:?}");
        let out_b = sb.expect("b").finish(&mut b, &rb, &p);
        assert!(out_b.is_empty(), "{out_b:?}");
        assert!(!sp.join("evil.pth").exists());
        // Control: roots that do not overlap do not share.
        let other = root.parent().expect("parent").join("other");
        fs::create_dir_all(&other).expect("mk");
        let ro = vec![other.clone()];
        let (a, sa) = begin(&dir, &ra, &p, &[]);
        let (b, sb) = begin(&dir, &ro, &p, &[]);
        assert!(a.concurrent.is_empty() && b.concurrent.is_empty());
        drop((sa, sb));
    }

    #[test]
    fn a_directory_the_command_could_write_refuses() {
        let (_d, root, _) = world();
        let dir = root.join("state/protect");
        prepare_dir(&dir);
        let roots = vec![root.clone()];
        let p = pats(PATS);
        let (s, sh) = begin(&dir, &roots, &p, &[]);
        assert!(sh.is_none());
        assert_eq!(s.refused.len(), 1, "{:?}", s.refused);
        assert!(s.refused[0].contains("deny_read"), "{:?}", s.refused);
        // Control: denied, it is used.
        let (s, sh) = begin(&dir, &roots, &p, &[root.join("state")]);
        assert!(s.refused.is_empty(), "{:?}", s.refused);
        assert!(sh.is_some());
    }
}
