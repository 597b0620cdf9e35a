//! Red team 10: git writes whose paths the policy cannot see, and git
//! directories that are not named `.git`.
//!
//! - A pathspec with a glob character that the shell does not expand
//!   (`git checkout evil -- '*.json'`) is a glob to git: `*` crosses `/`,
//!   so it is checked like the broad pathspec of its fixed directory part
//!   (`.` for `'*.json'`), in both modes.
//! - `git init --separate-git-dir D` in an existing repository moves its
//!   git directory out of `.git` (leaving a gitfile): refused in both
//!   modes, like `mv .git elsewhere`.
//! - Unconfined only (nothing restores protected files afterwards): git
//!   commands that write paths named by content (a patch, a commit, a
//!   stash: `git apply`, `git am`, `git checkout BRANCH`, `git merge`, ...)
//!   ask; `git update-index --cacheinfo` paths are compared with the
//!   protected list; `git init --bare`/`--separate-git-dir` and `git clone
//!   --bare/--mirror/--separate-git-dir` ask (the new git directory's hooks
//!   and config are not named `.git/...`); `git push/fetch/pull/clone/
//!   ls-remote` of a local repository ask (its hooks run: `pre-receive`);
//!   and a git command whose git directory (found as git finds it: a `.git`
//!   entry, or a directory that holds `HEAD`, `objects/` and `refs/`) is
//!   not a writable root's own `.git` asks.

use std::path::{Path, PathBuf};

use super::args::ParsedArgs;
use super::path_checks::Access;
use super::registry::Risk;
use super::{Decision, Layer, PolicyContext, ReasonId, Verdict};
use crate::parse::{Segment, Word};

const SANDBOX: &str = "run it inside the sandbox (`safe-exec hook --rewrite`), where protected files are restored after the command, or confirm it";

fn ask(v: &mut Verdict, why: String) {
    v.add(
        Layer::Policy,
        ReasonId::RootsProtected,
        Decision::Ask,
        why,
        Some(SANDBOX.into()),
    );
}

/// Whether `d` is a git directory as git recognises one
/// (`is_git_directory`: `HEAD`, `objects/` and `refs/`).
pub fn is_git_dir(d: &Path) -> bool {
    d.join("HEAD").is_file() && d.join("objects").is_dir() && d.join("refs").is_dir()
}

/// The options and operands of the subcommand as written (`--` kept).
fn args_after<'a>(argv: &'a [String], name: &str) -> &'a [String] {
    // `git -C x checkout ...`: the words after the subcommand's name.
    let sub = name.rsplit(' ').next().unwrap_or(name);
    let at = argv
        .iter()
        .position(|a| a == sub)
        .map_or(argv.len(), |i| i + 1);
    &argv[at.min(argv.len())..]
}

/// Checks one git subcommand (`name` is `git checkout`, ...).
pub(super) fn check(
    name: &str,
    p: &ParsedArgs,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    glob_pathspecs(name, p, seg, ctx, v);
    if name == "git init" {
        separate_git_dir(p, seg, ctx, v);
    }
    if ctx.confined {
        return;
    }
    content_named(name, p, seg, ctx, v);
    if name == "git update-index" {
        cacheinfo_paths(seg, ctx, v);
    }
    new_git_dir(name, p, seg, v);
    local_remote(name, p, seg, ctx, v);
    discovered_git_dir(name, seg, ctx, v);
}

