//! Damage inside the writable roots that no sandbox can prevent: the
//! project's history and uncommitted work. The sandbox lets a command write
//! the project, so these are refused up front, confined or not, each with
//! what to do instead.

use super::ReasonId;
use super::args::ParsedArgs;
use super::path_checks::Access;
use super::registry::Risk;
use super::{Decision, Layer, PolicyContext, Verdict};
use crate::parse::Segment;

fn refuse(v: &mut Verdict, what: String, instead: &str) {
    v.add(
        Layer::Policy,
        ReasonId::HistoryDestroy,
        Decision::Deny,
        format!("{what}; the sandbox cannot protect work inside the project"),
        Some(instead.into()),
    );
    v.risk = Risk::Dangerous;
}

/// Whether `name` is `-{short}` (compared without building the string).
fn is_short_name(name: &str, short: char) -> bool {
    name.strip_prefix('-').is_some_and(|r| {
        let mut c = r.chars();
        c.next() == Some(short) && c.next().is_none()
    })
}

/// Whether an option (or a short cluster) was given: `-W`, `-SW`, `--worktree`.
fn has_flag(p: &ParsedArgs, short: char, long: &str) -> bool {
    p.options.iter().any(|o| {
        o.written == long
            || (!o.written.starts_with("--")
                && o.written.starts_with('-')
                && o.written[1..].contains(short))
            || is_short_name(o.name, short)
    })
}

/// A git pathspec naming the whole repository whatever the cwd: `:/`,
/// `:/*`, `:(top)`, `:(top).`, `:(top,glob)**`.
fn whole_repo_pathspec(s: &str) -> bool {
    let rest = if let Some(r) = s.strip_prefix(":(") {
        let Some((magic, rest)) = r.split_once(')') else {
            return false;
        };
        if !magic.split(',').any(|m| m == "top") {
            return false;
        }
        rest
    } else if let Some(r) = s.strip_prefix(":/") {
        r
    } else {
        return false;
    };
    rest.trim_matches(['*', '.', '/']).is_empty()
}

/// Checks one git subcommand (`name` is `git checkout`, ...).
pub fn git(name: &str, p: &ParsedArgs, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    // The operands, read where an arm needs them (a vector of them for
    // every segment was built and dropped).
    let ops = || p.operands.iter().map(|(w, _)| w.value.as_str());
    let first = ops().next();
    let whole = || ops().any(whole_repo_pathspec);
    match name {
        "git checkout" | "git restore" | "git rm" | "git clean" | "git stash push" if whole() => {
            refuse(
                v,
                format!(
                    "`{name} {}` names every file of the repository and throws away their uncommitted changes",
                    ops().collect::<Vec<_>>().join(" ")
                ),
                "name the files you mean, e.g. `git restore src/file.py`, or `git stash` to keep the changes",
            );
        }
        "git restore" if has_flag(p, 'W', "--worktree") => {
            // `-S` alone only unstages; with `-W` the working tree is
            // overwritten too, like `git restore PATH`.
            for (w, _) in &p.operands {
                super::path_operand(seg, ctx, v, w, Access::Write, true, name);
            }
        }
        "git stash drop" | "git stash clear" => refuse(
            v,
            format!("`{name}` deletes stashed work for good"),
            "leave the stash in place; `git stash list` and `git stash show -p` show what it holds",
        ),
        "git reflog" if matches!(first, Some("expire" | "delete")) => refuse(
            v,
            format!(
                "`git reflog {}` deletes reflog entries, the record that lets lost commits be recovered",
                first.unwrap_or_default()
            ),
            "leave the reflog alone; `git reflog` shows it",
        ),
        "git config" => config_write(p, seg, ctx, v),
        // Remotes and upstreams live in `.git/config` too: `git remote add
        // x URL` writes a `[remote "x"]` section exactly as `git config
        // remote.x.url URL` would, so they are refused the same way.
        "git remote"
            if matches!(
                first,
                Some("add" | "set-url" | "rename" | "remove" | "rm" | "set-branches")
            ) =>
        {
            repo_config_write(
                &format!("git remote {}", first.unwrap_or_default()),
                seg,
                ctx,
                v,
                "use the URL directly for one command (`git fetch URL`, `git push URL BRANCH`), or ask the user to change the remotes",
            );
        }
        // Submodules: registering, initialising, re-pointing or absorbing
        // one writes `.git/config` (`submodule.NAME.url`, `.active`) or the
        // git directories under `.git/modules/`, whose config and hooks are
        // protected: refused like `git remote add`. Git later runs commands
        // in a submodule with its own configuration (`core.fsmonitor`).
        "git submodule add"
        | "git submodule init"
        | "git submodule sync"
        | "git submodule set-url"
        | "git submodule set-branch"
        | "git submodule deinit"
        | "git submodule absorbgitdirs" => repo_config_write(
            name,
            seg,
            ctx,
            v,
            "ask the user to set up the submodule; `git submodule status` shows the current ones",
        ),
        "git submodule update" if p.options.iter().any(|o| o.name == "--init") => {
            repo_config_write(
                "git submodule update --init",
                seg,
                ctx,
                v,
                "ask the user to initialise the submodules; `git submodule status` shows them",
            );
        }
        // Unconfined, nothing undoes a submodule checked out where git will
        // later run commands with its configuration.
        "git submodule update" if !ctx.confined => v.add(
            Layer::Policy,
            ReasonId::RootsProtected,
            Decision::Ask,
            "`git submodule update` checks submodules out: the superproject's `git status` then runs git in each, with its own configuration (`core.fsmonitor`, hooks), and nothing confines this command".into(),
            Some("run it inside the sandbox (`safe-exec hook --rewrite`), or confirm it".into()),
        ),
        "git update-index" if !ctx.confined => {
            gitlink_index(p, v);
            // `--add DIR` of an embedded repository records a gitlink too.
            if p.options.iter().any(|o| matches!(o.name, "--add" | "--replace")) {
                embedded_repository("git update-index", p, seg, ctx, v);
            }
        }
        "git add" if !ctx.confined => embedded_repository("git add", p, seg, ctx, v),
        "git branch"
            if p.options.iter().any(|o| {
                o.spec
                    .names
                    .iter()
                    .any(|n| matches!(n.as_str(), "-u" | "--unset-upstream" | "-t"))
            }) =>
        {
            repo_config_write(
                "git branch --set-upstream-to/--unset-upstream/--track",
                seg,
                ctx,
                v,
                "name the upstream for one command (`git push origin BRANCH`, `git rev-list @{u}` after the user sets it), or ask the user to set it",
            );
        }
        _ => {}
    }
}

