//! `safe-exec setup claude-code|codex [--dry-run] [--rewrite]`: writes the
//! hook into the user's own agent settings (outside any project, which the
//! agent can write), including Codex's hook trust entry, checks the result
//! and prints what it did. `doctor` reports the same state ([`status`]).
//!
//! Claude Code: `$CLAUDE_CONFIG_DIR/settings.json`, else
//! `~/.claude/settings.json`: a `PreToolUse` entry running
//! `SAFE-EXEC hook --json --agent claude-code`.
//!
//! Codex: `$CODEX_HOME/hooks.json`, else `~/.codex/hooks.json`, plus the
//! trust entry in `config.toml` beside it:
//! `[hooks.state."<abs hooks.json>:pre_tool_use:<group>:<handler>"]`
//! `trusted_hash = "sha256:<hex>"`, where the hash is SHA-256 of the
//! canonical JSON (keys sorted, compact) of the normalised hook identity
//! `{"event_name":"pre_tool_use","hooks":[{"async":false,"command":...,
//! "timeout":N,"type":"command"}],"matcher":...}` (codex-rs
//! `hooks/src/engine/discovery.rs` `command_hook_hash` and
//! `config/src/fingerprint.rs` `version_for_toml`; measured against Codex
//! 0.169.0 and tested against it in `agents::real`). Codex runs
//! an untrusted hook never, silently.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// Which agent to configure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentKind {
    /// Claude Code (`~/.claude/settings.json`).
    ClaudeCode,
    /// OpenAI Codex CLI (`~/.codex/hooks.json` and `config.toml`).
    Codex,
    /// The entry point for agents' shells: a symlink named `bash` to this
    /// binary (`/usr/lib/safe-exec/bin/bash` as root, else
    /// `~/.local/lib/safe-exec/bin/bash`; `--dir` chooses).
    Shell,
}

/// `setup`
#[derive(Debug, Args)]
pub struct SetupArgs {
    /// The agent to configure.
    pub agent: AgentKind,
    /// Print what would change, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Also run every allowed or approved command inside the sandbox
    /// (`hook --rewrite`).
    #[arg(long)]
    pub rewrite: bool,
    /// Profile for the hook (a built-in name or an absolute path).
    #[arg(long)]
    pub profile: Option<String>,
    /// `setup shell`: the directory for the `bash` symlink.
    #[arg(long)]
    pub dir: Option<String>,
}

/// Timeout of the hook entry (seconds): above the hook's own limit for
/// deciding, so the agent's time-out (a non-blocking error) never fires first.
pub const HOOK_TIMEOUT: u64 = 30;

/// Tools the Claude Code entry matches.
pub const CLAUDE_MATCHER: &str = "Bash|Write|Edit|MultiEdit|NotebookEdit|Read|Grep|Glob";
/// Tools the Codex entry matches (`Bash` is Codex's hook name for
/// `exec_command`; `apply_patch` edits files).
pub const CODEX_MATCHER: &str = "Bash|apply_patch|exec_command|shell";

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Claude Code's user settings file.
pub fn claude_settings() -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d).join("settings.json"),
        None => home().join(".claude/settings.json"),
    }
}

/// Codex's home (`$CODEX_HOME`, else `~/.codex`).
pub fn codex_home() -> PathBuf {
    match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => home().join(".codex"),
    }
}

/// The hook command written into the agent's settings.
pub fn hook_command(agent: AgentKind, rewrite: bool, profile: Option<&str>) -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(p).ok())
        .unwrap_or_else(|| PathBuf::from("safe-exec"));
    let mut c = super::hook::rewrite::quote(&exe.to_string_lossy());
    c.push_str(" hook --json --agent ");
    c.push_str(match agent {
        AgentKind::ClaudeCode => "claude-code",
        AgentKind::Codex | AgentKind::Shell => "codex",
    });
    if rewrite {
        c.push_str(" --rewrite");
    }
    if let Some(p) = profile {
        c.push_str(" --profile ");
        c.push_str(&super::hook::rewrite::quote(p));
    }
    c
}