/// A quoted pathspec with `*`, `?` or `[` is a glob to git (whose `*`
/// crosses `/`): checked as the broad pathspec of its fixed directory.
fn glob_pathspecs(name: &str, p: &ParsedArgs, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    // As the same command with `.`: `git checkout/restore/rm` throw away
    // or delete what they match; `git restore --staged` only unstages (its
    // `.` is allowed); `git add` reads (a glob may force-add `.env`).
    let staged_only =
        (name == "git restore" && has(p, &["-S", "--staged"]) && !has(p, &["-W", "--worktree"]))
            || (name == "git rm" && has(p, &["--cached"]));
    let (access, destructive) = match name {
        "git checkout" | "git restore" | "git rm" if !staged_only => (Access::Write, true),
        "git add" => (Access::Read, true),
        _ => return,
    };
    for (w, _) in &p.operands {
        if w.unresolved || w.glob || !w.value.contains(['*', '?', '[']) || w.value.starts_with(':')
        {
            continue;
        }
        let cut = w.value.find(['*', '?', '[']).unwrap_or(w.value.len());
        let dir = match w.value[..cut].rfind('/') {
            Some(0) => "/",
            Some(i) => &w.value[..i],
            None => ".",
        };
        v.note(
            Layer::Policy,
            format!(
                "`{name}` pathspec `{}` is a glob to git (`*` matches across `/`): checked as `{dir}`",
                w.value
            ),
        );
        super::path_operand(seg, ctx, v, &Word::literal(dir), access, destructive, name);
        if access == Access::Read && !ctx.confined {
            // `git add -f '.e*'` force-adds `.env` anywhere below.
            ask(
                v,
                format!(
                    "`{name}` pathspec `{}` is a glob git expands itself over the whole tree below `{dir}`, protected and secret files included",
                    w.value
                ),
            );
        }
    }
}

/// `git init --separate-git-dir D [DIR]` where DIR (or the cwd) is already
/// a repository: git moves its git directory to D and leaves a gitfile.
fn separate_git_dir(p: &ParsedArgs, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    if !p.options.iter().any(|o| o.name == "--separate-git-dir") {
        return;
    }
    let dir = p.operands.first().map_or_else(
        || seg.cwd.to_path_buf(),
        |(w, _)| ctx.resolve(seg, &w.value),
    );
    if std::fs::symlink_metadata(dir.join(".git")).is_ok() || is_git_dir(&dir) {
        v.add(
            Layer::Policy,
            ReasonId::RootsProtected,
            Decision::Deny,
            format!(
                "`git init --separate-git-dir` in `{}`, an existing repository, moves its git directory out of the protected `.git` (config and hooks become ordinary files there; a confined run leaves the repository broken)",
                dir.display()
            ),
            Some("leave the repository's git directory where it is; ask the user to move it".into()),
        );
        v.risk = Risk::Dangerous;
    }
}

fn has(p: &ParsedArgs, names: &[&str]) -> bool {
    p.options.iter().any(|o| names.contains(&o.name))
        || p.unknown_options.iter().any(|u| {
            let n = u.split('=').next().unwrap_or(u);
            names.contains(&n)
        })
}

