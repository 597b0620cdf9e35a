//! The restore's writes, by descriptor (F3): nothing is done by path in a
//! directory the sandbox can write. Each parent is opened from the root
//! one component at a time with `O_PATH|O_DIRECTORY|O_NOFOLLOW` (a symlink
//! or a file planted on the way is never followed), and every change is
//! made relative to that descriptor: `openat(O_CREAT|O_EXCL|O_NOFOLLOW)`
//! of an unpredictable temporary name, `fchmod` of the descriptor,
//! `renameat`, `unlinkat`, `mkdirat`, `symlinkat`, `mkfifoat`. A process
//! still running in the roots (another confined command of the same agent)
//! can rename or replace entries while this runs; the worst it gets is a
//! restore that fails (reported), never a write, chmod or removal outside
//! the directory that was verified, or a symlink where a file was put back.

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat, renameat};
use nix::sys::stat::{FileStat, Mode, SFlag, fchmod, fstat, fstatat, mkdirat};
use nix::unistd::{UnlinkatFlags, mkfifoat, symlinkat, unlinkat};
use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

fn io(e: Errno) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

const DIR_PATH: OFlag = OFlag::O_PATH
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);
const DIR_READ: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

/// Opens the writable root itself (its last component must not be a
/// symlink) and checks it is still the directory the snapshot saw
/// (`dev`, `ino`): with nested roots (a project inside TMPDIR) the outer
/// root's command could have moved the inner one away and put another
/// directory in its place.
pub fn open_root(root: &Path, id: Option<(u64, u64)>) -> io::Result<OwnedFd> {
    let fd = openat(nix::fcntl::AT_FDCWD, root, DIR_PATH, Mode::empty()).map_err(io)?;
    if let Some((dev, ino)) = id {
        let st = fstat(&fd).map_err(io)?;
        if (st.st_dev, st.st_ino) != (dev, ino) {
            return Err(io::Error::other(
                "the writable root was replaced by another directory during the run",
            ));
        }
    }
    Ok(fd)
}

/// What to do with an ancestor that is not a real directory.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ancestors {
    /// Putting a path back: a missing ancestor is made, a symlink or file
    /// in its place is replaced by an empty directory.
    Make,
    /// Removing a path: a missing ancestor means nothing to remove (`None`);
    /// a symlink or file in its place is replaced by an empty directory (the
    /// protected path was reachable through it).
    Fix,
}

/// The components of `rel` (a path relative to a root: only normal ones).
fn parts(rel: &Path) -> io::Result<Vec<&OsStr>> {
    rel.components()
        .map(|c| match c {
            Component::Normal(s) => Ok(s),
            _ => Err(io::Error::other("not a plain relative path")),
        })
        .collect()
}

/// Opens `name` in `dir` as a directory without following a symlink.
fn open_dir(dir: BorrowedFd<'_>, name: &OsStr, flags: OFlag) -> Result<OwnedFd, Errno> {
    openat(dir, name, flags, Mode::empty())
}

/// The parent directory of `rel` under `root` (opened component by
/// component, never through a symlink) and `rel`'s last component.
/// `Ok(None)`: an ancestor is missing and `how` is [`Ancestors::Fix`].
pub fn open_parent<'a>(
    root: BorrowedFd<'_>,
    rel: &'a Path,
    how: Ancestors,
) -> io::Result<Option<(OwnedFd, &'a OsStr)>> {
    let comps = parts(rel)?;
    let Some((last, dirs)) = comps.split_last() else {
        return Err(io::Error::other("empty path"));
    };
    let mut cur = nix::unistd::dup(root).map_err(io)?;
    for c in dirs {
        let next = match open_dir(cur.as_fd(), c, DIR_PATH) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) if how == Ancestors::Fix => return Ok(None),
            Err(Errno::ENOENT) => {
                mkdir(cur.as_fd(), c)?;
                open_dir(cur.as_fd(), c, DIR_PATH).map_err(io)?
            }
            // A symlink (O_PATH|O_NOFOLLOW opens the link itself, and
            // O_DIRECTORY refuses it), a file, a FIFO: replaced by an
            // empty directory.
            Err(Errno::ENOTDIR | Errno::ELOOP) => {
                match unlinkat(cur.as_fd(), *c, UnlinkatFlags::NoRemoveDir) {
                    Ok(()) | Err(Errno::ENOENT) => {}
                    Err(e) => return Err(io(e)),
                }
                mkdir(cur.as_fd(), c)?;
                open_dir(cur.as_fd(), c, DIR_PATH).map_err(io)?
            }
            Err(e) => return Err(io(e)),
        };
        cur = next;
    }
    Ok(Some((cur, last)))
}

fn mkdir(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    match mkdirat(dir, name, Mode::from_bits_truncate(0o777)) {
        Ok(()) | Err(Errno::EEXIST) => Ok(()),
        Err(e) => Err(io(e)),
    }
}