/// Codex's trust hash of one command hook.
pub fn codex_trusted_hash(
    event: &str,
    matcher: Option<&str>,
    command: &str,
    timeout: u64,
) -> String {
    let mut identity = Map::new();
    identity.insert("event_name".into(), Value::String(event.into()));
    identity.insert(
        "hooks".into(),
        json!([{"async": false, "command": command, "timeout": timeout.max(1), "type": "command"}]),
    );
    if let Some(m) = matcher {
        identity.insert("matcher".into(), Value::String(m.into()));
    }
    // serde_json's Map is ordered by key, so this is the canonical form.
    let text = Value::Object(identity).to_string();
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "sha256:{}",
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}

fn is_ours(cmd: &str) -> bool {
    cmd.contains("safe-exec") && cmd.contains(" hook")
}

/// Adds (or replaces) safe-exec's `PreToolUse` entry in a hooks object;
/// returns the (group, handler) index of ours.
fn put_hook(root: &mut Value, matcher: &str, command: &str) -> Result<(usize, usize), String> {
    if !root.is_object() {
        return Err("the file is not a JSON object".into());
    }
    let hooks = root
        .as_object_mut()
        .map(|o| o.entry("hooks").or_insert_with(|| json!({})))
        .ok_or("not an object")?;
    let pre = hooks
        .as_object_mut()
        .ok_or("`hooks` is not an object")?
        .entry("PreToolUse")
        .or_insert_with(|| json!([]));
    let groups = pre
        .as_array_mut()
        .ok_or("`hooks.PreToolUse` is not an array")?;
    // Remove earlier safe-exec entries (any version, any path).
    for g in groups.iter_mut() {
        if let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) {
            hs.retain(|h| {
                !h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(is_ours)
            });
        }
    }
    groups.retain(|g| {
        g.get("hooks")
            .and_then(Value::as_array)
            .is_none_or(|h| !h.is_empty())
    });
    groups.push(json!({
        "matcher": matcher,
        "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT}],
    }));
    Ok((groups.len() - 1, 0))
}

