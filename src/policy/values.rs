//! Operands and option values judged by their registry type (`read_path`,
//! `write_path`, `url`, `command`, `refspec`, ...).

use super::ReasonId;
use super::args::ParsedArgs;
use super::code::{code_paths, stdin_program};
use super::languages::{awk_program, git_config, rustc_codegen, sed_script};
use super::path_checks::Access;
use super::path_checks::{path_operand, path_reason};
use super::registry::{Effect, Risk, ValueType};
use super::written::written_then_run;
use super::{Decision, Layer, NETWORK_WARNING, PolicyContext, Verdict, confined, variables};
use crate::parse::{Segment, Word};

/// Operands by their registry type.
pub(super) fn operands(
    name: &str,
    p: &ParsedArgs,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    code: &mut Vec<String>,
) -> Risk {
    let mut risk = Risk::Safe;
    let destructive = p.has_effect(Effect::Recursive)
        || (p.has_effect(Effect::Delete) && !p.has_effect(Effect::Filter));
    let writes_all = p.has_effect(Effect::Delete) || p.has_effect(Effect::WritesOperands);
    let tree = p.has_effect(Effect::ReadsTree);
    // `rsync --remove-source-files`: the sources are moved, not copied.
    let removes_sources = p
        .options
        .iter()
        .any(|o| o.spec.names.iter().any(|n| n == "--remove-source-files"));
    for (w, t) in &p.operands {
        let read = t.plain_path();
        let t = if writes_all && read {
            ValueType::WritePath
        } else if tree && read {
            ValueType::ReadTree
        } else {
            *t
        };
        let how = Reading {
            destructive,
            // `rsync -r SRC`: the source is read as a tree.
            sync_src_tree: tree && t == ValueType::SyncSrc,
            removes_sources,
        };
        risk = risk.max(typed_value(name, t, w, seg, ctx, v, code, how, "operand"));
    }
    risk
}

/// How the command treats its operands, from its other options.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Reading {
    /// It deletes or works recursively (`rm -r`, `find -delete`).
    pub destructive: bool,
    /// Its `sync_src` operands are read as trees (`rsync -r`).
    pub sync_src_tree: bool,
    /// Its `sync_src` operands are deleted once copied (`rsync
    /// --remove-source-files`): moved, like `mv`'s sources.
    pub removes_sources: bool,
}

/// A path that names an open file descriptor (`-`, `/dev/stdin`,
/// `/dev/fd/N`, `/proc/self/fd/N`, `/proc/PID/fd/N`): what a program reads
/// there is not known when checking.
pub(super) fn is_descriptor_path(s: &str) -> bool {
    if crate::parse::unwrap::is_stdin_path(s) || s.starts_with("/dev/fd/") {
        return true;
    }
    let Some(rest) = s.strip_prefix("/proc/") else {
        return false;
    };
    let Some((pid, tail)) = rest.split_once('/') else {
        return false;
    };
    (pid == "self" || pid == "thread-self" || pid.bytes().all(|b| b.is_ascii_digit()))
        && tail.starts_with("fd/")
}

