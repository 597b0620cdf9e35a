//! Git configuration keys a command may set (`git -c KEY=VALUE`, `git
//! config KEY VALUE`, `git config set KEY VALUE`): an allowlist of keys known
//! to be harmless, not a denylist. Git keeps adding keys that name programs
//! (`core.pager`, `gpg.ssh.defaultKeyCommand`, `remote.*.uploadpack`,
//! `man.*.path`, `protocol.ext.allow`, `core.worktree`, `init.templateDir`,
//! `include.path`, ...), so any key not listed here is refused.

/// Keys (lowercase; `*` matches one dotted part or a suffix) whose values
/// never name a program, a file git loads, or another repository.
const HARMLESS: &[&str] = &[
    "user.name",
    "user.email",
    "author.name",
    "author.email",
    "committer.name",
    "committer.email",
    "color.*",
    "color.*.*",
    "advice.*",
    "init.defaultbranch",
    "core.autocrlf",
    "core.safecrlf",
    "core.eol",
    "core.filemode",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.quotepath",
    "core.abbrev",
    "core.compression",
    "core.whitespace",
    "diff.renames",
    "diff.algorithm",
    "diff.colormoved",
    "diff.mnemonicprefix",
    "diff.noprefix",
    "diff.context",
    "diff.statgraphwidth",
    "log.date",
    "log.decorate",
    "log.follow",
    "log.abbrevcommit",
    "format.pretty",
    "pretty.*",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "push.followtags",
    "merge.ff",
    "merge.conflictstyle",
    "merge.log",
    "rebase.autostash",
    "rebase.autosquash",
    "rebase.updaterefs",
    "rebase.stat",
    "fetch.prune",
    "fetch.prunetags",
    "gc.auto",
    "status.short",
    "status.branch",
    "status.showuntrackedfiles",
    "status.relativepaths",
    "column.ui",
    "branch.autosetupmerge",
    "branch.autosetuprebase",
    "branch.sort",
    "tag.sort",
    "commit.verbose",
    "commit.cleanup",
    "grep.linenumber",
    "grep.extendedregexp",
    "grep.patterntype",
    "help.autocorrect",
    "i18n.commitencoding",
    "i18n.logoutputencoding",
    "interactive.singlekey",
    "checkout.defaultremote",
    "rerere.enabled",
    "am.threeway",
    "apply.whitespace",
];

/// Keys that are harmless only with a boolean value (`commit.gpgsign=false`
/// runs nothing; `true` runs gpg; `pager.log=false` turns the pager off, a
/// string names a program).
const BOOLEAN_ONLY: &[&str] = &[
    "commit.gpgsign",
    "tag.gpgsign",
    "pager.*",
    "log.showsignature",
];

fn matches(pattern: &str, key: &str) -> bool {
    let p: Vec<&str> = pattern.split('.').collect();
    let k: Vec<&str> = key.split('.').collect();
    p.len() == k.len() && p.iter().zip(&k).all(|(a, b)| *a == "*" || a == b)
}

fn is_false(value: &str) -> bool {
    matches!(
        value.to_ascii_lowercase().as_str(),
        "false" | "no" | "off" | "0" | ""
    )
}

/// Whether setting `key` (to `value`, when known) is harmless. Section and
/// variable names are case-insensitive; a subsection (the middle part of
/// `a.b.c`) counts as one part.
pub fn harmless(key: &str, value: Option<&str>) -> bool {
    let key = normalise(key);
    if HARMLESS.iter().any(|p| matches(p, &key)) {
        return true;
    }
    BOOLEAN_ONLY.iter().any(|p| matches(p, &key)) && value.is_some_and(is_false)
}

/// `section.sub.sect.name` → lowercase section and name, subsection kept
/// as one part.
fn normalise(key: &str) -> String {
    let Some((section, rest)) = key.split_once('.') else {
        return key.to_ascii_lowercase();
    };
    match rest.rsplit_once('.') {
        Some((sub, name)) => format!(
            "{}.{}.{}",
            section.to_ascii_lowercase(),
            sub.replace('.', "_"),
            name.to_ascii_lowercase()
        ),
        None => format!(
            "{}.{}",
            section.to_ascii_lowercase(),
            rest.to_ascii_lowercase()
        ),
    }
}

/// The keys a `git config` command line sets, with their values: legacy
/// `git config KEY VALUE`, `--add KEY VALUE`, `--replace-all KEY VALUE`, and
/// the subcommand forms `git config set KEY VALUE`. Reads (`--get`,
/// `--list`, `get`, `list`, a lone KEY) and `--unset` set nothing.
pub fn keys_set(options: &[String], operands: &[String]) -> Vec<(String, Option<String>)> {
    let reads = options.iter().any(|o| {
        matches!(
            o.as_str(),
            "--get"
                | "--get-all"
                | "--get-regexp"
                | "--list"
                | "-l"
                | "--unset"
                | "--unset-all"
                | "--remove-section"
                | "--rename-section"
                | "--show-origin"
                | "--name-only"
        )
    }) && !options.iter().any(|o| o == "--add" || o == "--replace-all");
    if reads {
        return Vec::new();
    }
    let ops: Vec<&str> = operands.iter().map(String::as_str).collect();
    match ops.as_slice() {
        [
            "get" | "list" | "unset" | "remove-section" | "rename-section" | "get-color"
            | "get-colorbool",
            ..,
        ] => Vec::new(),
        ["set", key, rest @ ..] => vec![(key.to_string(), rest.first().map(|v| v.to_string()))],
        ["set"] => vec![("set".into(), None)],
        ["edit", ..] => vec![("(editor)".into(), None)],
        [key, value, ..] => vec![(key.to_string(), Some(value.to_string()))],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowlist_not_denylist() {
        for (k, v) in [
            ("user.name", "me"),
            ("color.ui", "auto"),
            ("color.diff.meta", "blue"),
            ("init.defaultBranch", "main"),
            ("pager.log", "false"),
            ("commit.gpgsign", "false"),
            ("core.autocrlf", "input"),
        ] {
            assert!(harmless(k, Some(v)), "{k}={v}");
        }
        for (k, v) in [
            ("protocol.ext.allow", "always"),
            ("remote.origin.uploadpack", "./x"),
            ("pager.log", "sh -c id"),
            ("man.foo.path", "./x"),
            ("gpg.ssh.defaultKeyCommand", "./x"),
            ("core.worktree", ".."),
            ("init.templateDir", "./t"),
            ("core.pager", "less"),
            ("core.sshCommand", "x"),
            ("include.path", "x"),
            ("remote.origin.push", "+refs/heads/*"),
            ("commit.gpgsign", "true"),
            ("alias.st", "!sh"),
            ("core.hooksPath", "h"),
            ("some.future.key", "x"),
        ] {
            assert!(!harmless(k, Some(v)), "{k}={v}");
        }
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(keys_set(&s(&[]), &s(&["core.pager", "x"])).len(), 1);
        assert_eq!(
            keys_set(&s(&[]), &s(&["set", "core.pager", "x"]))[0].0,
            "core.pager"
        );
        assert!(keys_set(&s(&["--get"]), &s(&["core.pager"])).is_empty());
        assert!(keys_set(&s(&[]), &s(&["get", "core.pager"])).is_empty());
        assert!(keys_set(&s(&[]), &s(&["core.pager"])).is_empty());
    }
}