/// Unconfined: `git update-index --cacheinfo 160000,...` (a gitlink: a
/// submodule the superproject's `git status` enters, with its own
/// configuration) and `--index-info` (entries read from stdin, unseen) are
/// refused; nothing after the command takes them out of the index.
fn gitlink_index(p: &ParsedArgs, v: &mut Verdict) {
    for o in &p.options {
        let why = match o.name {
            "--index-info" => {
                "reads index entries from its input, which may add gitlinks (submodules)"
            }
            "--cacheinfo" => {
                let gitlink = o.value.as_ref().is_none_or(|w| {
                    let mode = w.value.split(',').next().unwrap_or("");
                    w.unresolved
                        || u32::from_str_radix(mode.trim_start_matches('0'), 8)
                            .map_or(true, |m| m == 0o160000)
                });
                if !gitlink {
                    continue;
                }
                "adds a gitlink (mode 160000): a submodule the superproject's `git status` enters"
            }
            _ => continue,
        };
        v.add(
            Layer::Policy,
            ReasonId::RootsProtected,
            Decision::Deny,
            format!(
                "`git update-index {}` {why}; git runs commands there with that repository's configuration (`core.fsmonitor`, hooks), outside any sandbox",
                o.written
            ),
            Some("ask the user to add the submodule, or run it inside the sandbox (`safe-exec hook --rewrite`)".into()),
        );
        v.risk = Risk::Dangerous;
    }
}

/// Unconfined: `git add PATH` (or `git update-index --add PATH`) of a
/// directory holding a `.git` (an embedded repository) records it as a
/// gitlink, a submodule the superproject's `git status` then enters with
/// that repository's configuration: refused. A glob operand is expanded by
/// the shell before git sees it: an embedded repository in the glob's
/// fixed directory may be among its matches, so it is refused too (and a
/// glob with a wildcard before its last `/`, which can reach deeper, asks).
/// (`git add .`/`-A` over one, and an operand known only at run time, are
/// not seen.)
fn embedded_repository(
    cmd: &str,
    p: &ParsedArgs,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    for (w, _) in &p.operands {
        if w.unresolved {
            continue;
        }
        if w.glob {
            glob_over_embedded(cmd, w.raw(), &w.value, seg, ctx, v);
            continue;
        }
        let dir = ctx.resolve(seg, &w.value);
        if embedded(ctx, &dir) {
            refuse_embedded(cmd, w.raw(), &dir, v);
        }
    }
}

