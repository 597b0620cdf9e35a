//! Codex 0.169.0's shell steps, recognised as a whole when safe-exec is the
//! login shell (`/usr/lib/safe-exec/bin/bash`). Codex runs every command as
//! `LOGIN -c WRAPPER`, a ~38 KB script that saves ~56 `CODEX_*` and proxy
//! variables, sources its shell snapshot, restores the variables, prepends
//! its helper directory to `PATH` and ends with
//! `exec 'SHELL' -c 'MODEL COMMAND'`. Its snapshot is built with
//! `LOGIN -lc SCRIPT` (a fixed script, `profiles/harness/codex.toml`).
//!
//! The wrapper is accepted only if every line matches one of the line
//! shapes Codex emits (with variable names as the only free parts), the
//! snapshot it sources lies in Codex's `shell_snapshots` directory, and the
//! last line is one `exec` of a shell by absolute path with `-c` and one
//! literal string. Then the model's command alone is judged, and the
//! wrapper runs inside the sandbox (with the real bash where the wrapper
//! names safe-exec's own `bash`). Anything else is judged like any other
//! command: nothing rides on the wrapper.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;

/// What the harness step is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Codex's per-command wrapper.
    CodexExec {
        /// The model's command (judged).
        command: String,
        /// The shell it asked for (absolute path).
        shell: String,
        /// The wrapper to run (the exec target replaced by the real bash
        /// when it was safe-exec itself).
        run: String,
    },
    /// Codex's snapshot script (runs as it is, confined).
    CodexSnapshot,
    /// Claude Code's snapshot creation under `CLAUDE_CODE_SHELL`
    /// (`SHELL -c -l SCRIPT`, `SCRIPT` starting with
    /// `SNAPSHOT_FILE=~/.claude/shell-snapshots/snapshot-bash-MS-RAND.sh`):
    /// runs confined with that one directory writable as well.
    ClaudeSnapshot {
        /// The snapshot directory (made writable for this run only).
        dir: PathBuf,
    },
}

const HARNESS_TOML: &str = include_str!("../../profiles/harness/codex.toml");

#[derive(serde::Deserialize)]
struct HarnessFile {
    script: Vec<Script>,
}

#[derive(serde::Deserialize)]
struct Script {
    #[allow(dead_code)]
    agent: String,
    #[allow(dead_code)]
    version: String,
    kind: String,
    text: String,
}

fn scripts() -> &'static [Script] {
    static S: OnceLock<Vec<Script>> = OnceLock::new();
    S.get_or_init(|| {
        toml::from_str::<HarnessFile>(HARNESS_TOML)
            .map(|f| f.script)
            .unwrap_or_default()
    })
}

fn line_shapes() -> &'static [Regex] {
    static R: OnceLock<Vec<Regex>> = OnceLock::new();
    R.get_or_init(|| {
        let v = r"__CODEX_SNAPSHOT_(?:PROXY_)?OVERRIDE";
        let name = r"[A-Za-z_][A-Za-z0-9_]*";
        [
            format!(r#"^{v}_SET_\d+="\$\{{{name}\+x\}}"$"#),
            format!(r#"^{v}_\d+="\$\{{{name}-\}}"$"#),
            format!(r#"^__CODEX_SNAPSHOT_PROXY_ENV_SET="\$\{{{name}\+x\}}"$"#),
            format!(r#"^if \[ -n "\$\{{{v}_SET_\d+\}}" \]; then$"#),
            format!(
                r#"^  if \[ -z "\$\{{(?P<a>{name})\+x\}}" \] \|\| \[ "\$\{{(?P<b>{name})-\}}" != "\$\{{{v}_\d+\}}" \]; then export (?P<c>{name})="\$\{{{v}_\d+\}}"; else export (?P<d>{name}); fi$"#
            ),
            format!(
                r#"^else builtin unset (?P<a>{name}) 2>/dev/null \|\| command unset (?P<b>{name}); fi$"#
            ),
            format!(
                r#"^builtin unset (?P<a>{v}_SET_\d+ {v}_\d+) 2>/dev/null \|\| command unset (?P<b>{v}_SET_\d+ {v}_\d+)$"#
            ),
            r#"^if \[ -n "\$__CODEX_SNAPSHOT_PROXY_ENV_SET" \] \|\| \[ -n "\$\{CODEX_NETWORK_PROXY_ACTIVE\+x\}" \]; then$"#.to_string(),
            r"^fi$".to_string(),
            r"^$".to_string(),
        ]
        .iter()
        .filter_map(|r| Regex::new(r).ok())
        .collect()
    })
}

fn source_line() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"^if \. '([^']+)' >/dev/null 2>&1; then :; fi$").ok())
        .as_ref()
}

