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
pub fn scrubbed(name: &str) -> Option<&'static str> {
    groups().filter(|g| g.scrub).find_map(|g| g.covers(name))
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
