//! One list of environment variables that load code, name the program a tool
//! runs, or relocate the configuration it reads (data:
//! `profiles/env/variables.toml`). The static policy refuses assignments to
//! them (`NAME=value cmd`, `env NAME=value cmd`, `export NAME=...`), and the
//! sandbox's environment scrubber removes those marked `scrub` from what
//! every command inherits: the two cannot disagree about a name.

use super::env::glob_match;
use crate::builtin::VARIABLES;

/// One group of the list.
struct Group {
    what: &'static str,
    names: &'static [&'static str],
    scrub: bool,
    fold: bool,
    except: &'static [&'static str],
    safe_values: &'static [&'static str],
}

fn groups() -> impl Iterator<Item = Group> {
    VARIABLES
        .iter()
        .map(|(what, names, scrub, fold, except, safe_values)| Group {
            what,
            names,
            scrub: *scrub,
            fold: *fold,
            except,
            safe_values,
        })
}

impl Group {
    /// The glob of this group that covers `name`, if any.
    fn covers(&self, name: &str) -> Option<&'static str> {
        if self.except.iter().any(|e| {
            if self.fold {
                e.eq_ignore_ascii_case(name)
            } else {
                *e == name
            }
        }) {
            return None;
        }
        self.names
            .iter()
            .copied()
            .find(|p| glob_match(p, name, self.fold))
    }
}

/// Why assigning `value` to `name` is refused (`None`: harmless). `value`
/// is `None` when the command sets the variable in a way whose value is not
/// known (`export NAME`, `read NAME`, `for NAME in ...`).
pub fn dangerous(name: &str, value: Option<&str>) -> Option<&'static str> {
    groups()
        .filter(|g| g.covers(name).is_some())
        .find(|g| !value.is_some_and(|v| g.safe_values.contains(&v)))
        .map(|g| g.what)
}

/// The glob under which the environment scrubber removes `name`.
///
/// The answer of [`scrubbed_by_list`] (the first `scrub` group, in the
/// list's order, that covers `name`, and its first glob that matches),
/// found among the globs that can match `name`'s first byte: those that
/// start with that byte (either case in a `fold` group) and those that
/// start with `*`. A start asks this for every inherited variable, and a
/// variable's first byte rules out most of the ~250 globs.
pub fn scrubbed(name: &str) -> Option<&'static str> {
    let index = scrub_index();
    let first = *name.as_bytes().first()?;
    let (a, b) = (&index.by_first[usize::from(first)], &index.wild);
    // Both lists are in the list's order: merged, the first match in the
    // merge is the first match in the list.
    let (mut i, mut j) = (0, 0);
    let mut skipped: Option<usize> = None;
    while i < a.len() || j < b.len() {
        let c = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.order < y.order => {
                i += 1;
                x
            }
            (Some(x), None) => {
                i += 1;
                x
            }
            (_, Some(y)) => {
                j += 1;
                y
            }
            (None, None) => break,
        };
        if skipped == Some(c.group) {
            continue;
        }
        let g = &index.groups[c.group];
        if g.except.iter().any(|e| {
            if g.fold {
                e.eq_ignore_ascii_case(name)
            } else {
                *e == name
            }
        }) {
            // The group does not cover `name` at all (`Group::covers`).
            skipped = Some(c.group);
            continue;
        }
        if glob_match(c.glob, name, g.fold) {
            return Some(c.glob);
        }
    }
    None
}

/// [`scrubbed`] without the index: the list read in order.
#[cfg(test)]
fn scrubbed_by_list(name: &str) -> Option<&'static str> {
    groups().filter(|g| g.scrub).find_map(|g| g.covers(name))
}

/// One glob of a `scrub` group, with its place in the list.
struct Candidate {
    order: usize,
    group: usize,
    glob: &'static str,
}

struct ScrubIndex {
    groups: Vec<Group>,
    /// Globs by their literal first byte.
    by_first: Vec<Vec<Candidate>>,
    /// Globs that start with `*` (or are empty).
    wild: Vec<Candidate>,
}

fn scrub_index() -> &'static ScrubIndex {
    static INDEX: std::sync::OnceLock<ScrubIndex> = std::sync::OnceLock::new();
    INDEX.get_or_init(|| {
        let groups: Vec<Group> = groups().filter(|g| g.scrub).collect();
        let mut by_first: Vec<Vec<Candidate>> = (0..256).map(|_| Vec::new()).collect();
        let mut wild = Vec::new();
        let mut order = 0;
        for (gi, g) in groups.iter().enumerate() {
            for glob in g.names {
                let c = |order| Candidate {
                    order,
                    group: gi,
                    glob,
                };
                match glob.as_bytes().first() {
                    None | Some(b'*') => wild.push(c(order)),
                    Some(&f) if g.fold && f.is_ascii_alphabetic() => {
                        by_first[usize::from(f.to_ascii_uppercase())].push(c(order));
                        by_first[usize::from(f.to_ascii_lowercase())].push(c(order));
                    }
                    Some(&f) => by_first[usize::from(f)].push(c(order)),
                }
                order += 1;
            }
        }
        ScrubIndex {
            groups,
            by_first,
            wild,
        }
    })
}

