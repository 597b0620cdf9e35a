//! Paths against the roots: operands, option values, redirection targets
//! and globs, and the reason each kind of path problem gives.

use std::path::{Path, PathBuf};

use super::ReasonId;
use super::paths::{self, PathProblem};
use super::registry::Risk;
use super::unknown::{unknown, unknown_with};
use super::{Decision, Layer, PolicyContext, Verdict, confined};
use crate::parse::{Segment, Word};

/// What a command does with a path it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads it (or, when destructive, reads the tree under it).
    Read,
    /// Writes, creates or deletes it.
    Write,
}

pub(super) fn redirections(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    for r in &seg.redirections {
        if !r.writes && !r.reads {
            continue;
        }
        if paths::is_network_path(&r.target) {
            v.add(
                Layer::Policy,
                ReasonId::PolicyNetworkRedirection,
                Decision::Deny,
                format!("redirection to `{}` opens a network connection", r.target),
                None,
            );
            v.risk = Risk::Dangerous;
            continue;
        }
        if !r.literal {
            unknown(
                v,
                ctx,
                &format!("the redirection target `{}` is not literal", r.target),
            );
            continue;
        }
        let p = ctx.resolve(seg, &r.target);
        if r.writes && !paths::is_device_sink(&p) {
            ctx.writes_seen.borrow_mut().push(p.clone());
        }
        let res = if r.writes {
            check_redirect(ctx, &p)
        } else {
            ctx.roots.check_read(&p)
        };
        if r.writes && res.is_ok() && !paths::is_device_sink(&p) {
            v.risk = v.risk.max(Risk::Write);
        }
        if let Err(e) = res {
            path_reason(
                v,
                &p,
                &e,
                if r.writes {
                    "redirection writes"
                } else {
                    "redirection reads"
                },
            );
        }
    }
}

/// [`paths::Roots::check_write`] for this decision: unconfined, a write
/// (not a removal) into a nested repository's git entry is refused as a
/// protected path too ([`paths::Roots::nested_git_hit`]).
pub(super) fn check_write(
    ctx: &PolicyContext,
    p: &Path,
    destructive: bool,
) -> Result<(), PathProblem> {
    ctx.roots.check_write(p, destructive)?;
    if !ctx.confined
        && !destructive
        && let Some(hit) = ctx.roots.nested_git_hit(p)
    {
        return Err(PathProblem::NestedGit(hit));
    }
    Ok(())
}

/// [`paths::Roots::check_redirect`] for this decision (see
/// [`check_write`]).
pub(super) fn check_redirect(ctx: &PolicyContext, p: &Path) -> Result<(), PathProblem> {
    if paths::is_device_sink(p) {
        return Ok(());
    }
    check_write(ctx, p, false)
}

pub(super) fn path_reason(v: &mut Verdict, p: &Path, e: &PathProblem, what: &str) {
    let shown = p.display();
    match e {
        PathProblem::NotReadable => v.add(
            Layer::Policy,
            ReasonId::RootsNotReadable,
            Decision::Deny,
            format!("{what} `{shown}`, outside the readable roots"),
            Some("read inside the project, or ask the user for what you need".into()),
        ),
        PathProblem::NotWritable => v.add(
            Layer::Policy,
            ReasonId::RootsNotWritable,
            Decision::Deny,
            format!("{what} `{shown}`, outside the writable roots"),
            Some("write inside the project directory or $TMPDIR".into()),
        ),
        PathProblem::Secret(d) if d == p => v.add(
            Layer::Policy,
            ReasonId::RootsSecret,
            Decision::Deny,
            format!("{what} `{shown}`, a secret file (its name is in [paths] secret_names)"),
            Some("leave secrets alone: read the non-secret template (e.g. .env.example) or ask the user for the value you need".into()),
        ),
        PathProblem::Secret(d) => v.add(
            Layer::Policy,
            ReasonId::RootsSecret,
            Decision::Deny,
            format!(
                "{what} `{shown}`, inside the protected path `{}`",
                d.display()
            ),
            Some("leave secrets alone: work with the project's own files, or ask the user for the value you need".into()),
        ),
        PathProblem::Protected(d) => {
            v.add(
                Layer::Policy,
                ReasonId::RootsProtected,
                Decision::Deny,
                format!(
                    "{what} `{shown}`, which changes `{}`: a protected file ([paths] protected) that runs later outside any sandbox",
                    d.display()
                ),
                Some("leave it unchanged and ask the user to make this change".into()),
            );
            v.risk = Risk::Dangerous;
        }
        PathProblem::NestedGit(d) => {
            v.add(
                Layer::Policy,
                ReasonId::RootsProtected,
                Decision::Deny,
                format!(
                    "{what} `{shown}`, which changes `{}`: a nested repository's git entry; when it is a submodule the superproject's `git status` runs git in it with its configuration (`core.fsmonitor`, hooks), outside any sandbox, and nothing confines this command to undo it",
                    d.display()
                ),
                Some("leave it unchanged and ask the user to make this change, or run it inside the sandbox (`safe-exec hook --rewrite`)".into()),
            );
            v.risk = Risk::Dangerous;
        }
        PathProblem::Broad => {
            v.add(
                Layer::Policy,
                ReasonId::RootsBroadTarget,
                Decision::Deny,
                format!("{what} `{shown}` recursively; that target is too broad"),
                Some("name the specific directory inside the project, e.g. ./build".into()),
            );
            v.risk = Risk::Dangerous;
        }
    }
}