fn read_json(path: &Path) -> Result<Value, String> {
    match std::fs::read_to_string(path) {
        Ok(t) if t.trim().is_empty() => Ok(json!({})),
        Ok(t) => {
            serde_json::from_str(&t).map_err(|e| format!("{}: not valid JSON: {e}", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(json!({})),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn write_atomic(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    if path.exists() {
        let backup = path.with_extension(format!(
            "{}.safe-exec-backup",
            path.extension().and_then(|e| e.to_str()).unwrap_or("")
        ));
        std::fs::copy(path, &backup)
            .map_err(|e| format!("cannot back up {}: {e}", path.display()))?;
    }
    let tmp = path.with_extension("safe-exec-tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The TOML key of a Codex hook's trust state.
fn codex_key(hooks_json: &Path, group: usize, handler: usize) -> String {
    format!("{}:pre_tool_use:{group}:{handler}", hooks_json.display())
}

/// `config.toml` with the `[hooks.state."KEY"]` table set to `hash`
/// (replacing an earlier one with the same key; the rest of the file is
/// kept byte for byte).
fn put_trust(config: &str, key: &str, hash: &str) -> String {
    let header = format!("[hooks.state.{}]", toml_string(key));
    let mut out = String::new();
    let mut skipping = false;
    for line in config.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            skipping = t == header;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
    out.push_str(&format!(
        "{header}\nenabled = true\ntrusted_hash = {}\n",
        toml_string(hash)
    ));
    out
}

fn toml_string(s: &str) -> String {
    // JSON string escaping is valid TOML basic-string escaping for these.
    Value::String(s.to_string()).to_string()
}

/// Runs `setup`.
pub fn run(a: SetupArgs) -> i32 {
    match setup(&a) {
        Ok(lines) => {
            for l in lines {
                println!("{l}");
            }
            0
        }
        Err(e) => super::error(e),
    }
}

fn setup(a: &SetupArgs) -> Result<Vec<String>, String> {
    if a.agent == AgentKind::Shell {
        return setup_shell(a);
    }
    let command = hook_command(a.agent, a.rewrite, a.profile.as_deref());
    let mut said = Vec::new();
    let verb = if a.dry_run { "would write" } else { "wrote" };
    match a.agent {
        AgentKind::ClaudeCode => {
            let path = claude_settings();
            let mut v = read_json(&path)?;
            put_hook(&mut v, CLAUDE_MATCHER, &command)?;
            let text = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n";
            if !a.dry_run {
                write_atomic(&path, &text)?;
            }
            said.push(format!(
                "{verb} {}: PreToolUse hook (matcher `{CLAUDE_MATCHER}`, timeout {HOOK_TIMEOUT} s): {command}",
                path.display()
            ));
        }
        AgentKind::Codex | AgentKind::Shell => {
            let home = codex_home();
            let hooks_path = home.join("hooks.json");
            let abs = if hooks_path.is_absolute() {
                hooks_path.clone()
            } else {
                std::env::current_dir()
                    .map_err(|e| e.to_string())?
                    .join(&hooks_path)
            };
            let mut v = read_json(&abs)?;
            let (g, h) = put_hook(&mut v, CODEX_MATCHER, &command)?;
            let text = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n";
            let hash =
                codex_trusted_hash("pre_tool_use", Some(CODEX_MATCHER), &command, HOOK_TIMEOUT);
            let key = codex_key(&abs, g, h);
            let cfg_path = home.join("config.toml");
            let old = match std::fs::read_to_string(&cfg_path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                Err(e) => return Err(format!("cannot read {}: {e}", cfg_path.display())),
            };
            let new = put_trust(&old, &key, &hash);
            toml::from_str::<toml::Table>(&new)
                .map_err(|e| format!("{} would not be valid TOML: {e}", cfg_path.display()))?;
            if !a.dry_run {
                write_atomic(&abs, &text)?;
                write_atomic(&cfg_path, &new)?;
            }
            said.push(format!(
                "{verb} {}: PreToolUse hook (matcher `{CODEX_MATCHER}`, timeout {HOOK_TIMEOUT} s): {command}",
                abs.display()
            ));
            said.push(format!(
                "{verb} {}: [hooks.state.\"{key}\"] trusted_hash = \"{hash}\" (Codex skips untrusted hooks silently)",
                cfg_path.display()
            ));
        }
    }
    if !a.dry_run {
        let st = status();
        let name = match a.agent {
            AgentKind::ClaudeCode => "claude-code",
            _ => "codex",
        };
        let ok = st[name]["installed"].as_bool() == Some(true)
            && st[name]["trusted"].as_bool() != Some(false);
        if !ok {
            return Err(format!(
                "the configuration was written but does not check out: {}",
                st[name]
            ));
        }
        said.push(format!(
            "checked: {}",
            st[name]["summary"].as_str().unwrap_or("")
        ));
    }
    Ok(said)
}

/// `setup shell`: the `bash` symlink to this binary.
fn setup_shell(a: &SetupArgs) -> Result<Vec<String>, String> {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(p).ok())
        .ok_or("cannot find safe-exec's own executable")?;
    let root = nix::unistd::geteuid().is_root();
    let dir = match &a.dir {
        Some(d) => PathBuf::from(d),
        None if root => PathBuf::from("/usr/lib/safe-exec/bin"),
        None => home().join(".local/lib/safe-exec/bin"),
    };
    let link = dir.join("bash");
    let verb = if a.dry_run { "would link" } else { "linked" };
    if !a.dry_run {
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        match std::fs::symlink_metadata(&link) {
            Ok(m) if m.file_type().is_symlink() => {
                std::fs::remove_file(&link)
                    .map_err(|e| format!("cannot replace {}: {e}", link.display()))?;
            }
            Ok(_) => {
                return Err(format!(
                    "{} exists and is not a symlink; not touching it",
                    link.display()
                ));
            }
            Err(_) => {}
        }
        std::os::unix::fs::symlink(&exe, &link)
            .map_err(|e| format!("cannot create {}: {e}", link.display()))?;
        let check = std::fs::canonicalize(&link).map_err(|e| e.to_string())?;
        if check != exe {
            return Err(format!(
                "{} does not lead to {}",
                link.display(),
                exe.display()
            ));
        }
    }
    Ok(vec![
        format!("{verb} {} -> {}", link.display(), exe.display()),
        format!("Claude Code: export CLAUDE_CODE_SHELL={}", link.display()),
        format!(
            "Codex (login shell of the agent user): add {} to /etc/shells, then chsh -s {} USER",
            link.display(),
            link.display()
        ),
    ])
}

/// Finds safe-exec's PreToolUse hook in a hooks file: (group, handler,
/// command, matcher, timeout).
fn find_hook(v: &Value) -> Option<(usize, usize, String, Option<String>, u64)> {
    let groups = v.get("hooks")?.get("PreToolUse")?.as_array()?;
    for (gi, g) in groups.iter().enumerate() {
        for (hi, h) in g.get("hooks")?.as_array()?.iter().enumerate() {
            if let Some(c) = h.get("command").and_then(Value::as_str)
                && is_ours(c)
            {
                let m = g.get("matcher").and_then(Value::as_str).map(str::to_string);
                let t = h.get("timeout").and_then(Value::as_u64).unwrap_or(600);
                return Some((gi, hi, c.to_string(), m, t));
            }
        }
    }
    None
}

/// Whether the hook is installed (and, for Codex, trusted) for each agent.
pub fn status() -> Value {
    let claude = claude_settings();
    let c = match read_json(&claude).ok().as_ref().and_then(find_hook) {
        Some((_, _, cmd, m, _)) => {
            json!({"installed": true, "file": claude, "command": cmd, "matcher": m,
            "summary": format!("hook installed in {}", claude.display())})
        }
        None => json!({"installed": false, "file": claude,
            "summary": format!("no safe-exec hook in {} (run `safe-exec setup claude-code`)", claude.display())}),
    };
    let home = codex_home();
    let hooks = home.join("hooks.json");
    let x = match read_json(&hooks).ok().as_ref().and_then(find_hook) {
        Some((g, h, cmd, m, t)) => {
            let key = codex_key(&hooks, g, h);
            let want = codex_trusted_hash("pre_tool_use", m.as_deref(), &cmd, t);
            let have = std::fs::read_to_string(home.join("config.toml"))
                .ok()
                .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
                .and_then(|t| {
                    t.get("hooks")?
                        .get("state")?
                        .get(&key)?
                        .get("trusted_hash")?
                        .as_str()
                        .map(str::to_string)
                });
            let trusted = have.as_deref() == Some(want.as_str());
            json!({"installed": true, "trusted": trusted, "file": hooks, "command": cmd, "key": key,
            "summary": if trusted {
                format!("hook installed in {} and trusted in config.toml", hooks.display())
            } else {
                format!("hook installed in {} but NOT trusted (Codex skips it silently; run `safe-exec setup codex`)", hooks.display())
            }})
        }
        None => json!({"installed": false, "file": hooks,
            "summary": format!("no safe-exec hook in {} (run `safe-exec setup codex`)", hooks.display())}),
    };
    json!({"claude-code": c, "codex": x})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_hash_matches_codex() {
        // Measured with Codex 0.169.0 (`codex app-server` hooks/list
        // currentHash); `agents::real` checks it against the real CLI.
        assert_eq!(
            codex_trusted_hash(
                "pre_tool_use",
                Some("Bash|exec_command|apply_patch|.*"),
                "HOOK_TAG=kh1 /work/agents-explore/rec-hook.sh",
                10
            ),
            "sha256:b9ddebe50c2358f4e90d26fc758691402efe8c049a62bdcc5fbb891a9b282b99"
        );
    }

    #[test]
    fn trust_table_is_replaced_not_duplicated() {
        let c = "model = \"x\"\n[hooks.state.\"/h/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"old\"\n[other]\na = 1\n";
        let n = put_trust(c, "/h/hooks.json:pre_tool_use:0:0", "sha256:new");
        let t: toml::Table = toml::from_str(&n).unwrap();
        assert_eq!(
            t["hooks"]["state"]["/h/hooks.json:pre_tool_use:0:0"]["trusted_hash"].as_str(),
            Some("sha256:new")
        );
        assert_eq!(t["other"]["a"].as_integer(), Some(1));
        assert_eq!(n.matches("trusted_hash").count(), 1);
    }
}
