//! The policy's view of one command string before any segment is judged:
//! the profile and roots it is judged against, whether it runs confined,
//! and what the string itself writes and links (redirection targets,
//! heredoc text, `ln -s` links), so later segments are checked where their
//! paths really lead.

use std::path::{Path, PathBuf};

use super::Profile;
use super::args::parse_args;
use super::{confined, paths, registry};
use crate::parse::{CommandModel, Segment, Word};
use paths::Roots;

/// What the policy needs besides the model.
pub struct PolicyContext<'a> {
    /// The loaded profile.
    pub profile: &'a Profile,
    /// Its roots with placeholders resolved.
    pub roots: &'a Roots,
    /// A person typed this at a terminal (critical rules ask instead of deny).
    pub interactive: bool,
    /// The command runs inside the sandbox with the profile's enforcement
    /// achieved: what the kernel contains runs without asking. `false` when
    /// nothing confines it (`hook` without `--rewrite`, `check
    /// --unconfined`): whatever is not fully seen through asks.
    pub confined: bool,
    /// Files written by redirections in this command (filled by
    /// [`evaluate`](super::evaluate)): running one of them in the same string cannot be checked.
    pub written: Vec<PathBuf>,
    /// Files written by the segments checked so far (operands, option
    /// values, redirections), in order: unconfined, a later segment that
    /// runs or loads one of them runs what the policy never saw.
    pub writes_seen: std::cell::RefCell<Vec<PathBuf>>,
    /// How many of [`Self::writes_seen`] the segments before the one being
    /// judged wrote (set by [`evaluate`](super::evaluate) before each
    /// segment): the current segment's own writes are not "earlier".
    pub seen_before: std::cell::Cell<usize>,
    /// Where the segments judged so far put a copied or moved source, and
    /// the source (`cp -r x y`: (`y`, `x`); `mv x y/`: (`y/x`, `x`)): what
    /// a later copy of such a path holds was not on disk when the command
    /// was decided (review 12, F19).
    pub trees_landed: std::cell::RefCell<Vec<(PathBuf, PathBuf)>>,
    /// Unconfined: a path of the segment being judged has a `..` after a
    /// component that an earlier segment of the string may have made a
    /// link by copying or moving one (`mv a/s b/s && tee b/s/../.envrc`):
    /// where the `..` leads is not known (review 12, F3). Taken after each
    /// segment by [`evaluate`](super::evaluate).
    pub dots_unknown: std::cell::RefCell<Option<PathBuf>>,
    /// Symbolic links made earlier in this command (`ln -s TARGET LINK`),
    /// link path to target (filled by [`evaluate`](super::evaluate)): later paths through the
    /// link are checked where they really lead.
    pub links: Vec<Link>,
    /// What those redirections write, where the command shows it (a
    /// heredoc, `echo`/`printf` arguments), by file (filled by
    /// [`evaluate`](super::evaluate)): a script written and run in one string is checked.
    pub written_text: Vec<(PathBuf, String)>,
    /// What [`paths::resolve`] answered in this decision, by (directory,
    /// path): the several checks of one operand (the path check, the
    /// write log, a glob's pattern) and the same operand in several
    /// segments ask once. Nothing runs while a command is decided, so the
    /// filesystem cannot change between two asks of one decision; the memo
    /// lives in this context, made afresh for every decision (see
    /// [`PolicyContext::for_command`]), so the next decision asks the
    /// filesystem again.
    pub resolved: std::cell::RefCell<PathMemo>,
    /// Variables the string sets only ever to `$!` (`PID=$!`), and in no
    /// other way (`read`, `for`, `declare`): `kill $PID` signals a process
    /// this command started, like `kill $!` (filled by
    /// [`evaluate`](super::evaluate)).
    pub job_vars: Vec<String>,
    /// Variables the string sets to a value starting with `-` (`X=-1`):
    /// `kill $X` signals a process group or every process (filled by
    /// [`evaluate`](super::evaluate)).
    pub negative_vars: Vec<String>,
    /// The string runs `shopt`: `dotglob` (a glob's `*` matches leading
    /// dots) and `nocaseglob` may be on, so a glob is matched with both.
    pub shopt: bool,
    /// Unconfined: the caller's `PATH` in order, up to the last entry
    /// inside a writable root (an activated venv's `bin`, `node_modules/.bin`,
    /// a relative or empty entry: the cwd); empty when no entry is inside a
    /// root, or confined ([`super::program_path::CallerPath`]).
    pub path_dirs: super::program_path::CallerPath,
    /// Directories this string makes repositories (`git init X`, `git
    /// clone URL X`, `git worktree add X`; review 11 F9): a later write
    /// of the string below one is judged as in a nested repository.
    pub made_repos: Vec<PathBuf>,
}

