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
            check_redirect(ctx, &p).and_then(|()| spelled_nested(ctx, seg, &r.target, &p))
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
/// protected path too ([`paths::Roots::nested_git_hit`]), and so is a
/// file written into a directory of the caller's `PATH` inside a root
/// (`.venv/bin/git` with the venv activated: the next bare `git` runs it,
/// and the user's shell too).
pub(super) fn check_write(
    ctx: &PolicyContext,
    p: &Path,
    destructive: bool,
) -> Result<(), PathProblem> {
    check_write_in(ctx, p, destructive, &mut paths::DirMemo::default())
}

/// [`check_write`] with the directories' kinds kept in `memo` (many paths
/// of one tree).
pub(super) fn check_write_in(
    ctx: &PolicyContext,
    p: &Path,
    destructive: bool,
    memo: &mut paths::DirMemo,
) -> Result<(), PathProblem> {
    ctx.roots.check_write_in(p, destructive, memo)?;
    // A repository the string makes before this write (review 11 F9).
    if !destructive
        && let Some(hit) = ctx
            .made_repos
            .iter()
            .filter(|t| p.starts_with(t))
            .find_map(|t| ctx.roots.protected_hit_at(t, p))
    {
        return Err(PathProblem::Protected(hit));
    }
    // A protected tree too large for the link scan (review 11 F11).
    if !ctx.confined
        && let Some(d) = ctx.roots.links_unscanned()
        && !p.starts_with(d)
    {
        return Err(PathProblem::Unscanned(d.to_path_buf()));
    }
    if !ctx.confined
        && !destructive
        && let Some(hit) = ctx
            .roots
            .nested_git_hit(p)
            .or_else(|| super::git_dirs::planted_git_dir(ctx, p))
    {
        return Err(PathProblem::NestedGit(hit));
    }
    if !ctx.confined
        && let Some(dir) = p.parent()
        && ctx.path_dirs.in_roots(ctx.roots).iter().any(|d| d == dir)
        && ctx
            .roots
            .write
            .iter()
            .any(|r| dir.starts_with(r) && dir != r.as_path())
    {
        return Err(PathProblem::Protected(dir.to_path_buf()));
    }
    Ok(())
}