/// Unconfined: git commands that write the paths a patch, a commit or a
/// stash names. Any branch or stash may hold `.claude/settings.json` or
/// `.envrc` (a confined run may commit them: `.git/objects` and refs are
/// not protected), and nothing restores them after an unconfined command.
fn content_named(name: &str, p: &ParsedArgs, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    let argv = seg.argv_vec();
    let rest = args_after(&argv, name);
    let what = match name {
        "git apply"
            if !has(p, &["--check", "--stat", "--numstat", "--summary"])
                || has(p, &["--apply"]) =>
        {
            match patch_targets(p, seg, ctx) {
                Ok(paths) => {
                    for full in paths {
                        if let Err(e) = super::path_checks::check_write(ctx, &full, false) {
                            super::path_checks::path_reason(
                                v,
                                &full,
                                &e,
                                "`git apply` writes (the patch names it)",
                            );
                        }
                    }
                    return;
                }
                Err(()) => "writes the files the patch names",
            }
        }
        "git am" if !has(p, &["--abort", "--quit", "--show-current-patch"]) => {
            "writes the files the patches name"
        }
        "git merge" | "git pull" | "git rebase" | "git cherry-pick" | "git revert"
            if !has(p, &["--abort", "--quit"]) =>
        {
            "checks out files the commits it brings name"
        }
        "git stash pop" | "git stash apply" | "git stash branch" => {
            "checks out the files the stash holds"
        }
        "git reset" if has(p, &["--keep", "--merge", "--hard"]) && !p.operands.is_empty() => {
            "checks out the files of the commit it resets to"
        }
        "git switch" if !p.operands.is_empty() || has(p, &["--orphan"]) => {
            "checks out the files of the branch it switches to"
        }
        // `git checkout -- PATH...`: paths only. A `--` with nothing after
        // it (`git checkout evil --`) still switches to `evil`.
        "git checkout"
            if rest
                .iter()
                .position(|a| a == "--")
                .is_none_or(|i| i + 1 >= rest.len()) =>
        {
            // Without `--`, git takes a first operand that names a branch,
            // tag or remote branch as one, even when a file of that name
            // exists (`touch evil && git checkout evil` switches to
            // `evil`); otherwise an existing path is a path.
            match p.operands.first() {
                Some((w, _))
                    if !w.unresolved
                        && !w.value.is_empty()
                        && std::fs::symlink_metadata(ctx.resolve(seg, &w.value)).is_ok()
                        && !names_a_ref(&w.value, seg, ctx) =>
                {
                    return;
                }
                Some(_) => "checks out the files of the branch or commit it switches to",
                None => return,
            }
        }
        // `git bisect start BAD GOOD`, `reset REV`, `good`/`bad`/`skip`
        // (each checks out the next commit to test), `run`, `replay`.
        n if (n == "git bisect" || n.starts_with("git bisect ")) && {
            // The bisect subcommand: the name's last word, or the first
            // word after `bisect`.
            let sub = if n == "git bisect" {
                rest.first().map(String::as_str)
            } else {
                n.rsplit(' ').next()
            };
            !matches!(
                sub,
                Some("log" | "visualize" | "view" | "terms" | "help") | None
            )
        } =>
        {
            "checks out the commits it walks through"
        }
        _ => return,
    };
    ask(
        v,
        format!(
            "`{name}` {what}: paths chosen by content the policy cannot see (a branch or patch may hold `.claude/settings.json`, `.envrc`, `.vscode/tasks.json`), and nothing confines this command to restore them"
        ),
    );
}

/// Whether `word` names a branch, tag or remote-tracking branch of the
/// repository git finds from `seg`'s cwd (loose refs and `packed-refs`),
/// or is spelled as a revision (`HEAD`, `@`, `~`, `^`). Unknown (no
/// repository found, unreadable) counts as a ref: the caller then asks.
fn names_a_ref(word: &str, seg: &Segment, ctx: &PolicyContext) -> bool {
    if word == "HEAD" || word == "@" || word.contains(['~', '^', '@', ':']) {
        return true;
    }
    let Some((gd, _)) = discover(&seg.cwd, ctx) else {
        return true;
    };
    // A gitfile (`gitdir: ...`, linked worktrees, submodules): where the
    // refs are is not followed here.
    if !gd.is_dir() {
        return true;
    }
    let common = std::fs::read_to_string(gd.join("commondir"))
        .map(|c| gd.join(c.trim()))
        .unwrap_or_else(|_| gd.clone());
    for d in [&gd, &common] {
        for prefix in ["refs/heads", "refs/tags"] {
            if std::fs::symlink_metadata(d.join(prefix).join(word)).is_ok() {
                return true;
            }
        }
        if let Ok(remotes) = std::fs::read_dir(d.join("refs/remotes")) {
            for r in remotes.flatten().take(64) {
                if std::fs::symlink_metadata(r.path().join(word)).is_ok() {
                    return true;
                }
            }
        }
        if let Ok(packed) = std::fs::read_to_string(d.join("packed-refs")) {
            let hit = packed.lines().any(|l| {
                l.split_once(' ').is_some_and(|(_, r)| {
                    r.strip_prefix("refs/heads/")
                        .or_else(|| r.strip_prefix("refs/tags/"))
                        .or_else(|| {
                            r.strip_prefix("refs/remotes/")
                                .and_then(|x| x.split_once('/').map(|(_, b)| b))
                        })
                        == Some(word)
                })
            });
            if hit {
                return true;
            }
        }
    }
    false
}