/// [`PolicyContext::resolved`]: the answers in the order they were asked,
/// each under the index of its directory (a decision's paths share one or
/// two directories, kept once) and its path as written. A few answers are
/// searched in turn; past [`PathMemo::INDEXED`] answers a hash index files
/// them by (directory, path), so a long command's thousands of operands
/// cost one look each, not a scan of every earlier answer (a string of
/// 20,000 operands took seconds and could reach the deciding time bound).
#[derive(Debug, Default)]
pub struct PathMemo {
    /// The directories asked about, each once.
    dirs: Vec<PathBuf>,
    /// (index in `dirs`, path, answer).
    answers: Vec<(usize, String, PathBuf)>,
    /// By hash of (directory index, path): indices in `answers`. Built
    /// when the answers outgrow a scan.
    index: std::collections::HashMap<u64, Vec<usize>>,
}

impl PathMemo {
    /// Answers searched in turn before the hash index is used.
    const INDEXED: usize = 16;

    fn key(dir: usize, p: &str) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        dir.hash(&mut h);
        p.hash(&mut h);
        h.finish()
    }

    fn dir(&self, cwd: &Path) -> Option<usize> {
        self.dirs
            .iter()
            .position(|d| d.as_os_str() == cwd.as_os_str())
    }

    fn get(&self, cwd: &Path, p: &str) -> Option<PathBuf> {
        let dir = self.dir(cwd)?;
        let same = |i: &usize| {
            let (d, q, _) = &self.answers[*i];
            *d == dir && q == p
        };
        let i = if self.answers.len() <= Self::INDEXED {
            (0..self.answers.len()).find(same)?
        } else {
            *self
                .index
                .get(&Self::key(dir, p))?
                .iter()
                .find(|i| same(i))?
        };
        Some(self.answers[i].2.clone())
    }

    fn insert(&mut self, cwd: &Path, p: &str, r: PathBuf) {
        let dir = match self.dir(cwd) {
            Some(d) => d,
            None => {
                self.dirs.push(cwd.to_path_buf());
                self.dirs.len() - 1
            }
        };
        self.answers.push((dir, p.to_string(), r));
        let n = self.answers.len();
        if n == Self::INDEXED + 1 {
            // Index every answer so far, then each new one as it comes.
            for (i, (d, q, _)) in self.answers.iter().enumerate() {
                self.index.entry(Self::key(*d, q)).or_default().push(i);
            }
        } else if n > Self::INDEXED + 1 {
            self.index.entry(Self::key(dir, p)).or_default().push(n - 1);
        }
    }
}

/// A symbolic link the command makes, and the `ln` that makes it.
#[derive(Debug, Clone)]
pub struct Link {
    /// Where the link is.
    pub path: PathBuf,
    /// Where it points.
    pub target: PathBuf,
    /// The `ln` segment's argv (its own operands are not followed).
    pub made_by: Vec<String>,
}