/// Checks one operand or option value `w` by its registry type `t`;
/// returns the risk it adds. Every type is matched by name: a new type
/// does not compile until it is given a meaning here.
#[allow(clippy::too_many_arguments)]
pub(super) fn typed_value(
    name: &str,
    t: ValueType,
    w: &Word,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    code: &mut Vec<String>,
    how: Reading,
    what: &str,
) -> Risk {
    let destructive = how.destructive;
    match t {
        ValueType::ReadPath
        | ValueType::Path
        | ValueType::Dir
        | ValueType::Archive
        | ValueType::Chdir => {
            path_operand(seg, ctx, v, w, Access::Read, false, name);
            Risk::Safe
        }
        ValueType::ReadTree => {
            // A recursive read (`cp -r ~ x`, `grep -r key ~`) of a tree that
            // holds a protected path reads the secret too.
            path_operand(seg, ctx, v, w, Access::Read, true, name);
            Risk::Safe
        }
        ValueType::Script => {
            if crate::parse::unwrap::is_stdin_path(&w.value) {
                // `awk -f -`, `python3 -`: the program comes from standard input.
                stdin_program(seg, ctx, v, code, name);
                return Risk::Write;
            }
            if is_descriptor_path(&w.value) {
                // `sed -f /dev/fd/3 3<x`, `awk -f /proc/self/fd/4`: an open
                // descriptor, whose content is not known when checking.
                super::unknown::unknown(
                    v,
                    ctx,
                    &format!(
                        "`{name}` reads its program from the open descriptor `{}`; it cannot be checked",
                        w.value
                    ),
                );
                return Risk::Write;
            }
            path_operand(seg, ctx, v, w, Access::Read, false, name);
            written_then_run(seg, ctx, v, &w.value, name, code);
            Risk::Safe
        }
        ValueType::SyncSrc | ValueType::SyncDest => {
            // `HOST:PATH` and `rsync://` reach another machine.
            let v2 = w.value.as_str();
            let remote = v2.contains("://")
                || v2
                    .split_once(':')
                    .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'));
            if remote {
                v.add(
                    Layer::Policy,
                    ReasonId::NetworkRemotePath,
                    Decision::Deny,
                    format!("`{name} {v2}` names another host; only local copies are accepted"),
                    Some(format!("{name} -a SRC/ DEST/ with local paths")),
                );
                return Risk::Dangerous;
            }
            let kind = if t == ValueType::SyncDest {
                Access::Write
            } else {
                Access::Read
            };
            let tree = (how.sync_src_tree && t == ValueType::SyncSrc)
                || (destructive && t == ValueType::SyncDest);
            path_operand(seg, ctx, v, w, kind, tree, name);
            if how.removes_sources && t == ValueType::SyncSrc {
                // The files leave the source: written there, and a tree
                // holding a protected path is moved away (`.git/`).
                path_operand(seg, ctx, v, w, Access::Write, false, name);
                moved_protected(name, w, seg, ctx, v);
                return Risk::Write;
            }
            if t == ValueType::SyncDest {
                Risk::Write
            } else {
                Risk::Safe
            }
        }
        ValueType::HardlinkTarget => {
            // A hard link shares the inode: writes through it change the
            // original, so the original must be writable too.
            path_operand(seg, ctx, v, w, Access::Write, false, name);
            super::path_checks::renamed_secret(seg, ctx, v, w, name, "hard-links");
            Risk::Write
        }
        ValueType::LinkTarget => {
            path_operand(seg, ctx, v, w, Access::Read, false, name);
            // The operand read from the cwd, and what the links this
            // segment makes reach: a relative target is read from the
            // link's own directory (`ln -s ../../home d/h`).
            let here = ctx.resolve(seg, &w.value);
            let made = ctx
                .links
                .iter()
                .filter(|l| l.made_by.iter().map(String::as_str).eq(seg.argv()))
                .map(|l| l.target.clone());
            for p in std::iter::once(here.clone()).chain(made) {
                let secret = ctx.roots.deny_read.iter().any(|d| p.starts_with(d));
                if p != here && secret && !w.unresolved {
                    v.add(
                        Layer::Policy,
                        ReasonId::RootsNotReadable,
                        Decision::Deny,
                        format!("`{name}` makes a link to `{}`, a secret path", p.display()),
                        Some("link to a path inside the project".into()),
                    );
                    break;
                }
                let sensitive =
                    ctx.roots.is_broad(&p) && ctx.roots.check_write(&p, false).is_err() || secret;
                if !w.unresolved && sensitive {
                    v.add(
                        Layer::Policy,
                        ReasonId::PolicyLinkOutside,
                        Decision::Ask,
                        format!("`{name}` makes a link to `{}`; later commands writing through it would reach there", p.display()),
                        Some("link to a path inside the project".into()),
                    );
                    break;
                }
            }
            Risk::Write
        }
        ValueType::WritePath => {
            path_operand(seg, ctx, v, w, Access::Write, destructive, name);
            Risk::Write
        }
        ValueType::MovePath => {
            // `mv SRC DEST`: the source is written (it leaves its place),
            // and a directory holding a protected path takes it along
            // (`mv .git old`, `mv .claude x`), like `rm -rf .git` deletes it.
            path_operand(seg, ctx, v, w, Access::Write, destructive, name);
            moved_protected(name, w, seg, ctx, v);
            super::path_checks::renamed_secret(seg, ctx, v, w, name, "moves");
            Risk::Write
        }
        ValueType::DestroyPath => {
            // Discards changes under the path (`git checkout -- .`): a broad
            // target throws away everything.
            path_operand(seg, ctx, v, w, Access::Write, true, name);
            Risk::Write
        }
        ValueType::Refspec => {
            if w.value.starts_with('+') {
                v.danger.push((
                    format!("`{name} {}`: a leading `+` forces the update", w.value),
                    Some(format!("{name} --force-with-lease")),
                ));
                return Risk::Dangerous;
            }
            if w.value.starts_with(':') {
                v.danger
                    .push((format!("`{name} {}` deletes the remote ref", w.value), None));
                return Risk::Dangerous;
            }
            Risk::Safe
        }
        ValueType::EnvAssignment => {
            if let Some((n, val)) = w.value.split_once('=')
                && let Some(what) = variables::dangerous(n, (!w.unresolved).then_some(val))
                && !confined::code_path_assignment(n, val, seg, ctx, v)
            {
                v.add(
                    Layer::Policy,
                    ReasonId::PolicyDangerousAssignment,
                    Decision::Deny,
                    format!("`{name} {n}=...` {what}"),
                    Some("drop the assignment; configure the tool in its own config file".into()),
                );
                return Risk::Dangerous;
            }
            Risk::Safe
        }
        ValueType::Code => {
            code.push(w.value.clone());
            code_paths(name, &w.value, seg, ctx, v);
            Risk::Write
        }
        ValueType::Command => {
            v.add(
                Layer::Policy,
                ReasonId::RegistryExecValue,
                Decision::Deny,
                format!("`{name} {what}` runs the program `{}`", w.value),
                Some("run the other program as a command of its own".into()),
            );
            Risk::Dangerous
        }
        ValueType::Count => {
            if w.value.parse::<u64>().is_err() && !w.unresolved {
                v.add(
                    Layer::Policy,
                    ReasonId::RegistryBadCount,
                    Decision::Deny,
                    format!("`{name}`: `{}` is not a count", w.value),
                    None,
                );
            }
            Risk::Safe
        }
        ValueType::Url => {
            let lower = w.value.to_ascii_lowercase();
            if lower.starts_with("ext::") || lower.starts_with("fd::") {
                v.add(
                    Layer::Policy,
                    ReasonId::RegistryExecUrl,
                    Decision::Deny,
                    format!("`{name}`: an `ext::` URL runs a program"),
                    None,
                );
                return Risk::Dangerous;
            }
            if lower.starts_with("file:") {
                v.add(
                    Layer::Policy,
                    ReasonId::NetworkFileUrl,
                    Decision::Deny,
                    format!("`{name}`: `file:` URLs read local files"),
                    None,
                );
            }
            // Confined, the sandbox has no network: the program's own entry
            // asks "needs network" where it reaches other hosts.
            if !ctx.confined {
                v.warn(NETWORK_WARNING.into());
            }
            Risk::Safe
        }
        ValueType::Host | ValueType::Domain => {
            if !ctx.confined {
                v.warn(NETWORK_WARNING.into());
            }
            Risk::Safe
        }
        // Unconfined, nothing keeps a signal inside the command's own
        // processes: only job specs (`%1`) and `$!` (the last process this
        // string started) are the command's own.
        ValueType::Pid | ValueType::ProcessPattern if !ctx.confined => {
            let own = t == ValueType::Pid
                && (w.value.starts_with('%') || w.raw() == "$!" || w.raw() == "\"$!\"");
            if !own {
                v.add(
                    Layer::Policy,
                    ReasonId::PolicySignalOtherProcess,
                    Decision::Deny,
                    format!(
                        "`{name} {}` signals processes this command did not start, and nothing confines it",
                        w.raw()
                    ),
                    Some("stop only processes this command started (`kill %1`, `kill $!`)".into()),
                );
                return Risk::Dangerous;
            }
            Risk::Write
        }
        ValueType::RustcCodegen => rustc_codegen(name, w, v),
        ValueType::GitConfig => git_config(name, w, v),
        // Checked on the whole command line (`git_config_command`).
        ValueType::GitConfigKey => Risk::Safe,
        ValueType::NpmConfigAction => {
            if !matches!(w.value.as_str(), "get" | "list" | "ls") {
                v.add(
                    Layer::Policy,
                    ReasonId::RegistryNpmConfigWrite,
                    Decision::Ask,
                    format!(
                        "`{name} {}` changes npm's configuration, which can name programs npm runs",
                        w.value
                    ),
                    None,
                );
                return Risk::Write;
            }
            Risk::Safe
        }
        ValueType::DdOperand => {
            // `if=FILE` reads, `of=FILE` writes; other operands are values.
            match w.value.split_once('=') {
                Some(("if", f)) => {
                    let word = w.with_value(f.to_string());
                    path_operand(seg, ctx, v, &word, Access::Read, false, name);
                    Risk::Safe
                }
                Some(("of", f)) => {
                    let word = w.with_value(f.to_string());
                    path_operand(seg, ctx, v, &word, Access::Write, false, name);
                    Risk::Write
                }
                _ => Risk::Safe,
            }
        }
        ValueType::SedScript => sed_script(name, w, seg, ctx, v),
        ValueType::AwkProgram => awk_program(name, w, seg, ctx, v, code),
        // Confined, a signal reaches only the sandbox's own processes
        // (`confined::signals` judges the rest).
        ValueType::Pid | ValueType::ProcessPattern => Risk::Safe,
        // Data the command neither opens nor runs.
        ValueType::Literal
        | ValueType::Digits
        | ValueType::Opaque
        | ValueType::Signal
        | ValueType::User
        | ValueType::Mode
        | ValueType::Regex
        | ValueType::Pattern
        | ValueType::Package => Risk::Safe,
    }
}

