//! `core.hooksPath` (red team 9, F4): git runs the hooks of the directory
//! it names instead of `.git/hooks/` (husky v9 sets `.husky/_`), so that
//! directory, when it lies inside a writable root, is protected like
//! `.git/hooks/`. Read at the snapshot from the repository's configuration
//! as it is before the run (`.git/config` and `.git/config.worktree`, both
//! protected), and from the files they include (`include.path`,
//! `includeIf.*.path`, conditions not evaluated: every one is read), which
//! are protected too when they lie inside a writable root (a change to one
//! would set `core.hooksPath` or anything else for the user's next git).
//!
//! Not read: the user's global and system configuration (outside the roots;
//! an absolute `core.hooksPath` there inside a root is not protected), a
//! repository whose `.git` is not at the root. Every bound (size, include
//! depth, count) leaves a note, never a silent gap.

use std::path::{Component, Path, PathBuf};

/// Most bytes of one configuration file read.
const MAX_FILE: u64 = 4 * 1024 * 1024;
/// Deepest include chain followed (git's own limit is 10).
const MAX_DEPTH: usize = 10;
/// Most included files read.
const MAX_FILES: usize = 64;

/// The hooks git runs from `core.hooksPath` (when it names the root itself
/// these names are protected instead of the whole tree).
const HOOKS: [&str; 28] = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

/// What the snapshot protects in addition, for one root.
#[derive(Debug, Default)]
pub struct Found {
    /// Patterns relative to the root.
    pub protect: Vec<String>,
    /// For the report: what could not be read.
    pub notes: Vec<String>,
}

/// One `section[.subsection].key = value` of a configuration file (section
/// and key lowercased, as git compares them).
#[derive(Debug, PartialEq)]
struct Entry {
    section: String,
    key: String,
    value: Option<String>,
}

/// Parses git's configuration syntax: `[section]`, `[section "sub"]`,
/// `[section.sub]`, `key = value` (also on the header's line), `key` alone
/// (true), `#`/`;` comments, double quotes with `\"`, `\\`, `\n`, `\t`,
/// `\b`, a trailing `\` joining the next line. What cannot be parsed is
/// skipped line by line (git refuses such a file, so nothing there is in
/// effect).
fn parse(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let mut rest = line.trim_start();
        if rest.starts_with('[') {
            let Some(end) = header_end(rest) else {
                continue;
            };
            section = header(&rest[1..end]);
            rest = rest[end + 1..].trim_start();
        }
        if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            continue;
        }
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(rest.len());
        if name_len == 0 {
            continue;
        }
        let key = rest[..name_len].to_ascii_lowercase();
        let after = rest[name_len..].trim_start();
        let value = if let Some(v) = after.strip_prefix('=') {
            let mut v = v.to_string();
            // A trailing backslash outside quotes continues the value.
            while ends_continued(&v) {
                v.pop();
                match lines.next() {
                    Some(next) => v.push_str(next),
                    None => break,
                }
            }
            Some(value(&v))
        } else {
            None
        };
        out.push(Entry {
            section: section.clone(),
            key,
            value,
        });
    }
    out
}

/// Where a header's `]` is (outside the subsection's quotes).
fn header_end(s: &str) -> Option<usize> {
    let mut quoted = false;
    let mut esc = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if esc => esc = false,
            '\\' if quoted => esc = true,
            '"' => quoted = !quoted,
            ']' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

/// `core`, `includeIf "gitdir:x"` -> `core`, `includeif.gitdir:x`.
fn header(inner: &str) -> String {
    let inner = inner.trim();
    match inner.find(char::is_whitespace) {
        Some(i) => {
            let name = inner[..i].to_ascii_lowercase();
            let sub = inner[i..].trim().trim_matches('"').replace("\\\"", "\"");
            format!("{name}.{sub}")
        }
        None => match inner.split_once('.') {
            // The old `[section.sub]` form: the subsection is lowercased.
            Some((a, b)) => format!("{}.{}", a.to_ascii_lowercase(), b.to_ascii_lowercase()),
            None => inner.to_ascii_lowercase(),
        },
    }
}

/// Whether a raw value line ends in a continuing backslash (an odd run of
/// them, outside quotes and comments).
fn ends_continued(v: &str) -> bool {
    let mut quoted = false;
    let mut esc = false;
    let mut last_esc = false;
    for c in v.chars() {
        last_esc = false;
        match c {
            _ if esc => esc = false,
            '\\' => {
                esc = true;
                last_esc = true;
            }
            '"' => quoted = !quoted,
            '#' | ';' if !quoted => return false,
            _ => {}
        }
    }
    last_esc && esc && !quoted
}

/// A raw value as git reads it: quotes removed, escapes applied, comments
/// cut, outer whitespace trimmed (inner whitespace kept).
fn value(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = raw.chars();
    let mut pending_ws = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => {
                let e = match chars.next() {
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('b') => '\u{8}',
                    Some(other) => other,
                    None => break,
                };
                out.push_str(&pending_ws);
                pending_ws.clear();
                out.push(e);
            }
            '#' | ';' if !quoted => break,
            c if c.is_whitespace() && !quoted => {
                if !out.is_empty() {
                    pending_ws.push(c);
                }
            }
            c => {
                out.push_str(&pending_ws);
                pending_ws.clear();
                out.push(c);
            }
        }
    }
    out
}