/// A name no other process can guess: 64 bits from the OS's random source
/// (std seeds each `RandomState` from it), so a planted entry cannot be
/// waiting at it; `O_EXCL` refuses one anyway.
fn temp_name(name: &OsStr) -> OsString {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    let mut s = OsString::from(".");
    s.push(name);
    s.push(format!(".safe-exec-{:016x}", h.finish()));
    s
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`; `None` when missing.
fn lstat_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Option<FileStat>> {
    match fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(st)),
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => Err(io(e)),
    }
}

fn is_dir(st: &FileStat) -> bool {
    SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR
}

/// Directory levels removed in place before a deeper subtree is moved up
/// beside the top (each level holds a descriptor open).
const DEPTH: usize = 32;

/// Removes `name` in `dir`, whatever it is; a directory with everything in
/// it, by descriptor, at any depth (a subtree deeper than [`DEPTH`] is
/// renamed beside the top entry under a random name and removed from there,
/// so descriptors stay bounded). Missing: nothing to do.
pub fn remove(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let mut later: Vec<OsString> = Vec::new();
    remove_in(dir, dir, name, 0, &mut later)?;
    // Moved-up subtrees; each may move up more, all into `dir`.
    let mut rounds = 0usize;
    while let Some(n) = later.pop() {
        rounds += 1;
        if rounds > 1_000_000 {
            return Err(io::Error::other("too many nested directories to remove"));
        }
        remove_in(dir, dir, &n, 0, &mut later)?;
    }
    Ok(())
}

fn remove_in(
    top: BorrowedFd<'_>,
    dir: BorrowedFd<'_>,
    name: &OsStr,
    depth: usize,
    later: &mut Vec<OsString>,
) -> io::Result<()> {
    // Entries can be added while this runs (another confined command):
    // a few tries, then the error.
    for _ in 0..4 {
        let Some(st) = lstat_at(dir, name)? else {
            return Ok(());
        };
        if !is_dir(&st) {
            return match unlinkat(dir, name, UnlinkatFlags::NoRemoveDir) {
                Ok(()) | Err(Errno::ENOENT) => Ok(()),
                Err(Errno::EISDIR) => continue,
                Err(e) => Err(io(e)),
            };
        }
        if depth >= DEPTH {
            let up = temp_name(name);
            renameat(dir, name, top, up.as_os_str()).map_err(io)?;
            later.push(up);
            return Ok(());
        }
        let fd = match open_dir(dir, name, DIR_READ) {
            Ok(fd) => fd,
            Err(Errno::ENOTDIR | Errno::ELOOP | Errno::ENOENT) => continue,
            // A directory its owner cannot read (mode 000, made by the
            // command): opened without reading (O_PATH) and given 0700
            // through that descriptor, then listed.
            Err(Errno::EACCES) => {
                chmod_path_fd(open_dir(dir, name, DIR_PATH).map_err(io)?, 0o700)?;
                continue;
            }
            Err(e) => return Err(io(e)),
        };
        let names = list(&fd)?;
        for n in names {
            remove_in(top, fd.as_fd(), &n, depth + 1, later)?;
        }
        match unlinkat(dir, name, UnlinkatFlags::RemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => return Ok(()),
            Err(Errno::ENOTEMPTY | Errno::EEXIST | Errno::ENOTDIR) => continue,
            Err(e) => return Err(io(e)),
        }
    }
    Err(io::Error::other(
        "its content kept changing while it was removed",
    ))
}

/// The names in a directory opened for reading (not `.`/`..`).
pub fn list(fd: &OwnedFd) -> io::Result<Vec<OsString>> {
    let dup = nix::unistd::dup(fd).map_err(io)?;
    let mut d = nix::dir::Dir::from_fd(dup).map_err(io)?;
    let mut out = Vec::new();
    for e in d.iter() {
        let e = e.map_err(io)?;
        let n = e.file_name().to_bytes();
        if n != b"." && n != b".." {
            out.push(OsStr::from_bytes(n).to_os_string());
        }
    }
    Ok(out)
}

/// Moves `tmp` onto `name` in `dir`; a directory in the way is removed
/// first. `tmp` is removed when that fails.
fn replace(dir: BorrowedFd<'_>, tmp: &OsStr, name: &OsStr) -> io::Result<()> {
    let mut r = renameat(dir, tmp, dir, name);
    if matches!(r, Err(Errno::EISDIR | Errno::ENOTEMPTY | Errno::EEXIST)) {
        r = remove(dir, name)
            .map_err(|_| Errno::EISDIR)
            .and_then(|()| renameat(dir, tmp, dir, name));
    }
    r.map_err(|e| {
        let _ = unlinkat(dir, tmp, UnlinkatFlags::NoRemoveDir);
        io(e)
    })
}

/// Creates a fresh temporary entry in `dir` with `make` (which must fail
/// with `EEXIST` on a taken name) and returns its name.
fn fresh<T>(
    name: &OsStr,
    mut make: impl FnMut(&OsStr) -> Result<T, Errno>,
) -> io::Result<(OsString, T)> {
    for _ in 0..8 {
        let tmp = temp_name(name);
        match make(&tmp) {
            Ok(v) => return Ok((tmp, v)),
            Err(Errno::EEXIST) => continue,
            Err(e) => return Err(io(e)),
        }
    }
    Err(io::Error::other("no free temporary name"))
}

/// Puts a regular file back: written to a new file that only this process
/// created (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600 until `fchmod`), then
/// renamed over whatever is at `name`.
///
/// The temporary name is in a directory the sandbox can write: another
/// confined command still running can see it (readdir) and swap it for a
/// symlink before the rename. The rename then moves that symlink onto
/// `name` (inside the verified directory, never a write elsewhere), and the
/// check after it, `name` is the inode this process wrote, sees it: tried
/// again, then an error.
pub fn put_file(dir: BorrowedFd<'_>, name: &OsStr, content: &[u8], mode: u32) -> io::Result<()> {
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    // A concurrent run's command swapping the temporary file for a symlink
    // in a tight loop won four tries in a row on a loaded 2-vCPU machine
    // (CI, `rt5_f3_restore_races_never_reach_outside`): what it renamed
    // in stays until a later try wins, and that command's own run restores
    // the file when it ends.
    for _ in 0..16 {
        let (tmp, fd) = fresh(name, |t| {
            openat(dir, t, flags, Mode::from_bits_truncate(0o600))
        })?;
        let f = std::fs::File::from(fd);
        let written = (|| {
            (&f).write_all(content)?;
            fchmod(f.as_fd(), Mode::from_bits_truncate(mode & 0o7777)).map_err(io)?;
            fstat(f.as_fd()).map_err(io)
        })();
        let mine = match written {
            Ok(st) => st,
            Err(e) => {
                let _ = unlinkat(dir, tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
                return Err(e);
            }
        };
        replace(dir, &tmp, name)?;
        match lstat_at(dir, name)? {
            Some(st) if (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino) => return Ok(()),
            _ => continue,
        }
    }
    Err(io::Error::other(
        "it kept being replaced while it was put back (another command is writing it)",
    ))
}

/// Puts a symlink back (made under a temporary name, renamed over).
pub fn put_symlink(dir: BorrowedFd<'_>, name: &OsStr, target: &Path) -> io::Result<()> {
    let (tmp, ()) = fresh(name, |t| symlinkat(target, dir, t))?;
    replace(dir, &tmp, name)?;
    match nix::fcntl::readlinkat(dir, name) {
        Ok(t) if t == target.as_os_str() => Ok(()),
        _ => Err(io::Error::other(
            "it was replaced while it was put back (another command is writing it)",
        )),
    }
}

/// Puts a FIFO back (made under a temporary name, renamed over).
pub fn put_fifo(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<()> {
    let (tmp, ()) = fresh(name, |t| {
        mkfifoat(dir, t, Mode::from_bits_truncate(mode & 0o7777))
    })?;
    replace(dir, &tmp, name)
}

/// Puts a directory back: the one there (a real directory) keeps its
/// content and gets `mode`; anything else is removed and an empty
/// directory made. The mode is set through a descriptor of the directory
/// itself.
pub fn put_dir(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<()> {
    for _ in 0..4 {
        match lstat_at(dir, name)? {
            Some(st) if is_dir(&st) => {}
            Some(_) => remove(dir, name)?,
            None => {}
        }
        if lstat_at(dir, name)?.is_none() {
            match mkdirat(dir, name, Mode::from_bits_truncate(0o700)) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(e) => return Err(io(e)),
            }
        }
        match open_dir(dir, name, DIR_READ) {
            Ok(fd) => {
                return fchmod(fd.as_fd(), Mode::from_bits_truncate(mode & 0o7777)).map_err(io);
            }
            // An unprivileged owner may not read its own directory (mode
            // 0311): the descriptor of the directory itself (O_PATH) is
            // named through /proc, which resolves to that inode, never
            // by the path in the roots.
            Err(Errno::EACCES) => {
                return chmod_path_fd(open_dir(dir, name, DIR_PATH).map_err(io)?, mode);
            }
            Err(Errno::ENOTDIR | Errno::ELOOP | Errno::ENOENT) => continue,
            Err(e) => return Err(io(e)),
        }
    }
    Err(io::Error::other(
        "it kept being replaced while it was put back",
    ))
}

/// `chmod` of what an `O_PATH` descriptor names (`fchmod` refuses one):
/// through `/proc/self/fd/N`, which resolves to that inode, never by its
/// path in the roots.
fn chmod_path_fd(fd: OwnedFd, mode: u32) -> io::Result<()> {
    let proc = format!("/proc/self/fd/{}", fd.as_raw_fd());
    nix::sys::stat::fchmodat(
        nix::fcntl::AT_FDCWD,
        proc.as_str(),
        Mode::from_bits_truncate(mode & 0o7777),
        nix::sys::stat::FchmodatFlags::FollowSymlink,
    )
    .map_err(io)
}