/// A move source that holds a protected path (`mv .git gitold`, `mv .claude
/// x`, `mv .git/hooks h`): refused as `rm -rf .git` is, since the restore
/// after the run puts the protected files back but not the rest of what was
/// moved. A glob is expanded as bash would (its last component against the
/// directory, no dot files unless the pattern starts with `.`) and each
/// match is checked, protected or holding a protected path; a named path
/// that is itself protected was refused by the write check already.
fn moved_protected(name: &str, w: &Word, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    if w.unresolved {
        return;
    }
    let candidates: Vec<std::path::PathBuf> = if w.glob {
        glob_children(&ctx.resolve(seg, "."), &w.value, &earlier_writes(ctx))
    } else {
        vec![ctx.resolve(seg, &w.value)]
    };
    for p in candidates {
        // A named path that is itself protected was refused by the write
        // check; a glob's matches were not (it checks the glob's directory).
        if !w.glob && ctx.roots.protected_hit(&p, false).is_some() {
            continue;
        }
        if let Some(hit) = ctx.roots.protected_hit(&p, true) {
            path_reason(
                v,
                &p,
                &super::paths::PathProblem::Protected(hit),
                &format!("`{name}` moves"),
            );
            return;
        }
    }
}

/// The existing paths a glob whose wildcards are all in its last
/// component matches (`.*`, `dir/.g*`), as bash expands it without
/// `dotglob`; nothing for a glob with wildcards in a directory part. The
/// entries an earlier segment of the string writes (`extra`: `echo >
/// x/.envrc && cp -r x/.e* .`) count as existing (review 12, F19).
fn glob_children(
    cwd: &std::path::Path,
    pattern: &str,
    extra: &[std::path::PathBuf],
) -> Vec<std::path::PathBuf> {
    let (dir, last) = match pattern.rsplit_once('/') {
        Some(("", l)) => ("/", l),
        Some((d, l)) => (d, l),
        None => (".", pattern),
    };
    if dir.contains(['*', '?', '[']) || last.is_empty() {
        return Vec::new();
    }
    let base = crate::parse::join_physical(cwd, dir);
    let mut names: Vec<String> = extra
        .iter()
        .filter_map(|w| w.strip_prefix(&base).ok())
        .filter_map(|r| r.components().next())
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Ok(entries) = std::fs::read_dir(&base) {
        names.extend(
            entries
                .take(100_000)
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned()),
        );
    }
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| {
            (last.starts_with('.') || !n.starts_with('.'))
                && n != "."
                && n != ".."
                && super::paths::fnmatch(last.as_bytes(), n.as_bytes())
        })
        .map(|n| base.join(n))
        .collect()
}