impl<'a> PolicyContext<'a> {
    /// The context for judging `model`: `ctx`'s profile, roots and
    /// confinement, with what the string itself writes and links.
    pub(super) fn for_command(model: &CommandModel, ctx: &PolicyContext<'a>) -> Self {
        let written = model
            .segments
            .iter()
            .flat_map(|s| {
                s.redirections
                    .iter()
                    .filter(|r| r.writes)
                    .map(|r| paths::resolve_anchored(&ctx.roots.anchors, &s.cwd, &r.target))
            })
            .collect();
        PolicyContext {
            profile: ctx.profile,
            roots: ctx.roots,
            interactive: ctx.interactive,
            confined: ctx.confined,
            writes_seen: Default::default(),
            seen_before: Default::default(),
            trees_landed: Default::default(),
            dots_unknown: Default::default(),
            written,
            links: symlinks(model, &ctx.profile.registry),
            written_text: confined::written_text(model),
            resolved: Default::default(),
            job_vars: job_vars(model),
            negative_vars: model
                .segments
                .iter()
                .flat_map(|s| &s.assignments)
                .filter(|a| a.value.trim_start().starts_with('-'))
                .map(|a| a.name.clone())
                .collect(),
            shopt: model.segments.iter().any(|s| s.program == "shopt"),
            path_dirs: ctx.path_dirs.clone(),
            made_repos: made_repos(model, &ctx.roots.anchors),
        }
    }

    /// Resolves a path of `seg` like [`paths::resolve`], following links
    /// the same command makes before using them. A path through a magic
    /// link of `/proc` is read as the command's process would read it:
    /// `/proc/self/cwd` is the directory the command runs in, after the
    /// string's `cd` (review 12, F9), not safe-exec's own.
    pub fn resolve(&self, seg: &Segment, p: &str) -> PathBuf {
        let mut out = self.resolve_spelled(seg, p);
        for _ in 0..8 {
            let Some((link, rest)) = crate::sys::path::magic_split(&out) else {
                break;
            };
            let mut c = link.iter().skip(2);
            let own = c.next().is_some_and(|pid| {
                pid == "self" || pid == "thread-self" || *pid == *std::process::id().to_string()
            });
            if !own {
                break; // another process's: judged as such (`paths`)
            }
            let mut tail: Vec<&std::ffi::OsStr> = c.collect();
            if tail.first().is_some_and(|t| *t == "task") {
                tail.drain(..2.min(tail.len()));
            }
            let rest = rest.to_string_lossy();
            out = match tail.first().and_then(|t| t.to_str()) {
                Some("cwd") => self.resolve_in(&seg.cwd, &rest),
                Some("root") => self.resolve_in(Path::new("/"), &rest),
                // `fd/N`, `exe`: as the command's own (`/proc/self/fd/1`
                // is where its output goes).
                _ => {
                    let mut own = PathBuf::from("/proc/self");
                    own.extend(tail);
                    if !rest.is_empty() {
                        own.push(&*rest);
                    }
                    return own;
                }
            };
        }
        out
    }

