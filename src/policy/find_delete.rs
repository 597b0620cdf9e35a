//! `find ... -delete` with filters (review 12, F15): the start points are
//! judged as paths elsewhere; here, whether the filters can pick a
//! protected entry below them (`find . -path './.git/*' -delete` empties
//! the repository, `find . -name config -delete` removes `.git/config`).
//! The entries below each start point are listed (bounded) and every
//! protected one, and every entry of a git directory, is matched against
//! the filters the way `find` would at least match it: the `-name` and
//! `-path` tests that every match must pass. A test `find` may skip
//! (`-o`, `,`, a negation) is not relied on, so the check errs towards
//! refusing.

use std::path::{Path, PathBuf};

use super::{Decision, Layer, PolicyContext, ReasonId, Verdict};
use crate::parse::Segment;

/// Most directory entries listed below the start points.
const MAX_ENTRIES: usize = 20_000;

/// The name and path tests every match of the expression must pass.
#[derive(Default)]
struct Filters {
    /// `-name P` (and `-iname`, lowercased): the entry's name.
    names: Vec<(String, bool)>,
    /// `-path P` (`-wholename`, `-ipath`): the path as `find` prints it.
    paths: Vec<(String, bool)>,
}

/// The tests of `expr` that every match passes; with `-o`, `-or` or `,`
/// none is certain, and an empty set matches every entry.
fn filters(expr: &[&str]) -> Filters {
    let mut f = Filters::default();
    if expr.iter().any(|w| matches!(*w, "-o" | "-or" | ",")) {
        return f;
    }
    let mut negated = false;
    let mut i = 0;
    while i < expr.len() {
        let w = expr[i];
        match w {
            "!" | "-not" => {
                negated = !negated;
                i += 1;
                continue;
            }
            "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename" => {
                if let Some(p) = expr.get(i + 1)
                    && !negated
                {
                    let ci = w.starts_with("-i");
                    let p = if ci { p.to_lowercase() } else { p.to_string() };
                    if w.ends_with("name") && !w.ends_with("wholename") {
                        f.names.push((p, ci));
                    } else {
                        f.paths.push((p, ci));
                    }
                }
                i += 2;
            }
            _ => i += 1,
        }
        negated = false;
    }
    f
}

impl Filters {
    /// Whether an entry named `name`, printed as `shown`, can pass.
    fn can_match(&self, name: &str, shown: &str) -> bool {
        let m = |pat: &str, ci: bool, s: &str| {
            let s = if ci { s.to_lowercase() } else { s.to_string() };
            glob_match(pat.as_bytes(), s.as_bytes())
        };
        self.names.iter().all(|(p, ci)| m(p, *ci, name))
            && self.paths.iter().all(|(p, ci)| m(p, *ci, shown))
    }
}

/// `fnmatch` without flags, as `find` matches `-name` and `-path`: `*` and
/// `?` match any character, `/` included; `[...]` a set; `\` quotes.
fn glob_match(p: &[u8], s: &[u8]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(b'*') => (0..=s.len()).any(|i| glob_match(&p[1..], &s[i..])),
        Some(b'?') => !s.is_empty() && glob_match(&p[1..], &s[1..]),
        Some(b'[') => {
            let Some(end) = p.iter().skip(2).position(|c| *c == b']').map(|e| e + 2) else {
                return s.first() == Some(&b'[') && glob_match(&p[1..], &s[1..]);
            };
            let Some(&c) = s.first() else { return false };
            let (neg, set) = match p[1] {
                b'!' | b'^' => (true, &p[2..end]),
                _ => (false, &p[1..end]),
            };
            let mut hit = false;
            let mut k = 0;
            while k < set.len() {
                if k + 2 < set.len() && set[k + 1] == b'-' {
                    hit |= set[k] <= c && c <= set[k + 2];
                    k += 3;
                } else {
                    hit |= set[k] == c;
                    k += 1;
                }
            }
            hit != neg && glob_match(&p[end + 1..], &s[1..])
        }
        Some(b'\\') if p.len() > 1 => s.first() == Some(&p[1]) && glob_match(&p[2..], &s[1..]),
        Some(c) => s.first() == Some(c) && glob_match(&p[1..], &s[1..]),
    }
}