/// The paths the segments before the one being judged wrote
/// ([`PolicyContext::writes_seen`] up to [`PolicyContext::seen_before`]).
fn earlier_writes(ctx: &PolicyContext) -> Vec<std::path::PathBuf> {
    let seen = ctx.writes_seen.borrow();
    seen[..ctx.seen_before.get().min(seen.len())].to_vec()
}

/// Entries listed at most in a source tree copied or moved into a
/// directory ([`landing`]); past it the tree is not seen through.
const TREE_ENTRIES: usize = 4096;

/// Where the sources of `cp`, `mv`, `ln`, `install`, `git mv` and `rsync` land
/// when the destination is a directory (`-t DIR`, a last operand that is
/// an existing directory, ends in `/`, or follows several sources, unless
/// `-T`): `DIR/basename(SRC)`, checked as a write (`cp t/.envrc .` writes
/// `./.envrc`). A directory copied or moved there (`cp -r`, `cp -a`, `mv`;
/// `SRC/.` merges its contents into `DIR` itself) writes every path of
/// its tree below the landing path: the tree is listed (bounded by
/// [`TREE_ENTRIES`]) and a protected relative path (`x/.git/hooks/...`,
/// `x/.claude/settings.json`) is refused. A tree that cannot be listed,
/// landing on a root or an ancestor of a protected path, asks unconfined
/// (confined, the restore puts protected files back).
pub(super) fn landing(
    name: &str,
    p: &ParsedArgs,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    if !matches!(name, "cp" | "mv" | "ln" | "install" | "git mv" | "rsync") {
        return;
    }
    let has = |n: &str| p.options.iter().any(|o| o.name == n);
    // `install -d` makes directories. (`install -D SRC DEST` writes DEST,
    // `install -Dt DIR SRC` writes `DIR/SRC`: both land as usual.)
    if name == "install" && has("-d") {
        return;
    }
    // `-T`: the last operand is the destination itself, and a directory
    // source merges its contents into it (`cp -rT t2 .` is `cp -r t2/. .`).
    let no_target_dir = has("-T");
    let recursive = match name {
        "cp" | "rsync" => has("-r") || has("-a"),
        "mv" | "git mv" => true,
        _ => false,
    };
    let target = p
        .options
        .iter()
        .find(|o| o.name == "-t")
        .and_then(|o| o.value.as_ref());
    let all: Vec<&Word> = p.operands.iter().map(|(w, _)| *w).collect();
    let (sources, dir): (&[&Word], &Word) = match (target, all.split_last()) {
        (Some(d), _) => (&all[..], d),
        (None, Some((last, rest))) if !rest.is_empty() => (rest, *last),
        _ => return,
    };
    if dir.unresolved || dir.glob {
        return;
    }
    let d = ctx.resolve(seg, &dir.value);
    let named_dir = dir.value.ends_with('/')
        || matches!(dir.value.as_str(), "." | "..")
        || dir.value.ends_with("/.")
        || dir.value.ends_with("/..");
    // rsync puts a directory source below the destination, made if need be.
    // Otherwise the one source becomes DEST itself (`cp -r x new`: the
    // tree of `x` lands at `new/...`); DEST was checked as an operand.
    let into_dir = !no_target_dir
        && (target.is_some() || named_dir || sources.len() > 1 || d.is_dir() || name == "rsync");
    // Review 12, F18: `cp -r x DEST/` and `mv x DEST/` with one source and
    // a DEST that does not exist make DEST itself (the slash only asks
    // for a directory); and a DEST an earlier command of the string makes
    // (`mkdir -p y && mv x y`) is entered. Both readings are checked,
    // `DEST/x` and DEST.
    let both = !no_target_dir
        && target.is_none()
        && sources.len() == 1
        && name != "rsync"
        && !matches!(dir.value.as_str(), "." | "..")
        && !dir.value.ends_with("/.")
        && !dir.value.ends_with("/..")
        && d.symlink_metadata().is_err();
    let earlier = earlier_writes(ctx);
    let mut landed_here = Vec::new();
    for w in sources {
        if w.unresolved {
            continue;
        }
        let srcs: Vec<std::path::PathBuf> = if w.glob {
            glob_children(&ctx.resolve(seg, "."), &w.value, &earlier)
        } else {
            vec![ctx.resolve(seg, &w.value)]
        };
        for src in srcs {
            // `SRC/.` (and `cp -r SRC/ DIR` is still `DIR/SRC`): the
            // contents land in DIR itself.
            let merge = !into_dir
                || w.value == "."
                || w.value.ends_with("/.")
                || (name == "rsync" && w.value.ends_with('/'));
            let mut ats = Vec::new();
            let plain_merge = w.value == "." || w.value.ends_with("/.");
            if merge {
                ats.push((d.clone(), true));
            }
            if !merge || (both && !plain_merge) {
                if let Some(b) = src.file_name() {
                    ats.push((d.join(b), false));
                }
                if !merge && both {
                    ats.push((d.clone(), true));
                }
            }
            for (at, itself) in ats {
                if !itself && let Err(e) = super::path_checks::check_write(ctx, &at, false) {
                    path_reason(v, &at, &e, &format!("`{name}` puts `{}` at", w.raw()));
                    return;
                }
                landed_here.push((at.clone(), src.clone()));
                if !recursive {
                    continue;
                }
                if !landing_tree(name, w, &src, &at, &earlier, ctx, v) {
                    return;
                }
            }
        }
    }
    ctx.trees_landed.borrow_mut().extend(landed_here);
}