/// Whether `dir` holds a `.git` and is neither a writable root (the project
/// itself) nor a submodule `.gitmodules` lists.
fn embedded(ctx: &PolicyContext, dir: &std::path::Path) -> bool {
    !ctx.roots.write.iter().any(|r| r == dir)
        && std::fs::symlink_metadata(dir.join(".git")).is_ok()
        && !known_submodule(dir)
}

fn refuse_embedded(cmd: &str, raw: &str, dir: &std::path::Path, v: &mut Verdict) {
    v.add(
        Layer::Policy,
        ReasonId::RootsProtected,
        Decision::Deny,
        format!(
            "`{cmd} {raw}` records the repository in `{}` as a gitlink (a submodule): the superproject's `git status` then runs git there with its configuration (`core.fsmonitor`, hooks), outside any sandbox",
            dir.display()
        ),
        Some("add its files without its `.git` (remove or move the `.git` first), or ask the user to add it as a submodule".into()),
    );
    v.risk = Risk::Dangerous;
}

/// A glob operand of `cmd`: refused when an embedded repository is an entry
/// of the glob's fixed directory (the shell may expand the glob to it),
/// asked when the glob has a wildcard before its last `/`.
fn glob_over_embedded(
    cmd: &str,
    raw: &str,
    value: &str,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    let cut = value.find(['*', '?', '[']).unwrap_or(value.len());
    let slash = value[..cut].rfind('/');
    if value[cut..].trim_end_matches('/').contains('/') {
        v.add(
            Layer::Policy,
            ReasonId::RootsProtected,
            Decision::Ask,
            format!(
                "`{cmd} {raw}`: the glob can match directories below its first level, and one of them may be an embedded repository, recorded as a gitlink (a submodule the superproject's `git status` enters with that repository's configuration)"
            ),
            Some("name the files or directories to add".into()),
        );
        return;
    }
    let fixed = match slash {
        Some(0) => "/",
        Some(i) => &value[..i],
        None => ".",
    };
    let last = value[slash.map_or(0, |i| i + 1)..].trim_end_matches('/');
    let dir = ctx.resolve(seg, fixed);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    // A directory with more entries than this is not looked through: asked.
    const MAX_LOOKED: usize = 4096;
    for (n, e) in entries.enumerate() {
        if n >= MAX_LOOKED {
            v.add(
                Layer::Policy,
                ReasonId::RootsProtected,
                Decision::Ask,
                format!(
                    "`{cmd} {raw}`: `{}` has too many entries to look for embedded repositories the glob may match",
                    dir.display()
                ),
                Some("name the files or directories to add".into()),
            );
            return;
        }
        let Ok(e) = e else { continue };
        let name = e.file_name();
        if !may_match(last, &name.to_string_lossy()) {
            continue;
        }
        let path = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) && embedded(ctx, &path) {
            refuse_embedded(cmd, raw, &path, v);
            return;
        }
    }
}