/// `p` without `.` and `..` (lexically; `..` above the start is kept out:
/// `None`).
fn normal(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::RootDir => out.push("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(s) => out.push(s),
            Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
}

/// A path value of the configuration: `~/x` from HOME, relative ones from
/// `base`.
fn resolve(v: &str, base: &Path) -> Option<PathBuf> {
    let p = if let Some(rest) = v.strip_prefix("~/") {
        home()?.join(rest)
    } else if v == "~" {
        home()?
    } else {
        base.join(v)
    };
    normal(&p)
}

/// The root `abs` lies in, and its path relative to it (the innermost
/// root when roots nest).
fn in_roots<'a>(abs: &Path, roots: &'a [PathBuf]) -> Option<(&'a Path, PathBuf)> {
    roots
        .iter()
        .filter_map(|r| {
            let r = normal(r)?;
            abs.strip_prefix(&r)
                .ok()
                .map(|rel| (r.clone(), rel.to_path_buf()))
        })
        .max_by_key(|(r, _)| r.as_os_str().len())
        .and_then(|(r, rel)| {
            roots
                .iter()
                .find(|x| normal(x).as_deref() == Some(r.as_path()))
                .map(|x| (x.as_path(), rel))
        })
}

fn read_bounded(p: &Path) -> std::io::Result<Option<String>> {
    use std::io::Read;
    let f = match std::fs::File::open(p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut buf = Vec::new();
    f.take(MAX_FILE + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_FILE {
        return Err(std::io::Error::other("larger than 4 MiB"));
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

/// The patterns to protect under `root` for its repository's
/// `core.hooksPath`, from the contents of `.git/config` and
/// `.git/config.worktree` before the run (`None`: not a file).
pub fn find(
    root: &Path,
    roots: &[PathBuf],
    config: Option<Vec<u8>>,
    worktree: Option<Vec<u8>>,
) -> Found {
    let mut found = Found::default();
    let Some(gitdir) = normal(&root.join(".git")) else {
        return found;
    };
    let Some(worktree_root) = normal(root) else {
        return found;
    };
    // (text, directory its relative includes are read from, depth)
    let mut queue: Vec<(String, PathBuf, usize)> = [config, worktree]
        .into_iter()
        .flatten()
        .map(|c| (String::from_utf8_lossy(&c).into_owned(), gitdir.clone(), 0))
        .collect();
    let mut hooks: Vec<String> = Vec::new();
    let mut files = 0usize;
    while let Some((text, base, depth)) = queue.pop() {
        for e in parse(&text) {
            let Some(v) = e.value.as_deref() else {
                continue;
            };
            if e.section == "core" && e.key == "hookspath" {
                hooks.push(v.to_string());
            } else if e.key == "path"
                && (e.section == "include" || e.section.starts_with("includeif."))
            {
                let Some(inc) = resolve(v, &base) else {
                    found.notes.push(format!(
                        "git configuration include `{v}` not followed (its path cannot be resolved): a core.hooksPath set there is not protected"
                    ));
                    continue;
                };
                // An included file inside a root is protected itself.
                if let Some((r, rel)) = in_roots(&inc, roots)
                    && r == root
                    && !rel.as_os_str().is_empty()
                {
                    found.protect.push(rel.to_string_lossy().into_owned());
                }
                if depth + 1 > MAX_DEPTH || files >= MAX_FILES {
                    found.notes.push(format!(
                        "git configuration include {} not followed (more than {MAX_DEPTH} levels or {MAX_FILES} files): a core.hooksPath set there is not protected",
                        inc.display()
                    ));
                    continue;
                }
                files += 1;
                match read_bounded(&inc) {
                    Ok(Some(t)) => {
                        let dir = inc.parent().map_or_else(|| base.clone(), Path::to_path_buf);
                        queue.push((t, dir, depth + 1));
                    }
                    Ok(None) => {}
                    Err(err) => found.notes.push(format!(
                        "git configuration include {} could not be read ({err}): a core.hooksPath set there is not protected",
                        inc.display()
                    )),
                }
            }
        }
    }
    for h in hooks {
        // Relative to the working tree's root (where git runs hooks).
        let Some(abs) = resolve(&h, &worktree_root) else {
            continue;
        };
        let Some((r, rel)) = in_roots(&abs, roots) else {
            continue; // outside every writable root: the command cannot write it
        };
        if r != root {
            found.notes.push(format!(
                "core.hooksPath {} lies in another writable root ({}) than the repository's: not protected",
                abs.display(),
                r.display()
            ));
            continue;
        }
        if rel.as_os_str().is_empty() {
            found.protect.extend(HOOKS.iter().map(|h| h.to_string()));
        } else {
            found.protect.push(format!("{}/", rel.to_string_lossy()));
        }
    }
    found.protect.sort();
    found.protect.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks_of(text: &str) -> Vec<Option<String>> {
        parse(text)
            .into_iter()
            .filter(|e| e.section == "core" && e.key == "hookspath")
            .map(|e| e.value)
            .collect()
    }

    #[test]
    fn hookspath_spellings_are_read() {
        assert_eq!(
            hooks_of("[core]\n\thooksPath = .husky/_\n"),
            [Some(".husky/_".into())]
        );
        assert_eq!(
            hooks_of("[CORE]\nHOOKSPATH=\"a b\" # c\n"),
            [Some("a b".into())]
        );
        assert_eq!(hooks_of("[core] hookspath = x\n"), [Some("x".into())]);
        assert_eq!(
            hooks_of("[core]\nhookspath = a\\\nb\n"),
            [Some("ab".into())]
        );
        assert_eq!(
            hooks_of("[core]\nhookspath = \"x\\\"y\"\n"),
            [Some("x\"y".into())]
        );
        assert_eq!(
            hooks_of("[core \"x\"]\nhookspath = no\n"),
            Vec::<Option<String>>::new()
        );
        assert_eq!(
            hooks_of("[user]\nhookspath = no\n; [core]\n"),
            Vec::<Option<String>>::new()
        );
        assert_eq!(hooks_of("[core]\nhookspath\n"), [None]);
        // Garbage does not panic.
        for t in [
            "[",
            "[core",
            "=",
            "[core]\n=x",
            "[\"]\n",
            "\\",
            "[core]\nhookspath=\"\\",
        ] {
            let _ = parse(t);
        }
    }

    #[test]
    fn hookspath_inside_the_root_is_protected_and_includes_followed() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path().to_path_buf();
        let roots = vec![root.clone()];
        let f = find(
            &root,
            &roots,
            Some(b"[core]\n\thooksPath = .husky/_\n".to_vec()),
            None,
        );
        assert_eq!(f.protect, [".husky/_/"]);
        let abs = format!("[core]\nhooksPath = {}/hooks/./x/..\n", root.display());
        let f = find(&root, &roots, Some(abs.into_bytes()), None);
        assert_eq!(f.protect, ["hooks/"]);
        // Outside the roots, or above them: nothing.
        for v in ["/elsewhere/hooks", "../up", "../../../../.."] {
            let f = find(
                &root,
                &roots,
                Some(format!("[core]\nhooksPath={v}\n").into_bytes()),
                None,
            );
            assert!(f.protect.is_empty(), "{v}: {:?}", f.protect);
        }
        // The root itself: the hook names.
        let f = find(
            &root,
            &roots,
            Some(b"[core]\nhooksPath = .\n".to_vec()),
            None,
        );
        assert!(f.protect.contains(&"pre-commit".to_string()));
        // config.worktree, and an include inside the root (protected too),
        // relative to `.git/`.
        std::fs::create_dir_all(root.join(".git")).expect("mk");
        std::fs::write(
            root.join("proj.gitconfig"),
            "[core]\nhooksPath = tools/hooks\n",
        )
        .expect("w");
        let f = find(
            &root,
            &roots,
            Some(b"[include]\npath = ../proj.gitconfig\n".to_vec()),
            Some(b"[core]\nhooksPath = wt-hooks\n".to_vec()),
        );
        assert_eq!(f.protect, ["proj.gitconfig", "tools/hooks/", "wt-hooks/"]);
        // An include that cannot be read leaves a note.
        std::fs::create_dir_all(root.join("dir.gitconfig")).expect("mk");
        let f = find(
            &root,
            &roots,
            Some(b"[includeIf \"gitdir:x\"]\npath = ../dir.gitconfig\n".to_vec()),
            None,
        );
        assert!(!f.notes.is_empty(), "{f:?}");
    }
}