    /// [`PolicyContext::resolve`] before magic links are read.
    fn resolve_spelled(&self, seg: &Segment, p: &str) -> PathBuf {
        if !self.confined {
            self.dots_after_copied(&seg.cwd, p);
        }
        let made_here = |l: &&Link| !l.made_by.iter().map(String::as_str).eq(seg.argv());
        // A link the string makes over an existing one (`ln -sfn T l`) is
        // met by the path as spelled, before the filesystem's old link is
        // followed (review 11, F12).
        if !self.links.is_empty() {
            let mut spelled = crate::sys::path::join_physical(&seg.cwd, p);
            // A `..` after a link the string makes goes up from the link's
            // target (`ln -s ../src a/s && tee a/s/../.envrc`: review 11,
            // F1): walk the spelled path, entering such links.
            if p.split('/').any(|c| c == "..") {
                let mut entered = false;
                let mut cur = PathBuf::from("/");
                for c in seg.cwd.join(p).components() {
                    match c {
                        std::path::Component::ParentDir => {
                            cur = crate::sys::path::join_physical(&cur, "..");
                        }
                        std::path::Component::Normal(n) => {
                            cur.push(n);
                            if let Some(l) =
                                self.links.iter().filter(made_here).find(|l| l.path == cur)
                            {
                                cur.clone_from(&l.target);
                                entered = true;
                            }
                        }
                        _ => {}
                    }
                }
                if entered {
                    return self.resolve_in(Path::new("/"), &cur.to_string_lossy());
                }
                spelled = cur;
            }
            if let Some(l) = self
                .links
                .iter()
                .filter(made_here)
                .find(|l| spelled.starts_with(&l.path) && spelled != l.path)
            {
                let rest = spelled
                    .strip_prefix(&l.path)
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                let out = self.resolve_in(&l.target, &rest.to_string_lossy());
                return self.through_links(seg, out);
            }
        }
        let out = self.resolve_in(&seg.cwd, p);
        self.through_links(seg, out)
    }

    /// Review 12, F3: a `..` after a component that does not exist as a
    /// directory now and lies at or below a path an earlier segment of the
    /// string wrote (a copy, move, hard link or restore may put a link
    /// there: `mv a/s b/s`, `cp -a a/s b/`, `ln a/s b/s`, `git restore
    /// a/s`) goes up from wherever that link leads, which the policy does
    /// not know: recorded in [`Self::dots_unknown`].
    pub(super) fn dots_after_copied(&self, cwd: &Path, p: &str) {
        let Ok(seen) = self.writes_seen.try_borrow() else {
            return;
        };
        let before = &seen[..self.seen_before.get().min(seen.len())];
        if before.is_empty() || self.dots_unknown.borrow().is_some() {
            return;
        }
        let full = cwd.join(p);
        if !full
            .components()
            .any(|c| c == std::path::Component::ParentDir)
        {
            return;
        }
        let mut cur = PathBuf::from("/");
        let mut last_normal = false;
        for c in full.components() {
            match c {
                std::path::Component::ParentDir => {
                    // A link the string makes with `ln -s` is followed
                    // by [`Self::resolve`] itself.
                    if last_normal
                        && !self.links.iter().any(|l| l.path == cur)
                        && !cur.symlink_metadata().is_ok_and(|m| m.is_dir())
                        && before.iter().any(|w| cur.starts_with(w))
                    {
                        *self.dots_unknown.borrow_mut() = Some(cur.join(".."));
                        return;
                    }
                    cur = crate::sys::path::join_physical(&cur, "..");
                    last_normal = false;
                }
                std::path::Component::Normal(n) => {
                    cur.push(n);
                    last_normal = true;
                }
                _ => {}
            }
        }
    }

    /// `out` followed through the links the string makes (other than by
    /// `seg` itself), at most eight deep.
    fn through_links(&self, seg: &Segment, mut out: PathBuf) -> PathBuf {
        for _ in 0..8 {
            let Some(l) = self.links.iter().find(|l| {
                out.starts_with(&l.path) && !l.made_by.iter().map(String::as_str).eq(seg.argv())
            }) else {
                break;
            };
            let rest = out
                .strip_prefix(&l.path)
                .map(Path::to_path_buf)
                .unwrap_or_default();
            out = self.resolve_in(&l.target, &rest.to_string_lossy());
        }
        out
    }

    /// [`paths::resolve`] through this decision's memo.
    fn resolve_in(&self, cwd: &Path, p: &str) -> PathBuf {
        let hit = self.resolved.borrow().get(cwd, p);
        if let Some(r) = hit {
            return r;
        }
        let r = paths::resolve_anchored(&self.roots.anchors, cwd, p);
        self.resolved.borrow_mut().insert(cwd, p, r.clone());
        r
    }
}