fn path_line() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(
            r#"^if \[ -n "\$\{PATH:-\}" \]; then export PATH='([^']+)':"\$PATH"; else export PATH='([^']+)'; fi$"#,
        )
        .ok()
    })
    .as_ref()
}

/// Captures named `a`, `b`, `c`, `d` that are present must all be equal
/// (the regex crate has no back-references).
fn same_names(c: &regex::Captures) -> bool {
    let names: Vec<&str> = ["a", "b", "c", "d"]
        .iter()
        .filter_map(|n| c.name(n).map(|m| m.as_str()))
        .collect();
    names.windows(2).all(|w| w[0] == w[1])
}

/// Codex's snapshot directory: `$CODEX_HOME/shell_snapshots`, else
/// `~/.codex/shell_snapshots`.
fn snapshot_dir(home: &Path) -> PathBuf {
    match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d).join("shell_snapshots"),
        None => home.join(".codex/shell_snapshots"),
    }
}

/// Splits `exec 'SHELL' -c 'COMMAND'` into its words: single quotes,
/// `\'`, and double quotes without expansions; anything else fails.
fn words(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut it = line.chars().peekable();
    while let Some(ch) = it.next() {
        match ch {
            ' ' | '\t' => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match it.next()? {
                        '\'' => break,
                        c => cur.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match it.next()? {
                        '"' => break,
                        '$' | '`' | '\\' => return None,
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.push(it.next()?);
            }
            c if c.is_ascii_alphanumeric() || "-_/.".contains(c) => {
                in_word = true;
                cur.push(c);
            }
            _ => return None,
        }
    }
    if in_word {
        out.push(cur);
    }
    Some(out)
}

/// Claude Code's snapshot directory: `$CLAUDE_CONFIG_DIR/shell-snapshots`,
/// else `~/.claude/shell-snapshots`.
fn claude_snapshot_dir(home: &Path) -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d).join("shell-snapshots"),
        None => home.join(".claude/shell-snapshots"),
    }
}

/// Claude Code 2.1.330's snapshot creation: only with `-l` (Claude runs
/// `SHELL -c -l SCRIPT`), only under Claude Code (`CLAUDECODE=1`; it wraps
/// every model command in its own chain, so a model command never starts
/// like this), the first line naming a snapshot file directly in Claude's
/// snapshot directory, and the script containing Claude's heredoc and final
/// check. A process that could forge this already runs unconfined (with
/// safe-exec as the shell every model command is confined, and a nested
/// safe-exec cannot widen the outer sandbox).
pub fn claude_snapshot(text: &str, home: &Path, login: bool) -> Option<Step> {
    if !login || std::env::var("CLAUDECODE").ok().as_deref() != Some("1") {
        return None;
    }
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    let re = R
        .get_or_init(|| {
            Regex::new(
                r"^SNAPSHOT_FILE=(/[^\s'\x22$`;&|]+)/snapshot-(?:bash|zsh)-[0-9]+-[a-z0-9]+\.sh$",
            )
            .ok()
        })
        .as_ref()?;
    let first = text.lines().next()?;
    let c = re.captures(first)?;
    let dir = PathBuf::from(c.get(1)?.as_str());
    let want = claude_snapshot_dir(home);
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if canon(&dir) != canon(&want) {
        return None;
    }
    claude_snapshot_shape(text).then_some(Step::ClaudeSnapshot { dir: canon(&dir) })
}