/// Whether the shell glob `pat` (one path component) may match `name`:
/// `*` and `?` as the shell has them, a bracket expression as any one
/// character (more matches, never fewer); a leading `.` is matched only by
/// a pattern starting with `.`, as the shell does by default.
fn may_match(pat: &str, name: &str) -> bool {
    fn go(p: &[char], s: &[char]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some(('*', rest)) => (0..=s.len()).any(|i| go(rest, &s[i..])),
            Some(('?', rest)) => !s.is_empty() && go(rest, &s[1..]),
            Some(('[', rest)) => match rest.iter().skip(1).position(|c| *c == ']') {
                Some(end) => !s.is_empty() && go(&rest[end + 2..], &s[1..]),
                None => s.first() == Some(&'[') && go(rest, &s[1..]),
            },
            Some(('\\', rest)) if !rest.is_empty() => {
                s.first() == rest.first() && go(&rest[1..], &s[1..])
            }
            Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    if name.starts_with('.') && !pat.starts_with('.') {
        return false;
    }
    let (p, s): (Vec<char>, Vec<char>) = (pat.chars().collect(), name.chars().collect());
    // Bounded: a pathological pattern of many `*` is not matched (may).
    if p.iter().filter(|c| **c == '*').count() > 8 {
        return true;
    }
    go(&p, &s)
}

/// Whether `dir` is a submodule its superproject's `.gitmodules` lists
/// (staging a submodule's new commit, `git add sub`, is ordinary work).
fn known_submodule(dir: &std::path::Path) -> bool {
    use crate::supervisor::protect::gitlinks;
    dir.ancestors().skip(1).any(|top| {
        let Ok(rel) = dir.strip_prefix(top) else {
            return false;
        };
        let gm = top.join(".gitmodules");
        std::fs::metadata(&gm).is_ok_and(|m| m.len() <= gitlinks::MAX_GITMODULES)
            && std::fs::read(&gm).is_ok_and(|t| {
                gitlinks::gitmodules_paths(&t)
                    .iter()
                    .filter_map(|p| gitlinks::safe_rel(p))
                    .any(|p| p == rel)
            })
    })
}

/// `git config KEY VALUE` (and `--unset`, `--add`, `--replace-all`, ...)
/// without `--global`/`--system` writes `.git/config`, a protected file.
fn config_write(p: &ParsedArgs, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    let written: Vec<&str> = p.options.iter().map(|o| o.written.as_str()).collect();
    let elsewhere = written
        .iter()
        .any(|o| matches!(*o, "--global" | "--system" | "--file" | "-f"));
    let reads = written.iter().any(|o| {
        matches!(
            *o,
            "--get"
                | "--get-all"
                | "--get-regexp"
                | "--list"
                | "-l"
                | "--show-origin"
                | "--name-only"
        )
    });
    let changes = written.iter().any(|o| {
        matches!(
            *o,
            "--unset"
                | "--unset-all"
                | "--add"
                | "--replace-all"
                | "--remove-section"
                | "--rename-section"
        )
    }) || p.operands.len() >= 2;
    if elsewhere || reads || !changes {
        return;
    }
    let key = p
        .operands
        .first()
        .map(|(w, _)| w.value.as_str())
        .unwrap_or("");
    repo_config_write(
        "git config",
        seg,
        ctx,
        v,
        &format!(
            "set it for one command instead: `git -c {key}=VALUE ...`, or ask the user to change the repository's configuration"
        ),
    );
}

/// A git command (`what`) that writes the repository's `.git/config`, a
/// protected file: refused with `instead`.
fn repo_config_write(
    what: &str,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    instead: &str,
) {
    // The repository git config writes to: the nearest `.git` above the
    // working directory (a repository this same command creates has none
    // yet: its own directory).
    let config = seg
        .cwd
        .ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(&seg.cwd)
        .join(".git/config");
    if let Some(hit) = ctx.roots.protected_hit(&config, false) {
        v.add(
            Layer::Policy,
            ReasonId::RootsProtected,
            Decision::Deny,
            format!(
                "`{what}` changes `{}`: a protected file ([paths] protected) that runs later outside any sandbox",
                hit.display()
            ),
            Some(instead.into()),
        );
        v.risk = Risk::Dangerous;
    }
}

/// `find` with `-delete` and no filter, or no start path at all (`find
/// -delete` starts at `.`): deletes the whole tree.
pub fn find_delete(p: &ParsedArgs, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    let deletes = p.options.iter().any(|o| o.written == "-delete");
    if !deletes || !p.operands.is_empty() {
        return;
    }
    // No start path: find walks `.`.
    let filtered = p
        .options
        .iter()
        .any(|o| o.spec.effects.contains(&super::registry::Effect::Filter));
    let dot = crate::parse::Word::literal(".");
    super::path_operand(seg, ctx, v, &dot, Access::Write, !filtered, "find");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `has_flag`'s test of the canonical name (`-{short}` compared without
    /// building it) agrees with building it, over generated names.
    #[test]
    fn short_flag_name_comparison_equals_building_it() {
        let chars = ['W', 'S', 'a', '-', 'é', '𝄞'];
        let mut names: Vec<String> = vec![String::new(), "-".into()];
        for a in chars {
            names.push(format!("-{a}"));
            names.push(format!("--{a}"));
            for b in chars {
                names.push(format!("-{a}{b}"));
            }
        }
        for short in chars {
            for n in &names {
                assert_eq!(
                    is_short_name(n, short),
                    *n == format!("-{short}"),
                    "{n:?} {short:?}"
                );
            }
        }
    }

    #[test]
    fn whole_repository_pathspecs() {
        for s in [":/", ":/*", ":(top)", ":(top).", ":(top)*", ":/."] {
            assert!(whole_repo_pathspec(s), "{s}");
        }
        for s in [":/src", "src", ":(top)src", ".", "main"] {
            assert!(!whole_repo_pathspec(s), "{s}");
        }
    }
}