pub(super) fn path_operand(
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    w: &Word,
    t: Access,
    destructive: bool,
    name: &str,
) {
    if w.unresolved {
        if confined::unresolved_read_ok(ctx, w, t, destructive) {
            v.note(
                Layer::Policy,
                format!(
                    "{name}: reads `{}`, known only at run time; runs confined",
                    w.raw()
                ),
            );
            return;
        }
        unknown_with(
            v,
            ctx,
            &format!(
                "`{name}` path `{}` contains an expansion the policy cannot resolve",
                w.raw()
            ),
            "run the inner command first and pass the path it prints literally",
        );
        return;
    }
    // Git pathspec magic (`:/` is the top of the repository, `:(top)`,
    // `:!x`, `:(glob)...`): the path is not what it looks like.
    if name.starts_with("git") && w.value.starts_with(':') {
        unknown(
            v,
            ctx,
            &format!(
                "`{name}` pathspec `{}` uses pathspec magic (`:/` is the whole repository)",
                w.raw()
            ),
        );
        return;
    }
    // The path checked: the word, or a glob's fixed directory part (a
    // slice of it; no copy).
    let mut value: &str = &w.value;
    if w.glob && paths::glob_then_parent(&w.value) {
        unknown(
            v,
            ctx,
            &format!(
                "`{name}` path `{}` has `..` after a glob: where it leads depends on what the glob matches",
                w.raw()
            ),
        );
        return;
    }
    if w.glob {
        if t == Access::Write && !w.value.contains('/') && w.value.starts_with(['*', '?', '[']) {
            v.add(
                Layer::Policy,
                ReasonId::PolicyGlobOptionInjection,
                Decision::Ask,
                format!(
                    "`{name} {}`: a file name matched by the glob could be read as an option",
                    w.raw()
                ),
                Some(format!("{name} ./{}", w.raw())),
            );
        }
        // Check the fixed directory part of the glob.
        let cut = value.find(['*', '?', '[']).unwrap_or(value.len());
        value = match value[..cut].rfind('/') {
            Some(0) => "/",
            Some(i) => &value[..i],
            None => ".",
        };
        // `rm -rf *` empties the directory: checked as the directory itself,
        // so in a writable root it is as broad as `rm -rf .`.
    }
    let p: PathBuf = ctx.resolve(seg, value);
    // `mkdir` and `touch` create nothing a program could run or load.
    if t == Access::Write && !matches!(seg.program.as_str(), "mkdir" | "touch") {
        ctx.writes_seen
            .borrow_mut()
            .push(ctx.resolve(seg, &w.value));
    }
    let mut res = if t == Access::Write {
        check_write(ctx, &p, destructive)
    } else if destructive {
        ctx.roots.check_read_tree(&p)
    } else {
        ctx.roots.check_read(&p)
    };
    if res.is_ok() && w.glob {
        // The glob's fixed prefix is fine; could the pattern itself reach a
        // protected path (`cat ~/.ss?/id_rsa`)?
        let pattern = ctx.resolve(seg, &w.value);
        if let Some(d) = ctx
            .roots
            .deny_read
            .iter()
            .find(|d| paths::glob_may_reach(&pattern, d, destructive))
        {
            res = Err(PathProblem::Secret(d.clone()));
        }
    }
    if let Err(e) = res {
        let what = if t == Access::Write {
            format!("`{name}` writes")
        } else {
            format!("`{name}` reads")
        };
        path_reason(v, &p, &e, &what);
    }
}