/// Unconfined: `git update-index --cacheinfo MODE,SHA,PATH` (or the three
/// words) puts PATH in the index; a later `git stash pop` or checkout
/// writes it. A protected PATH is refused as a protected write.
fn cacheinfo_paths(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    let argv = seg.argv_vec();
    let mut paths: Vec<String> = Vec::new();
    let mut k = 0;
    while k < argv.len() {
        let a = argv[k].as_str();
        k += 1;
        let val = if let Some(x) = a.strip_prefix("--cacheinfo=") {
            Some(x.to_string())
        } else if a == "--cacheinfo" {
            argv.get(k).cloned()
        } else {
            None
        };
        let Some(val) = val else { continue };
        let parts: Vec<&str> = val.splitn(3, ',').collect();
        if parts.len() == 3 {
            paths.push(parts[2].to_string());
        } else if let Some(path) = argv.get(k + 2) {
            // `--cacheinfo MODE SHA PATH`
            paths.push(path.clone());
        }
    }
    if paths.is_empty() {
        return;
    }
    // Relative to the working tree's top, not the cwd (review 10 R10: `cd
    // t && git update-index --add --cacheinfo 100644,SHA,.envrc` puts the
    // top's `.envrc` in the index): git does not prefix these paths.
    let top = match discover(&seg.cwd, ctx) {
        Some((gd, _)) if gd.file_name().is_some_and(|n| n == ".git") => {
            gd.parent().map(Path::to_path_buf)
        }
        _ => crate::sys::hookspath::discover(&seg.cwd),
    };
    for path in paths {
        let full = match &top {
            Some(t) if !path.starts_with('/') => super::paths::resolve(t, &path),
            _ => ctx.resolve(seg, &path),
        };
        if let Some(hit) = ctx.roots.protected_hit(&full, false) {
            super::path_checks::path_reason(
                v,
                &full,
                &super::paths::PathProblem::Protected(hit),
                "`git update-index --cacheinfo` puts in the index (a later checkout or `git stash pop` writes it)",
            );
        }
    }
}

/// Unconfined: a new git directory that is not a `.git` (bare, mirror,
/// separate): its `hooks/` and `config` are ordinary paths to the policy,
/// and a later (or the same string's) `git push` into it runs its hooks.
fn new_git_dir(name: &str, p: &ParsedArgs, seg: &Segment, v: &mut Verdict) {
    let opts: &[&str] = match name {
        "git init" => &["--bare", "--separate-git-dir"],
        "git clone" => &["--bare", "--mirror", "--separate-git-dir"],
        _ => return,
    };
    // git's own `--bare` before the subcommand (`git --bare init b`) means
    // the same as the subcommand's.
    let sub = name.trim_start_matches("git ");
    let global_bare = seg
        .argv()
        .skip(1)
        .take_while(|a| *a != sub)
        .any(|a| a == "--bare");
    if global_bare || has(p, opts) {
        ask(
            v,
            format!(
                "`{name}` with `{}` makes a git directory not named `.git`: its hooks and config are not protected paths, and git runs them (a `git push` into it runs `pre-receive`)",
                opts.join("`/`")
            ),
        );
    }
}

/// Whether a repository word of `git push/fetch/pull/clone/ls-remote` is a
/// local repository: `file://`, a path (`./b`, `/x`, `..`), or a plain
/// name that is an existing directory (git falls back to a path when no
/// remote has that name).
fn local_repository(word: &str, seg: &Segment, ctx: &PolicyContext) -> bool {
    if word.starts_with("file://") {
        return true;
    }
    if word.contains("://") {
        return false;
    }
    // scp-like `host:path`: a `:` before the first `/`.
    if let Some(c) = word.find(':')
        && word.find('/').is_none_or(|s| c < s)
    {
        return false;
    }
    word.contains('/') || word == "." || word == ".." || ctx.resolve(seg, word).is_dir()
}