/// The tree of the source `src` (the word `w`) put at `at`: its entries on
/// disk, and the paths an earlier segment of the string wrote below it
/// (`earlier`: `mkdir x && echo > x/.envrc && cp -r x/. .`, review 12,
/// F19), each checked as a write below `at`. A source that an earlier
/// segment copied or moved a tree into (or onto) holds that tree too,
/// checked below `at` as well. `false` when a reason was added.
fn landing_tree(
    name: &str,
    w: &Word,
    src: &std::path::Path,
    at: &std::path::Path,
    earlier: &[std::path::PathBuf],
    ctx: &PolicyContext,
    v: &mut Verdict,
) -> bool {
    let hit = |landed: std::path::PathBuf, e| {
        (
            landed,
            e,
            format!(
                "`{name}` copies the tree `{}`, which puts a file at",
                w.raw()
            ),
        )
    };
    // What the string wrote below the source, mapped into the landing.
    for p in earlier {
        let Ok(rel) = p.strip_prefix(src) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let landed = at.join(rel);
        if let Err(e) = super::path_checks::check_write(ctx, &landed, false) {
            let (l, e, what) = hit(landed, e);
            path_reason(v, &l, &e, &what);
            return false;
        }
    }
    // What an earlier copy or move of the string put into the source, or
    // the source itself (`mv x y && mv y/x .gemini`, `cp evil/.envrc x/ &&
    // cp -r x/. .`): the earlier source's tree, mapped (up to eight
    // copies deep).
    let mut more: Vec<(std::path::PathBuf, std::path::PathBuf)> = Vec::new();
    let mut look = vec![(src.to_path_buf(), at.to_path_buf())];
    for _ in 0..8 {
        let mut next = Vec::new();
        for (s, a) in &look {
            for (t_at, t_src) in ctx.trees_landed.borrow().iter() {
                if let Ok(rel) = s.strip_prefix(t_at) {
                    // The source is (below) what landed: the earlier
                    // source's tree is (part of) it.
                    next.push((t_src.join(rel), a.clone()));
                } else if let Ok(rel) = t_at.strip_prefix(s) {
                    // Something landed inside the source.
                    next.push((t_src.clone(), a.join(rel)));
                }
            }
        }
        if next.is_empty() {
            break;
        }
        more.extend(next.iter().cloned());
        look = next;
    }
    for (s, a) in more {
        if let Err(e) = super::path_checks::check_write(ctx, &a, false) {
            let (l, e, what) = hit(a, e);
            path_reason(v, &l, &e, &what);
            return false;
        }
        if s.is_dir() && !tree_ok(name, w, &s, &a, ctx, v) {
            return false;
        }
    }
    if !src.is_dir() {
        return true;
    }
    tree_ok(name, w, src, at, ctx, v)
}