/// [`PolicyContext::made_repos`]: the directories `git init`, `git clone`
/// and `git worktree add` segments of `model` may make repositories, read
/// without their options: every word after the subcommand that is not an
/// option (an option's value too, which only makes more directories
/// count), and for `git clone` with one such word the directory git
/// derives from the URL. Resolved from the segment's directory (after its
/// `git -C DIR`).
fn made_repos(model: &CommandModel, anchors: &crate::sys::path::Anchors) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for s in model.segments.iter().filter(|s| s.program == "git") {
        let words: Vec<&str> = s.argv().collect();
        let mut i = 1;
        let mut cwd = s.cwd.clone();
        // Global options before the subcommand.
        while let Some(w) = words.get(i) {
            if *w == "-C" {
                if let Some(d) = words.get(i + 1) {
                    cwd = paths::resolve_anchored(anchors, &cwd, d);
                }
                i += 2;
            } else if matches!(*w, "-c" | "--git-dir" | "--work-tree" | "--namespace") {
                i += 2;
            } else if w.starts_with('-') {
                i += 1;
            } else {
                break;
            }
        }
        let sub = words.get(i).copied().unwrap_or_default();
        let rest: Vec<&str> = match sub {
            "init" | "clone" => words[i + 1..].to_vec(),
            "worktree" if words.get(i + 1) == Some(&"add") => words[i + 2..].to_vec(),
            _ => continue,
        };
        let plain: Vec<&str> = rest
            .iter()
            .copied()
            .filter(|w| !w.starts_with('-') && !w.is_empty())
            .collect();
        for w in &plain {
            out.push(paths::resolve_anchored(anchors, &cwd, w));
        }
        if sub == "clone"
            && let Some(url) = plain.first()
        {
            let base = url
                .trim_end_matches('/')
                .rsplit(['/', ':'])
                .next()
                .unwrap_or("");
            let base = base.strip_suffix(".git").unwrap_or(base);
            if !base.is_empty() && base != "." && base != ".." {
                out.push(paths::resolve_anchored(anchors, &cwd, base));
            }
        }
    }
    out
}

/// [`PolicyContext::job_vars`]: names every assignment of which in the
/// string is exactly `$!`, and that nothing else sets.
fn job_vars(model: &CommandModel) -> Vec<String> {
    let all = || model.segments.iter().flat_map(|s| &s.assignments);
    let mut out: Vec<String> = all()
        .filter(|a| a.value == "$!")
        .map(|a| a.name.clone())
        .collect();
    out.sort();
    out.dedup();
    out.retain(|n| {
        !model.assigned.iter().any(|m| m == n) && all().all(|a| a.name != *n || a.value == "$!")
    });
    out
}