/// Outside its heredoc (the snapshot's content, data until it is sourced
/// from the read-only directory), the script may only contain the lines
/// Claude Code writes: comments, `echo "TEXT" >>|>| "$SNAPSHOT_FILE"`,
/// `source "FILE" < /dev/null` of the user's shell configuration, one
/// heredoc into `$SNAPSHOT_FILE`, and the final existence check.
fn claude_snapshot_shape(text: &str) -> bool {
    static R: OnceLock<Vec<Regex>> = OnceLock::new();
    let shapes = R.get_or_init(|| {
        [
            r"^\s*$",
            r"^\s*#[^\n]*$",
            r#"^\s*echo "[^"$`\\]*" >(?:>|\|) "\$SNAPSHOT_FILE"$"#,
            r#"^\s*echo '[^']*' >(?:>|\|) "\$SNAPSHOT_FILE"$"#,
            r#"^\s*source "[^"$`\\]*" < /dev/null$"#,
        ]
        .iter()
        .filter_map(|r| Regex::new(r).ok())
        .collect()
    });
    let tail = [
        r#"if [ ! -f "$SNAPSHOT_FILE" ]; then"#,
        r#"echo "Error: Snapshot file was not created at $SNAPSHOT_FILE" >&2"#,
        "exit 1",
        "fi",
    ];
    let mut lines = text.lines().skip(1);
    let mut heredocs = 0;
    let mut check = 0;
    while let Some(l) = lines.next() {
        let t = l.trim();
        if let Some(tag) = t
            .strip_prefix("cat >> \"$SNAPSHOT_FILE\" << 'CLAUDE_CODE_END_")
            .and_then(|r| r.strip_suffix('\''))
        {
            if heredocs > 0 || check > 0 || !tag.chars().all(|c| c.is_ascii_alphanumeric()) {
                return false;
            }
            let end = format!("CLAUDE_CODE_END_{tag}");
            if !lines.by_ref().any(|b| b == end) {
                return false;
            }
            heredocs += 1;
            continue;
        }
        if check < tail.len() && t == tail[check] && (check > 0 || heredocs == 1) {
            check += 1;
            continue;
        }
        if check > 0 && check < tail.len() {
            return false;
        }
        if !shapes.iter().any(|r| r.is_match(l)) {
            return false;
        }
    }
    heredocs == 1 && check == tail.len()
}

/// Recognises a harness step in a `-c` string.
pub fn recognise(text: &str, home: &Path, real_bash: &str, own: Option<&Path>) -> Option<Step> {
    if text.starts_with("if [ -z \"${BASH_ENV-}\" ]")
        && scripts()
            .iter()
            .any(|s| s.kind == "snapshot" && s.text == text)
    {
        return Some(Step::CodexSnapshot);
    }
    if !text.starts_with("__CODEX_SNAPSHOT_") {
        return None;
    }
    // The `exec` line is the last statement; the model's command in it may
    // span lines.
    let at = text.rfind("\nexec ")?;
    let lines: Vec<&str> = text[..at].split('\n').collect();
    let dir = snapshot_dir(home);
    for l in &lines {
        if let Some(c) = source_line().and_then(|r| r.captures(l)) {
            let p = Path::new(c.get(1)?.as_str());
            let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            let d = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
            if !p.starts_with(&d) {
                return None;
            }
            continue;
        }
        if let Some(c) = path_line().and_then(|r| r.captures(l)) {
            if c.get(1)?.as_str() != c.get(2)?.as_str() {
                return None;
            }
            continue;
        }
        if !line_shapes()
            .iter()
            .any(|r| r.captures(l).is_some_and(|c| same_names(&c)))
        {
            return None;
        }
    }
    let tail = text[at + 1..].trim_end_matches('\n');
    let w = words(tail.strip_prefix("exec ")?)?;
    let [shell, dash_c, command] = &w[..] else {
        return None;
    };
    let name = Path::new(shell).file_name()?.to_str()?;
    if dash_c != "-c" || !shell.starts_with('/') || !matches!(name, "bash" | "sh" | "dash" | "zsh")
    {
        return None;
    }
    let is_self = own.is_some_and(|me| std::fs::canonicalize(shell).ok().as_deref() == Some(me));
    let target = if is_self { real_bash } else { shell.as_str() };
    let mut run = text[..at].to_string();
    run.push_str(&format!(
        "\nexec {} -c {}\n",
        super::hook::rewrite::quote(target),
        super::hook::rewrite::quote(command)
    ));
    Some(Step::CodexExec {
        command: command.clone(),
        shell: target.to_string(),
        run,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_words() {
        assert_eq!(
            words("'/bin/sh' -c 'echo hi; echo $0'").unwrap(),
            ["/bin/sh", "-c", "echo hi; echo $0"]
        );
        assert_eq!(
            words("'/bin/sh' -c 'it'\\''s'").unwrap(),
            ["/bin/sh", "-c", "it's"]
        );
        assert!(words("'/bin/sh' -c \"$(id)\"").is_none());
        assert!(words("'/bin/sh' -c 'x'; rm -rf ~").is_none());
    }

    #[test]
    fn snapshot_script_is_data() {
        assert!(!scripts().is_empty());
    }
}