/// [`tree_hit`] of `src` put at `at`, as a reason: `false` when one was
/// added.
fn tree_ok(
    name: &str,
    w: &Word,
    src: &std::path::Path,
    at: &std::path::Path,
    ctx: &PolicyContext,
    v: &mut Verdict,
) -> bool {
    let hit = |landed: std::path::PathBuf, e| {
        (
            landed,
            e,
            format!(
                "`{name}` copies the tree `{}`, which puts a file at",
                w.raw()
            ),
        )
    };
    match tree_hit(ctx, src, at) {
        Ok(None) => true,
        Ok(Some((landed, e))) => {
            let (l, e, what) = hit(landed, e);
            path_reason(v, &l, &e, &what);
            false
        }
        Err(()) => {
            // Unconfined, a tree too large to list may hold a
            // protected path for any destination (a nested
            // repository's `.git/hooks` below it): it asks.
            if ctx.confined {
                return true;
            }
            v.add(
                Layer::Policy,
                ReasonId::PolicyUnconfinedNamed,
                Decision::Ask,
                format!(
                    "`{name}` puts the tree `{}` into `{}`, and the tree is too large to list for protected paths (`.git/hooks`, `.claude/`); nothing confines it here",
                    w.raw(),
                    at.display()
                ),
                Some("copy a smaller tree, or run it inside the sandbox (`hook --rewrite`, `safe-exec -c`)".into()),
            );
            false
        }
    }
}