/// `find` with `-delete` and a filter (the unfiltered form is a recursive
/// write of each start point, judged with the operands).
pub(super) fn check(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    let argv: Vec<&str> = seg.argv().collect();
    if !argv.contains(&"-delete") {
        return;
    }
    // `find [-H|-L|-P|-D x|-Ox] START... EXPR`
    let mut i = 1;
    while let Some(w) = argv.get(i) {
        match *w {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            w if w.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let start_at = i;
    while let Some(w) = argv.get(i) {
        if w.starts_with('-') || *w == "(" || *w == "!" || *w == ")" || *w == "," {
            break;
        }
        i += 1;
    }
    let starts: Vec<&str> = match &argv[start_at..i] {
        [] => vec!["."],
        s => s.to_vec(),
    };
    let expr = &argv[i..];
    let f = filters(expr);
    // No test at all: a recursive delete of each start point, judged with
    // the operands ("too broad"). Any test (`-name`, `-mtime +7`, `-empty`)
    // may pick protected entries: those not understood here match all.
    let mut tests = expr.iter().filter(|w| {
        !matches!(
            **w,
            "-delete" | "-print" | "-print0" | "-depth" | "-d" | "-xdev" | "-mount" | "-ls"
        )
    });
    let mut any_test = false;
    while let Some(w) = tests.next() {
        if matches!(*w, "-maxdepth" | "-mindepth") {
            tests.next();
            continue;
        }
        any_test = true;
    }
    if !any_test {
        return;
    }
    let mut budget = MAX_ENTRIES;
    for start in starts {
        let root = ctx.resolve(seg, start);
        match walk(&root, start, &f, ctx, &mut budget) {
            Found::Nothing => {}
            Found::Hit(p) => {
                v.add(
                    Layer::Policy,
                    ReasonId::RootsProtected,
                    Decision::Deny,
                    format!(
                        "`find {start} ... -delete` can delete `{}`: its filters do not keep out this protected entry (or the repository's git directory), which runs later outside any sandbox",
                        p.display()
                    ),
                    Some("start `find` below the protected entries, or delete the files by name".into()),
                );
                return;
            }
            Found::TooLarge => {
                v.add(
                    Layer::Policy,
                    ReasonId::RootsProtected,
                    Decision::Ask,
                    format!(
                        "`find {start} ... -delete`: the tree below `{start}` is too large to check for protected entries its filters could pick ({MAX_ENTRIES} entries)"
                    ),
                    Some("start `find` in the directory that holds the files to delete".into()),
                );
                return;
            }
        }
    }
}

enum Found {
    Nothing,
    Hit(PathBuf),
    TooLarge,
}

/// Lists the tree below `root` (no links followed) for a protected entry,
/// or an entry of a git directory, that the filters can pick.
fn walk(root: &Path, spelled: &str, f: &Filters, ctx: &PolicyContext, budget: &mut usize) -> Found {
    let mut stack: Vec<(PathBuf, String, bool)> = vec![(
        root.to_path_buf(),
        spelled.trim_end_matches('/').to_string(),
        false,
    )];
    while let Some((dir, shown, in_git)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            if *budget == 0 {
                return Found::TooLarge;
            }
            *budget -= 1;
            let name = e.file_name();
            let name = name.to_string_lossy();
            let path = e.path();
            let shown = format!("{}/{name}", if shown.is_empty() { "." } else { &shown });
            let git = in_git || name == ".git";
            let protected = git || ctx.roots.protected_hit(&path, false).is_some();
            if protected && f.can_match(&name, &shown) {
                return Found::Hit(path);
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push((path, shown, git));
            }
        }
    }
    Found::Nothing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_fnmatch_does() {
        for (p, s, want) in [
            ("*.pyc", "a.pyc", true),
            ("*.pyc", "config", false),
            ("./.git/*", "./.git/objects/ab/cd", true),
            ("./.git/*", "./src/x", false),
            (".e*", ".envrc", true),
            ("[a-c]onfig", "config", true),
            ("[!c]onfig", "config", false),
            ("\\*", "*", true),
            ("pre-commit", "pre-commit", true),
        ] {
            assert_eq!(glob_match(p.as_bytes(), s.as_bytes()), want, "{p} {s}");
        }
    }

    #[test]
    fn only_the_tests_every_match_passes_are_kept() {
        let f = filters(&["-name", "*.pyc", "-type", "f"]);
        assert!(f.can_match("a.pyc", "./a.pyc") && !f.can_match("config", "./.git/config"));
        // A disjunction or a negation keeps nothing out.
        assert!(
            filters(&["-name", "*.pyc", "-o", "-name", "x"]).can_match("config", "./.git/config")
        );
        assert!(filters(&["!", "-name", "*.rs"]).can_match("config", "./.git/config"));
        let f = filters(&["-path", "./.git/*"]);
        assert!(f.can_match("HEAD", "./.git/HEAD"));
        let f = filters(&["-iname", "CONFIG"]);
        assert!(f.can_match("config", "./.git/config"));
    }
}