/// Symbolic links the command makes, in order: `ln -s` and `cp -s` read
/// with their registry entries, the way their own getopt reads them
/// (`ln --sym`, `ln -s -S SUFFIX T L`, `ln -st DIR T...`, `cp -rs T L`).
pub(super) fn symlinks(model: &CommandModel, registry: &registry::Registry) -> Vec<Link> {
    let mut out = Vec::new();
    for (index, s) in model.segments.iter().enumerate() {
        if !matches!(s.program.as_str(), "ln" | "cp") || s.words.len() < 2 {
            continue;
        }
        let Some(spec) = registry.get(&s.program) else {
            continue;
        };
        let parsed = parse_args(&spec, &s.words[1..]);
        let symbolic = parsed
            .options
            .iter()
            .any(|o| o.spec.names.iter().any(|n| n == "-s"));
        if !symbolic {
            continue;
        }
        let ops: Vec<&Word> = parsed.operands.iter().map(|(w, _)| *w).collect();
        let has = |name: &str| {
            parsed
                .options
                .iter()
                .any(|o| o.spec.names.iter().any(|n| n == name))
        };
        let dir = parsed
            .options
            .iter()
            .find(|o| o.spec.names.iter().any(|n| n == "-t"))
            .and_then(|o| o.value.as_ref());
        // `ln -r` makes the target relative itself: the operand is read
        // from the working directory. Otherwise the kernel reads a relative
        // target from the directory the link is in (`ln -s ../../home d/h`
        // points at `../home` seen from the cwd), which is what the link
        // reaches; `cp -s` only makes relative links in the cwd.
        let from_cwd = s.program == "cp" || has("-r");
        let into = |d: &str, t: &Word| {
            let file = Path::new(&t.value)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            paths::resolve(&s.cwd, &format!("{d}/{file}"))
        };
        // DEST itself as the link: its directory resolved, its own name
        // kept (a link DEST is replaced, not followed).
        let itself = |d: &Word| {
            let p = Path::new(&d.value);
            match (p.parent(), p.file_name()) {
                (Some(parent), Some(name)) => {
                    let parent = parent.to_string_lossy();
                    paths::resolve(&s.cwd, if parent.is_empty() { "." } else { &parent }).join(name)
                }
                _ => paths::resolve(&s.cwd, &d.value),
            }
        };
        // Review 11, F12: whether DEST is a directory is read from the
        // filesystem before the command runs. With `-n`, a DEST that is a
        // link is replaced, not entered; and an earlier command of the
        // string that removes or moves DEST (or a directory above it) can
        // make it no directory by the time `ln` runs: then the link may be
        // DEST itself, and both readings are kept.
        let replaced = |d: &Word| {
            (has("-n") && itself(d).symlink_metadata().is_ok_and(|m| m.is_symlink()))
                || removed_before(model, index, &itself(d))
        };
        let pairs: Vec<(&Word, PathBuf)> = match (dir, ops.as_slice()) {
            (Some(d), targets) => targets.iter().map(|t| (*t, into(&d.value, t))).collect(),
            // `ln -s T`: the link is `./basename(T)`.
            (None, [target]) => vec![(*target, into(".", target))],
            // `ln -s T... DIR`, and `ln -s T DIR` where DIR is a directory
            // (without `-T`): the links are made inside DIR.
            (None, [target, last])
                if !has("-T") && paths::resolve(&s.cwd, &last.value).is_dir() =>
            {
                let mut v = vec![(*target, into(&last.value, target))];
                if replaced(last) {
                    v.push((*target, itself(last)));
                }
                v
            }
            (None, [targets @ .., last]) if targets.len() > 1 => {
                targets.iter().map(|t| (*t, into(&last.value, t))).collect()
            }
            (None, [target, link]) => vec![(*target, paths::resolve(&s.cwd, &link.value))],
            _ => Vec::new(),
        };
        for (target, link) in pairs {
            let base = if from_cwd || target.value.starts_with('/') {
                s.cwd.clone()
            } else {
                link.parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| s.cwd.clone())
            };
            out.push(Link {
                target: paths::resolve(&base, &target.value),
                path: link,
                made_by: s.argv_vec(),
            });
        }
    }
    out
}

/// Whether a command before `index` in the string removes or moves `path`
/// or a directory above it (`rmdir d && ln -s T d`), or may: review 12,
/// F11, a command whose targets are not all literal (`rmdir d*`, `find d
/// -delete`, `git stash -u`, `rsync --remove-source-files`, a script)
/// counts as removing it. Only the programs that never remove or move a
/// path ([`KEEPS_PATHS`]) are passed over.
fn removed_before(model: &CommandModel, index: usize, path: &Path) -> bool {
    model.segments[..index].iter().any(|e| {
        let program = e.program.rsplit('/').next().unwrap_or(&e.program);
        if program.is_empty() || KEEPS_PATHS.contains(&program) {
            return false;
        }
        let literal = matches!(program, "rm" | "rmdir" | "mv" | "unlink")
            || (program == "git"
                && e.words
                    .iter()
                    .skip(1)
                    .find(|w| !w.value.starts_with('-'))
                    .is_some_and(|w| w.value == "rm" || w.value == "mv"));
        if !literal || e.words[1..].iter().any(|w| w.glob || w.unresolved) {
            return true;
        }
        e.words[1..].iter().any(|w| {
            !w.value.starts_with('-') && path.starts_with(paths::resolve(&e.cwd, &w.value))
        })
    })
}