fn local_remote(name: &str, p: &ParsedArgs, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    if !matches!(
        name,
        "git push" | "git fetch" | "git pull" | "git clone" | "git ls-remote"
    ) {
        return;
    }
    let Some((w, _)) = p.operands.first() else {
        return;
    };
    if w.unresolved || !local_repository(&w.value, seg, ctx) {
        return;
    }
    ask(
        v,
        format!(
            "`{name} {}` talks to a local repository: git runs that repository's hooks (`pre-receive`, `post-update`) and reads its configuration, which the agent can write",
            w.value
        ),
    );
}

/// The git directory git would use from `start`, looking no higher than
/// the writable root holding it: `(git dir, whether it is the root's own
/// `.git`)`; `None` when none is found below or at a root.
fn discover(start: &Path, ctx: &PolicyContext) -> Option<(PathBuf, bool)> {
    let root = ctx
        .roots
        .write
        .iter()
        .filter(|r| super::paths::under(start, r))
        .max_by_key(|r| r.components().count())?;
    for d in start.ancestors() {
        let is_root = super::paths::same(d, root);
        let dot = d.join(".git");
        if std::fs::symlink_metadata(&dot).is_ok() {
            return Some((dot, is_root));
        }
        if is_git_dir(d) {
            // The cwd inside the root's own `.git` is the root's own.
            let own = d.file_name().is_some_and(|n| n == ".git")
                && d.parent().is_some_and(|p| super::paths::same(p, root));
            return Some((d.to_path_buf(), own));
        }
        if is_root {
            break;
        }
    }
    None
}

/// Unconfined: a git command whose git directory (found as git finds it) is
/// not a writable root's own `.git`: a nested repository or a bare-layout
/// directory (`sub/HEAD`, `sub/objects`, `sub/refs`, `sub/config` with
/// `core.fsmonitor`) the agent may have made; git runs what its config
/// names.
fn discovered_git_dir(name: &str, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    if matches!(name, "git clone" | "git init" | "git ls-remote") {
        return;
    }
    if let Some((gd, false)) = discover(&seg.cwd, ctx) {
        ask(
            v,
            format!(
                "`{name}` runs in the repository of `{}`, which is not a writable root's own `.git`: git runs what its configuration and hooks name (`core.fsmonitor`), and those are not protected paths",
                gd.display()
            ),
        );
    }
}

/// Most bytes of a patch read to list the paths it writes.
const MAX_PATCH: u64 = 1024 * 1024;