/// A written path as spelled, when it goes through a symbolic link (it
/// differs from where it resolves, `p`): a nested repository's protected
/// entry that is a link to a directory outside that repository
/// (`app/.claude -> ../shared/claude`, review 11 F6) is protected by its
/// own spelling, as the root's entries are.
fn spelled_nested(
    ctx: &PolicyContext,
    seg: &Segment,
    raw: &str,
    p: &Path,
) -> Result<(), PathProblem> {
    let spelled = crate::sys::path::join_physical(&seg.cwd, raw);
    if spelled.as_path() == p {
        return Ok(());
    }
    match ctx.roots.nested_protected_hit(&spelled) {
        Some(hit) => Err(PathProblem::Protected(hit)),
        None => Ok(()),
    }
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
        PathProblem::Unscanned(d) => {
            v.add(
                Layer::Policy,
                ReasonId::RootsProtected,
                Decision::Ask,
                format!(
                    "{what} `{shown}`, and the protected tree `{}` holds more entries than are looked through for links (a link there makes where it leads protected): this write may change such a target, and nothing confines this command to undo it",
                    d.display()
                ),
                Some(format!(
                    "remove what `{}` does not need, or run it inside the sandbox (`safe-exec hook --rewrite`)",
                    d.display()
                )),
            );
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
        let written = ctx.resolve(seg, &w.value);
        ctx.writes_seen.borrow_mut().push(written);
    }
    let mut res = if t == Access::Write {
        check_write(ctx, &p, destructive).and_then(|()| {
            if destructive {
                Ok(())
            } else {
                spelled_nested(ctx, seg, value, &p)
            }
        })
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
    if res.is_ok()
        && w.glob
        && t == Access::Read
        && let Some(hit) = glob_secret(seg, ctx, &w.value)
    {
        // `cat .env*`, `cat .[e]nv`, `cat * .*`: the glob expands to a
        // secret file's name (`[paths] secret_names`).
        path_reason(
            v,
            &hit,
            &PathProblem::Secret(hit.clone()),
            &format!("`{name}` reads, through the glob `{}`,", w.raw()),
        );
        return;
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

/// A source that a hard link or a move gives a new name (`ln .env x`,
/// `cp -l .env x`, `mv .env y`, `mv .e* y`): the file is then read under
/// a name no secret check knows, so a secret source (a `secret_names`
/// file, a `deny_read` path, or a glob that expands to one) is refused as
/// a read of it.
pub(super) fn renamed_secret(
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    w: &Word,
    name: &str,
    verb: &str,
) {
    if w.unresolved {
        return;
    }
    let what = format!("`{name}` {verb} (then readable under another name)");
    // Where the file lands keeps a secret name (`mv .env.local .`, `mv
    // .env .env.bak`, `ln .env dir/`): still a secret read there.
    let keeps_name =
        |src: &Path| new_name(seg, ctx, w, src).is_some_and(|n| ctx.roots.is_secret_name(&n));
    if w.glob {
        let pattern = ctx.resolve(seg, &w.value);
        if let Some(d) = ctx
            .roots
            .deny_read
            .iter()
            .find(|d| paths::glob_may_reach(&pattern, d, false))
        {
            path_reason(v, d, &PathProblem::Secret(d.clone()), &what);
        } else if let Some(hit) = glob_secret(seg, ctx, &w.value)
            && !keeps_name(&hit)
        {
            path_reason(
                v,
                &hit,
                &PathProblem::Secret(hit.clone()),
                &format!(
                    "`{name}` {verb}, through the glob `{}`, (then readable under another name)",
                    w.raw()
                ),
            );
        }
        return;
    }
    let p = ctx.resolve(seg, &w.value);
    if let Err(e @ PathProblem::Secret(_)) = ctx.roots.check_read(&p)
        && !(ctx.roots.is_secret_name(&p) && keeps_name(&p))
    {
        path_reason(v, &p, &e, &what);
    }
}

/// The path a source `src` (the word `w`) of `ln`, `cp -l` or `mv` gets:
/// in the target directory (`-t DIR`, `--target-directory=DIR`, or a last
/// operand that is an existing directory, ends in `/`, or follows several
/// sources, unless `-T`),
/// or the last operand itself. `None` when it is not known.
fn new_name(seg: &Segment, ctx: &PolicyContext, w: &Word, src: &Path) -> Option<PathBuf> {
    let argv = seg.argv_vec();
    let mut dir = None;
    let mut no_dir = false;
    let mut operands = Vec::new();
    let mut k = 1;
    let mut options = true;
    while k < argv.len() {
        let a = argv[k].as_str();
        k += 1;
        if options && a == "--" {
            options = false;
        } else if options && (a == "-t" || a == "--target-directory") {
            dir = argv.get(k).cloned();
            k += 1;
        } else if let Some(d) = a.strip_prefix("--target-directory=").filter(|_| options) {
            dir = Some(d.to_string());
        } else if options && a == "--no-target-directory" {
            no_dir = true;
        } else if options && a.starts_with('-') && a.len() > 1 && !a.starts_with("--") {
            if let Some(at) = a.find('t') {
                let rest = &a[at + 1..];
                dir = if rest.is_empty() {
                    k += 1;
                    argv.get(k - 1).cloned()
                } else {
                    Some(rest.to_string())
                };
            } else if a.contains('T') {
                no_dir = true;
            }
        } else if !(options && a.starts_with('-') && a.len() > 1) {
            operands.push(a.to_string());
        }
    }
    let base = src.file_name()?;
    if let Some(d) = dir {
        return Some(ctx.resolve(seg, &d).join(base));
    }
    let last = operands.last()?;
    if operands.len() < 2 || *last == w.value {
        return None;
    }
    let target = ctx.resolve(seg, last);
    let named_dir = last.ends_with('/')
        || [".", ".."].contains(&last.as_str())
        || last.ends_with("/.")
        || last.ends_with("/..");
    // More than one source: the last operand is a directory.
    if !no_dir && (named_dir || operands.len() > 2 || target.is_dir()) {
        Some(target.join(base))
    } else {
        Some(target)
    }
}

/// The secret file (`[paths] secret_names`) a glob read expands to, if any:
/// the glob is expanded against the directory entries as bash would
/// (leading dots only matched by a dot, unless the string runs `shopt`),
/// bounded to [`GLOB_ENTRIES`] entries read; the files this same string
/// writes count as entries. Past the bound, or for a component with an
/// extglob, a name is taken to match when it could: a secret file is never
/// read unnoticed because a directory is large. Templates excepted from
/// `secret_names` (`.env.example`) do not count.
fn glob_secret(seg: &Segment, ctx: &PolicyContext, pattern: &str) -> Option<PathBuf> {
    if ctx.roots.secret_names.is_empty() {
        return None;
    }
    let full = ctx.resolve(seg, pattern);
    let comps: Vec<String> = full
        .components()
        .skip(1)
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let mut budget = GLOB_ENTRIES;
    let mut current = vec![PathBuf::from("/")];
    for (i, comp) in comps.iter().enumerate() {
        let last = i + 1 == comps.len();
        let wild =
            comp.contains(['*', '?', '[']) || ["+(", "@(", "!("].iter().any(|e| comp.contains(e));
        let mut next = Vec::new();
        for dir in &current {
            if !wild {
                let p = dir.join(comp);
                if last || p.is_dir() {
                    next.push(p);
                }
                continue;
            }
            let mut names: Vec<String> = ctx
                .written
                .iter()
                .filter(|w| w.parent() == Some(dir.as_path()))
                .filter_map(|w| w.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            if let Ok(entries) = std::fs::read_dir(dir) {
                for e in entries {
                    if budget == 0 {
                        break;
                    }
                    budget -= 1;
                    if let Ok(e) = e {
                        names.push(e.file_name().to_string_lossy().into_owned());
                    }
                }
            }
            let exhausted = budget == 0;
            for n in names {
                if glob_name_matches(comp, &n, ctx.shopt) {
                    let p = dir.join(&n);
                    if last || p.is_dir() {
                        next.push(p);
                    }
                }
            }
            // Past the bound at any wildcard component (`d/*/.env`, a
            // directory listing `p` after entry 20,000): the entries not
            // read could lead to a secret when the last component could
            // name one.
            if exhausted && may_end_in_secret(ctx, &comps) {
                return Some(dir.join(comps[i..].join("/")));
            }
        }
        if next.len() > GLOB_ENTRIES {
            next.truncate(GLOB_ENTRIES);
        }
        current = next;
        if current.is_empty() {
            return None;
        }
    }
    current.into_iter().find(|p| ctx.roots.is_secret_name(p))
}

/// Whether a glob's last component could name a secret file: a pattern
/// that matches one (per [`glob_may_name_secret`]) or a literal secret
/// name (`.env`).
fn may_end_in_secret(ctx: &PolicyContext, comps: &[String]) -> bool {
    comps.last().is_some_and(|last| {
        glob_may_name_secret(ctx, last) || ctx.roots.is_secret_name(Path::new(last))
    })
}

/// How many directory entries one glob operand may read while it is
/// checked for a secret file.
const GLOB_ENTRIES: usize = 20_000;

/// Whether the glob component `pat` matches the file name `name` as bash
/// expands it: a leading dot only by a leading dot (unless `dotglob` may
/// be on), without case too when `nocaseglob` may be on; an extglob
/// (`@(...)`) is taken to match.
fn glob_name_matches(pat: &str, name: &str, shopt: bool) -> bool {
    if name == "." || name == ".." {
        return false;
    }
    // An extglob needs `shopt -s extglob`; whether it matches a leading
    // dot (`@(.env)`) is not modelled: taken to match.
    if ["?(", "*(", "+(", "@(", "!("]
        .iter()
        .any(|e| pat.contains(e))
    {
        return true;
    }
    if name.starts_with('.') && !pat.starts_with('.') && !shopt {
        return false;
    }
    paths::fnmatch(pat.as_bytes(), name.as_bytes())
        || (shopt
            && paths::fnmatch(
                pat.to_ascii_lowercase().as_bytes(),
                name.to_ascii_lowercase().as_bytes(),
            ))
}

/// Whether the glob component `pat` could name a secret file: it matches
/// one of the names the `secret_names` patterns stand for (`.env`,
/// `.env.local`, ...) that is not excepted.
fn glob_may_name_secret(ctx: &PolicyContext, pat: &str) -> bool {
    ctx.roots
        .secret_names
        .iter()
        .filter(|g| !g.starts_with('!'))
        .flat_map(|g| {
            [
                g.replace('*', ""),
                g.replace('*', "local"),
                g.replace('?', "x"),
            ]
        })
        .any(|n| {
            glob_name_matches(pat, &n, true) && ctx.roots.is_secret_name(std::path::Path::new(&n))
        })
}

#[cfg(test)]
mod tests {
    use super::glob_name_matches;

    #[test]
    fn glob_names_as_bash_matches_them() {
        for (pat, name) in [
            (".env*", ".env"),
            (".[e]nv", ".env"),
            (".en?", ".env"),
            (".*", ".env"),
            ("@(.env)", ".env"),
        ] {
            assert!(glob_name_matches(pat, name, false), "{pat} {name}");
        }
        // A leading dot only by a dot, unless `shopt` may have set dotglob.
        assert!(!glob_name_matches("*", ".env", false));
        assert!(!glob_name_matches("?env", ".env", false));
        assert!(glob_name_matches("*", ".env", true));
        // Without case only when `shopt` may have set nocaseglob.
        assert!(!glob_name_matches(".ENV*", ".env", false));
        assert!(glob_name_matches(".ENV*", ".env", true));
        assert!(!glob_name_matches(".*", "..", true));
        assert!(!glob_name_matches("*.md", ".env", true));
    }
}