/// Programs that never remove, move or replace a directory
/// ([`removed_before`]).
const KEEPS_PATHS: &[&str] = &[
    "cd", "pushd", "popd", "echo", "printf", "ls", "cat", "pwd", "test", "[", "true", "false",
    "mkdir", "touch", "ln", "cp", "grep", "rg", "head", "tail", "wc", "stat", "file", "readlink",
    "realpath", "which", "type", "command", "sleep", "export", "tee", "chmod", "sort", "diff",
];

#[cfg(test)]
mod memo_tests {
    use super::PathMemo;
    use std::path::{Path, PathBuf};

    #[test]
    fn the_memo_answers_by_directory_and_path_exactly() {
        let mut m = PathMemo::default();
        assert_eq!(m.get(Path::new("/a"), "f"), None);
        m.insert(Path::new("/a"), "f", PathBuf::from("/a/f"));
        m.insert(Path::new("/b"), "f", PathBuf::from("/b/f"));
        m.insert(Path::new("/a"), "g", PathBuf::from("/real/g"));
        assert_eq!(m.get(Path::new("/a"), "f"), Some(PathBuf::from("/a/f")));
        assert_eq!(m.get(Path::new("/b"), "f"), Some(PathBuf::from("/b/f")));
        assert_eq!(m.get(Path::new("/a"), "g"), Some(PathBuf::from("/real/g")));
        assert_eq!(m.get(Path::new("/b"), "g"), None);
        assert_eq!(
            m.get(Path::new("/a/"), "f"),
            None,
            "spellings are not merged"
        );
        assert_eq!(m.get(Path::new("/"), "a/f"), None);
        // Many answers: each still found, none confused.
        for i in 0..5000 {
            m.insert(
                Path::new("/d"),
                &format!("f{i}"),
                PathBuf::from(format!("/r{i}")),
            );
        }
        for i in (0..5000).step_by(97) {
            assert_eq!(
                m.get(Path::new("/d"), &format!("f{i}")),
                Some(PathBuf::from(format!("/r{i}")))
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The memo answers what [`paths::resolve`] answers, for generated
    /// sequences of (directory, path) asks with repeats, below and past
    /// the size where the hash index takes over: a memo that confused two
    /// directories or two paths would answer a relative path of one for
    /// the other.
    #[test]
    fn the_memo_answers_as_resolve_does() {
        let dirs = [
            "/work/project",
            "/work/project/src",
            "/tmp",
            "/",
            "/nonexistent-memo/a b",
        ];
        let words = [
            "x",
            "../x",
            "./x",
            "~/x",
            "/etc/passwd",
            "src/../y",
            "a/b/c",
            "..",
            ".",
            "",
            "é",
            "x/",
            "//x",
            "/tmp/../work",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((seed >> 33) as usize) % n
        };
        for round in 0..40 {
            let mut memo = PathMemo::default();
            // Short rounds stay below the index; long ones cross it.
            let asks = if round % 2 == 0 { 12 } else { 120 };
            for _ in 0..asks {
                let cwd = Path::new(dirs[next(dirs.len())]);
                let p = format!("{}{}", words[next(words.len())], next(3));
                let want = paths::resolve(cwd, &p);
                let got = match memo.get(cwd, &p) {
                    Some(r) => r,
                    None => {
                        memo.insert(cwd, &p, want.clone());
                        memo.get(cwd, &p).unwrap_or_default()
                    }
                };
                assert_eq!(got, want, "{cwd:?} {p:?}");
            }
        }
    }
}