/// The paths `git apply` writes, read from the patch files it is given
/// (literal operands, or one literal `<` redirection), bounded: every
/// header line that names a path (`diff --git`, `---`, `+++`, `rename
/// to`, `copy to`, ... also lines of hunks that look like them: more paths
/// checked, never fewer), with git's default `-p1`, relative to the
/// repository's top. `Err` when they cannot all be known: the patch comes
/// from a pipe or is too big, a name is quoted (C escapes), has `..`, or
/// the patch makes a symlink (mode 120000).
fn patch_targets(p: &ParsedArgs, seg: &Segment, ctx: &PolicyContext) -> Result<Vec<PathBuf>, ()> {
    let mut files: Vec<PathBuf> = Vec::new();
    for (w, _) in &p.operands {
        if w.unresolved || w.glob || w.value == "-" {
            return Err(());
        }
        files.push(ctx.resolve(seg, &w.value));
    }
    for r in &seg.redirections {
        if r.reads && r.op == "<" && r.fd.is_none_or(|f| f == 0) {
            if !r.literal {
                return Err(());
            }
            files.push(ctx.resolve(seg, &r.target));
        } else if r.reads {
            return Err(());
        }
    }
    if files.is_empty() || seg.pipe_index > 0 || seg.stdin_data.is_some() {
        return Err(());
    }
    let base = match discover(&seg.cwd, ctx) {
        Some((gd, true)) => gd
            .parent()
            .map_or_else(|| seg.cwd.to_path_buf(), Path::to_path_buf),
        _ => seg.cwd.to_path_buf(),
    };
    let mut out = Vec::new();
    for f in files {
        use std::io::Read as _;
        // Written earlier in the same string (`printf ... > p.diff && git
        // apply p.diff`): what is on disk now is not what git will read.
        if ctx.written.iter().any(|w| super::paths::same(w, &f))
            || ctx
                .writes_seen
                .borrow()
                .iter()
                .any(|w| super::paths::same(w, &f))
        {
            return Err(());
        }
        // Opened without blocking (a FIFO would wait for a writer until the
        // hook's time bound), and read only when it is a regular file.
        let file = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
                .open(&f)
                .map_err(|_| ())?
        };
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Err(());
        }
        let mut buf = Vec::new();
        file.take(MAX_PATCH + 1)
            .read_to_end(&mut buf)
            .map_err(|_| ())?;
        if buf.len() as u64 > MAX_PATCH {
            return Err(());
        }
        let text = String::from_utf8_lossy(&buf);
        for line in text.lines() {
            let line = line.trim_end_matches('\r');
            if line.contains("120000") && line.contains("mode") {
                return Err(());
            }
            let names: Vec<&str> = if let Some(r) = line.strip_prefix("diff --git ") {
                r.split(' ').collect()
            } else if let Some(r) = line
                .strip_prefix("--- ")
                .or_else(|| line.strip_prefix("+++ "))
            {
                // A tab ends the name (a timestamp may follow).
                vec![r.split('\t').next().unwrap_or(r)]
            } else {
                match ["rename to ", "copy to ", "rename from ", "copy from "]
                    .iter()
                    .find_map(|k| line.strip_prefix(k))
                {
                    // Not stripped by `-p`.
                    Some(r) => {
                        if r.contains('"') || r.split('/').any(|c| c == "..") {
                            return Err(());
                        }
                        out.push(base.join(r));
                        continue;
                    }
                    None => continue,
                }
            };
            for n in names {
                let n = n.trim();
                if n.is_empty() || n == "/dev/null" {
                    continue;
                }
                if n.contains('"') || n.split('/').any(|c| c == "..") {
                    return Err(());
                }
                // `-p1`: the first component goes.
                let rel = n.split_once('/').map_or(n, |(_, r)| r);
                if rel.is_empty() {
                    continue;
                }
                out.push(base.join(rel));
            }
        }
    }
    Ok(out)
}

/// Unconfined: a write of `config`, `commondir` or a file under `hooks/`
/// into a directory whose `HEAD` this same string wrote earlier (red team
/// 10 F13: `mkdir -p sub/objects sub/refs && echo 'ref: ...' > sub/HEAD &&
/// printf '[core]...' > sub/config` makes a git directory git discovers);
/// the directory, when so.
pub(super) fn planted_git_dir(ctx: &PolicyContext, p: &Path) -> Option<PathBuf> {
    let seen = ctx.writes_seen.borrow();
    let head_written = |d: &Path| {
        let head = d.join("HEAD");
        seen.iter().any(|w| super::paths::same(w, &head))
            || ctx.written.iter().any(|w| super::paths::same(w, &head))
    };
    let parent = p.parent()?;
    let name = p.file_name()?;
    if (name == "config" || name == "commondir") && head_written(parent) {
        return Some(parent.to_path_buf());
    }
    p.ancestors()
        .skip(1)
        .find(|a| a.file_name().is_some_and(|n| n == "hooks"))
        .and_then(Path::parent)
        .filter(|d| head_written(d))
        .map(Path::to_path_buf)
}