/// The first path of the tree `src` that, put below `at`, is a write the
/// roots refuse (a protected path); `Err` when the tree cannot be listed
/// within [`TREE_ENTRIES`] entries. Symbolic links are not followed (`cp
/// -r` and `mv` copy them as links).
fn tree_hit(
    ctx: &PolicyContext,
    src: &std::path::Path,
    at: &std::path::Path,
) -> Result<Option<(std::path::PathBuf, super::paths::PathProblem)>, ()> {
    let mut stack = vec![std::path::PathBuf::new()];
    let mut seen = 0usize;
    // Each directory on the way is looked at once for all the entries
    // below it, not once per entry (review 10 R12).
    let mut memo = super::paths::DirMemo::for_tree();
    while let Some(rel) = stack.pop() {
        let entries = std::fs::read_dir(src.join(&rel)).map_err(|_| ())?;
        for e in entries {
            seen += 1;
            if seen > TREE_ENTRIES {
                return Err(());
            }
            let e = e.map_err(|_| ())?;
            let r = rel.join(e.file_name());
            let landed = at.join(&r);
            if let Err(err) = super::path_checks::check_write_in(ctx, &landed, false, &mut memo) {
                return Ok(Some((landed, err)));
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(r);
            }
        }
    }
    Ok(None)
}

/// GNU sed's `-i SUFFIX` (`--in-place=SUFFIX`) names a backup file: each
/// `*` is replaced by the edited file's name *as given* (`-i'bak/*' d/f`
/// backs up to `bak/d/f`), and a suffix without `*` is appended (`-i.bak
/// f`: `f.bak`); the result is relative to the cwd, so a `/` makes it any
/// path (`-i'.git/hooks/*'`, `-i'/home/u/.bashr*'`). The original file is
/// renamed there, content and mode kept: each backup path is checked as a
/// write (checked with GNU sed 4.9).
pub(super) fn sed_backup(
    name: &str,
    p: &ParsedArgs,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    if !matches!(name, "sed" | "gsed") {
        return;
    }
    let Some(suffix) = p
        .options
        .iter()
        .filter(|o| o.name == "-i")
        .filter_map(|o| o.value.as_ref())
        .next_back()
    else {
        return;
    };
    if suffix.value.is_empty() {
        return;
    }
    if suffix.unresolved {
        // Confined, the sandbox holds the rename wherever it leads.
        if ctx.confined {
            return;
        }
        super::unknown::unknown(
            v,
            ctx,
            &format!(
                "`{name}`'s in-place backup suffix `{}` is not literal, and it can be a path",
                suffix.raw()
            ),
        );
        return;
    }
    for (w, t) in &p.operands {
        if !t.plain_path() || w.unresolved || w.glob {
            continue;
        }
        let backup = if suffix.value.contains('*') {
            suffix.value.replace('*', &w.value)
        } else {
            format!("{}{}", w.value, suffix.value)
        };
        let at = ctx.resolve(seg, &backup);
        if let Err(e) = super::path_checks::check_write(ctx, &at, false) {
            path_reason(
                v,
                &at,
                &e,
                &format!(
                    "`{name}`'s in-place backup suffix `{}` backs `{}` up to",
                    suffix.value,
                    w.raw()
                ),
            );
            return;
        }
        ctx.writes_seen.borrow_mut().push(at);
    }
}