/// Every glob of the list (for documentation and tests).
pub fn all_names() -> Vec<&'static str> {
    groups().flat_map(|g| g.names.iter().copied()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_loading_names_are_refused_and_harmless_ones_are_not() {
        for n in [
            "LD_PRELOAD",
            "GCONV_PATH",
            "GLIBC_TUNABLES",
            "BASH_ENV",
            "ENV",
            "PYTHONPATH",
            "NODE_OPTIONS",
            "PERL5OPT",
            "RUBYOPT",
            "GIT_SSH_COMMAND",
            "GIT_INDEX_FILE",
            "GIT_ALLOW_PROTOCOL",
            "MANOPT",
            "LESSOPEN",
            "npm_config_script_shell",
            "NPM_CONFIG_PREFIX",
            "PIP_INDEX_URL",
            "XDG_CONFIG_HOME",
            "HOME",
            "PATH",
            "RUSTC_WRAPPER",
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER",
        ] {
            assert!(dangerous(n, Some("./x")).is_some(), "{n}");
        }
        for n in [
            "LANG",
            "RUST_LOG",
            "PYTHONUNBUFFERED",
            "GIT_AUTHOR_NAME",
            "CI",
            "TERM",
            "NO_COLOR",
            "RUST_BACKTRACE",
        ] {
            assert!(dangerous(n, Some("1")).is_none(), "{n}");
        }
        assert!(dangerous("PAGER", Some("cat")).is_none());
        assert!(dangerous("GIT_PAGER", Some("cat")).is_none());
        assert!(dangerous("PAGER", Some("sh -c id")).is_some());
        assert!(dangerous("PAGER", None).is_some());
        assert!(dangerous("LESS", Some("+!id")).is_some());
        assert!(dangerous("CC", Some("clang")).is_none());
        assert!(dangerous("CC", Some("./evil")).is_some());
    }

    #[test]
    fn the_scrub_index_answers_as_the_list_does() {
        // Every glob of the list in several spellings, the except lists,
        // case changes, prefixes and suffixes, and names of the tests.
        let mut names: Vec<String> = vec![
            String::new(),
            "A".into(),
            "_".into(),
            "*".into(),
            "PATH".into(),
            "MALLOC_ARENA_MAX".into(),
            "malloc_arena_max".into(),
            "PYTHONUNBUFFERED".into(),
        ];
        for g in groups() {
            for n in g.names.iter().chain(g.except) {
                for fill in ["", "X", "x_Y", "LD_", "*"] {
                    let n = n.replace('*', fill);
                    names.push(n.to_ascii_lowercase());
                    names.push(n.to_ascii_uppercase());
                    names.push(format!("{n}_SUFFIX"));
                    names.push(format!("PREFIX_{n}"));
                    names.push(format!("{}{}", &n[..n.len() / 2], "é"));
                    names.push(n);
                }
            }
        }
        let mut seen = 0;
        for n in &names {
            assert_eq!(scrubbed(n), scrubbed_by_list(n), "{n:?}");
            seen += usize::from(scrubbed(n).is_some());
        }
        // Positive control: the names do reach the scrubbed globs.
        assert!(seen > 500, "{seen} of {}", names.len());
    }

    #[test]
    fn the_scrubber_removes_loader_and_shell_variables_but_not_path_or_home() {
        for n in [
            "LD_PRELOAD",
            "GCONV_PATH",
            "GLIBC_TUNABLES",
            "BASH_ENV",
            "BASH_FUNC_x%%",
            "GIT_SSH_COMMAND",
            "NODE_OPTIONS",
        ] {
            assert!(scrubbed(n).is_some(), "{n}");
        }
        for n in [
            "PATH",
            "HOME",
            "LANG",
            "PAGER",
            "GIT_AUTHOR_NAME",
            "PYTHONUNBUFFERED",
        ] {
            assert!(scrubbed(n).is_none(), "{n}");
        }
        // Every name the scrubber removes is refused by the policy.
        for g in all_names() {
            let example = g.replace('*', "X");
            if scrubbed(&example).is_some() {
                assert!(dangerous(&example, Some("./x")).is_some(), "{example}");
            }
        }
    }
}
