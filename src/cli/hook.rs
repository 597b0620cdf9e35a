//! `safe-exec hook`: the agent hook protocol (Claude Code and Codex
//! `PreToolUse`). Reads one JSON object on standard input and judges
//! `tool_input.command` with the same engine and profile as `-c`, so the
//! hook and the configured shell cannot disagree.
//!
//! Exit-code protocol (default): 0 and no output to allow, 2 and the reason
//! on stderr to block (an `ask` blocks too: nobody can confirm here), 1 when
//! safe-exec cannot decide. Exit 2 is never used for an internal error,
//! because the agent would read it as a policy decision.
//!
//! `--json`: exit 0 and one `hookSpecificOutput` object; an internal error
//! becomes `deny` (fail closed), an `ask` becomes the agent's own `ask`.

mod files;
mod input;
pub mod isolate;
pub mod rewrite;

use std::io::Read;

use clap::Args;
use serde_json::{Map, Value, json};

use super::{Common, approval, situation};
use crate::decide::{self, CommandInput};
use crate::pipeline;
use crate::policy::Decision;
use crate::profile::{self, SelectionInputs};
pub use input::Agent;
use input::{Event, HookInput, InputError, ToolCommand};

/// `hook`
#[derive(Debug, Args)]
pub struct HookArgs {
    /// Answer with one `hookSpecificOutput` JSON object and exit 0 (errors become `deny`).
    #[arg(long)]
    pub json: bool,
    /// With `--json`: return an allowed command as `updatedInput.command`, a
    /// `safe-exec -c` invocation of the original, so it runs in the sandbox.
    #[arg(long, requires = "json")]
    pub rewrite: bool,
    /// Shared options (`cwd` and `session_id` from the input win).
    #[command(flatten)]
    pub common: Common,
}

/// What safe-exec concluded about one hook call.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Not something safe-exec judges (other tools, empty command, post
    /// events): no output, the agent's own rules apply.
    NoOpinion,
    /// Allowed; warnings to pass on; the rewritten tool input, if asked for.
    Allow {
        /// Informational warnings (network, classifier warnings).
        warnings: Vec<String>,
        /// `updatedInput` for `--rewrite`.
        updated_input: Option<Map<String, Value>>,
    },
    /// Needs a person's confirmation; with `--rewrite`, the command to run
    /// once the person approved (carrying a one-time approval token).
    Ask {
        /// Why.
        why: String,
        /// `updatedInput` for `--rewrite` (Claude Code only).
        updated_input: Option<Map<String, Value>>,
    },
    /// Refused, with a safer way where one is known.
    Deny(String),
}

/// Why the hook could not decide (exit 1, or `deny` in JSON mode).
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// Bad input.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The working directory or environment is unusable.
    #[error("{0}")]
    Situation(String),
    /// The profile cannot be loaded.
    #[error("cannot load the profile: {0}")]
    Profile(String),
}

/// Runs `hook`; returns the exit code. The decision is made under a
/// memory and time bound (see `isolate`): whatever happens
/// while deciding, the agent gets a block, never an allow.
pub fn run(a: HookArgs) -> i32 {
    let text = read_stdin();
    let flag_agent = a.common.agent.as_deref().and_then(Agent::from_name);
    let agent = flag_agent
        .or_else(|| {
            text.as_ref()
                .ok()
                .and_then(|t| input::parse(t).ok())
                .map(|h| h.agent)
        })
        .unwrap_or(Agent::ClaudeCode);
    let json = a.json;
    isolate::decide_isolated(
        || {
            let result = text.and_then(|t| judge(&a, &t));
            render(agent, json, result)
        },
        |why| render(agent, json, Err(HookError::Situation(why))),
    )
}

/// What the hook prints and its exit code.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Rendered {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Exit code.
    pub code: i32,
}

fn render(agent: Agent, json: bool, result: Result<Outcome, HookError>) -> Rendered {
    if json {
        emit_json(agent, result)
    } else {
        emit_exit_code(result)
    }
}

/// Called when the `hook` arguments themselves are wrong: exit 1 (never 2),
/// or a `deny` object when `--json` was asked for, so a broken hook entry in
/// the agent's settings fails closed in JSON mode.
pub fn usage_failure(args: &[std::ffi::OsString], err: &clap::Error) -> i32 {
    if !err.use_stderr() {
        // `--help`, `--version`: not a failure.
        let _ = err.print();
        return 0;
    }
    if args.iter().any(|a| a == "--json") {
        println!(
            "{}",
            decision_json(
                "deny",
                &format!("safe-exec hook: bad arguments: {err}"),
                None
            )
        );
        return 0;
    }
    // A broken hook entry must not let commands through: block (exit 2).
    eprintln!("safe-exec: error: safe-exec hook: bad arguments, so the command is blocked: {err}");
    2
}

/// The most hook input read (the agents send a few KiB; a patch or a file
/// write can be larger). More is refused, never read without bound.
pub const MAX_INPUT: u64 = 64 << 20;

fn read_stdin() -> Result<String, HookError> {
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_INPUT + 1)
        .read_to_string(&mut text)
        .map_err(InputError::Read)?;
    if text.len() as u64 > MAX_INPUT {
        return Err(HookError::Situation(format!(
            "the hook input is larger than {} MiB",
            MAX_INPUT >> 20
        )));
    }
    Ok(text)
}

/// Decides one hook call from the input text.
pub fn judge(a: &HookArgs, text: &str) -> Result<Outcome, HookError> {
    let hook = input::parse(text)?;
    match &hook.event {
        Event::PostToolUse | Event::PostToolUseFailure => {
            record_post(a, &hook);
            return Ok(Outcome::NoOpinion);
        }
        Event::Other(_) => return Ok(Outcome::NoOpinion),
        Event::PreToolUse => {}
    }
    let tool = hook.tool_name.as_deref().unwrap_or("");
    if input::is_command_tool(tool) {
        return match hook.tool_command()? {
            Some(ToolCommand::String(c)) if !c.trim().is_empty() => judge_command(
                a,
                &hook,
                CommandInput::String {
                    text: c,
                    positional: vec!["safe-exec".into()],
                },
            ),
            Some(ToolCommand::Argv(v)) if !v.is_empty() => {
                judge_command(a, &hook, CommandInput::List(v))
            }
            // The harness may run either key: never judge one and pass the other.
            Some(ToolCommand::Conflict) => Ok(Outcome::Deny(
                "the tool input has both `command` and `cmd` with different commands; which one runs depends on the harness, so neither is judged: send one of them".into(),
            )),
            _ => Ok(Outcome::NoOpinion),
        };
    }
    match files::access_of(tool) {
        Some(access) => judge_file(a, &hook, tool, access),
        None => Ok(Outcome::NoOpinion),
    }
}

/// PostToolUse / PostToolUseFailure: recorded in the audit log and passed
/// to the post hooks; never blocks, and problems are only warnings.
fn record_post(a: &HookArgs, hook: &HookInput) {
    let Some(command) = hook
        .command()
        .ok()
        .flatten()
        .filter(|c| !c.trim().is_empty())
    else {
        return;
    };
    let Ok(l) = load(a, hook) else { return };
    let input = CommandInput::String {
        text: command.to_string(),
        positional: vec!["safe-exec".into()],
    };
    let opts = layer_options(&l, hook, false);
    let judged = pipeline::judge(&input, &l.profile, &l.sit, &opts);
    let Ok(mut life) = judged.lifecycle(&l.profile, l.hooks_dir.as_deref(), &input, &l.sit) else {
        return;
    };
    let failed = matches!(hook.event, Event::PostToolUseFailure);
    life.reported(failed, serde_json::json!({"tool_name": hook.tool_name, "hook_event_name": if failed { "PostToolUseFailure" } else { "PostToolUse" }}));
}

/// The session the rewritten command belongs to.
fn opts_session<'a>(l: &'a Loaded, hook: &'a HookInput) -> Option<&'a str> {
    l.common.session.as_deref().or(hook.session_id.as_deref())
}

/// Layer options for a hook call: the agent's session, never an interactive person.
fn layer_options(l: &Loaded, hook: &HookInput, record: bool) -> decide::LayerOptions {
    decide::LayerOptions {
        session: l.common.session.clone().or_else(|| hook.session_id.clone()),
        agent: l.common.agent.clone().or_else(|| Some("agent-hook".into())),
        record,
        opts: serde_json::json!({"profile": l.profile.name, "via": "hook"}),
        metadata: serde_json::json!({"tool_name": hook.tool_name, "cwd": hook.cwd}),
    }
}

struct Loaded {
    profile: crate::profile::Profile,
    sit: crate::decide::Situation,
    common: super::shell_args::CommonOptions,
    hooks_dir: Option<String>,
    /// Set when the input's `cwd` was unusable and another directory was
    /// used, saying which and why.
    fallback: Option<String>,
}

/// Whether `p` is a directory safe-exec can work in.
fn usable_dir(p: &std::path::Path) -> bool {
    p.is_absolute() && std::fs::canonicalize(p).is_ok_and(|c| c.is_dir())
}

/// The directory to judge in when the input's `cwd` is gone (deleted by an
/// earlier command) or unusable. The agents do the same before they run
/// the next command: Claude Code goes back to the project directory
/// (`CLAUDE_PROJECT_DIR` in the hook's environment), Codex to its session
/// directory; otherwise the nearest existing ancestor's git root, the
/// nearest existing ancestor, then HOME.
fn fallback_cwd(reported: &str) -> Option<(String, &'static str)> {
    if let Ok(p) = std::env::var("CLAUDE_PROJECT_DIR")
        && usable_dir(std::path::Path::new(&p))
    {
        return Some((p, "the project directory (CLAUDE_PROJECT_DIR)"));
    }
    let r = std::path::Path::new(reported);
    if let Some(anc) = r.ancestors().skip(1).find(|d| usable_dir(d)) {
        if let Some(g) = anc.ancestors().find(|d| d.join(".git").exists()) {
            return Some((
                g.display().to_string(),
                "the git root of its nearest existing parent",
            ));
        }
        if anc != std::path::Path::new("/") {
            return Some((anc.display().to_string(), "its nearest existing parent"));
        }
    }
    if let Ok(h) = std::env::var("HOME")
        && usable_dir(std::path::Path::new(&h))
    {
        return Some((h, "HOME"));
    }
    None
}

fn load(a: &HookArgs, hook: &HookInput) -> Result<Loaded, HookError> {
    let mut common = a.common.to_options();
    if hook.session_id.is_some() {
        common.session = hook.session_id.clone();
    }
    let mut cwd = hook.cwd.clone();
    let mut fallback = None;
    if let Some(c) = hook.cwd.as_deref()
        && c.starts_with('/')
        && !usable_dir(std::path::Path::new(c))
        && let Some((dir, what)) = fallback_cwd(c)
    {
        fallback = Some(format!(
            "the working directory {c} no longer exists or is unusable; judged in {dir}, {what}, where the agent runs its next command"
        ));
        cwd = Some(dir);
    }
    let sit = situation::build(&common, cwd.as_deref(), true).map_err(|e| match &hook.cwd {
        Some(c) => HookError::Situation(format!(
            "the hook input's `cwd` ({c}) is not a usable directory: {e}"
        )),
        None => HookError::Situation(e),
    })?;
    let selection = profile::select(&SelectionInputs::from_env(
        common.profile.clone(),
        sit.places.cwd.clone(),
    ))
    .map_err(|e| HookError::Profile(e.to_string()))?;
    let mut sit = sit;
    situation::apply_system_state(&mut sit, &selection.system);
    // Only a rewritten command runs inside the sandbox; without
    // `--rewrite` nothing confines what the agent runs.
    sit.confined = a.rewrite;
    Ok(Loaded {
        profile: selection.profile,
        sit,
        common,
        hooks_dir: selection.system.hooks_dir,
        fallback,
    })
}

fn judge_command(
    a: &HookArgs,
    hook: &HookInput,
    input: CommandInput,
) -> Result<Outcome, HookError> {
    if input.raw().contains('\0')
        || matches!(&input, CommandInput::List(v) if v.iter().any(|w| w.contains('\0')))
    {
        return Ok(Outcome::Deny(
            "the command contains a NUL byte, which no shell can run; remove it".into(),
        ));
    }
    let l = load(a, hook)?;
    // The same layers as run mode: policy, validator, guard, blocking hooks,
    // audit. With --rewrite the command runs later through `safe-exec -c`,
    // which records it then; the guard counts it once.
    let opts = layer_options(&l, hook, !a.rewrite);
    let judged = pipeline::judge(&input, &l.profile, &l.sit, &opts);
    let mut life = judged
        .lifecycle(&l.profile, l.hooks_dir.as_deref(), &input, &l.sit)
        .map_err(|e| HookError::Situation(e.to_string()))?;
    let mut v = judged.gated(&mut life, |_| {});
    if let Err(why) = life.record_decision(&v) {
        v.add(
            crate::policy::Layer::Policy,
            crate::policy::ReasonId::AuditUnrecordable,
            Decision::Deny,
            why,
            None,
        );
    }
    if v.decision == Decision::Deny {
        life.refused(&v);
    }
    let note = |line: String| match &l.fallback {
        Some(f) => format!("{line} ({f})"),
        None => line,
    };
    let agent = a
        .common
        .agent
        .as_deref()
        .and_then(Agent::from_name)
        .unwrap_or(hook.agent);
    let outcome = match v.decision {
        Decision::Allow => Outcome::Allow {
            warnings: v.warnings,
            // When the agent's shell already is safe-exec, every command
            // runs confined anyway: rewriting it would only nest safe-exec
            // in safe-exec. No opinion then.
            updated_input: (a.rewrite && !shell_is_safe_exec(agent))
                .then(|| rewritten_input(&l, hook, &input, None, agent)),
        },
        Decision::Ask => {
            // Only Claude Code can put the question to its user; there the
            // approved command runs confined with a one-time token.
            let rewrite = a.rewrite && !shell_is_safe_exec(agent);
            if !rewrite && agent == Agent::ClaudeCode {
                // Claude Code asks its user; if safe-exec is also its shell
                // (or prefix), the approved command then runs there without
                // asking again.
                approval::grant_pending(&l.sit.places.state, &input.raw(), &l.sit.places.cwd)
                    .map_err(HookError::Situation)?;
            }
            let updated_input = if rewrite && agent == Agent::ClaudeCode {
                let session = opts_session(&l, hook).unwrap_or("default").to_string();
                let token = approval::issue(
                    &l.sit.places.state,
                    &input.raw(),
                    &l.sit.places.cwd,
                    &session,
                )
                .map_err(HookError::Situation)?;
                Some(rewritten_input(&l, hook, &input, Some(&token), agent))
            } else {
                None
            };
            Outcome::Ask {
                why: note(v.refusal_line()),
                updated_input,
            }
        }
        Decision::Deny => Outcome::Deny(note(with_hint(&v))),
    };
    // The process exits with the answer: freeing the profile, the model and
    // the verdict piece by piece first would only cost time.
    std::mem::forget(life);
    std::mem::forget((judged, l));
    Ok(outcome)
}

/// Whether the agent runs its commands with safe-exec as the shell:
/// Claude Code's `CLAUDE_CODE_SHELL` (or `SHELL`) in the hook's
/// environment, Codex's login shell from the password database, resolving
/// to this binary.
fn shell_is_safe_exec(agent: Agent) -> bool {
    let Some(me) = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(p).ok())
    else {
        return false;
    };
    let is_me = |p: &str| std::fs::canonicalize(p).ok().as_ref() == Some(&me);
    match agent {
        Agent::ClaudeCode => {
            let shell = ["CLAUDE_CODE_SHELL", "SHELL"]
                .iter()
                .filter_map(|v| std::env::var(v).ok())
                .find(|v| !v.is_empty())
                .is_some_and(|v| is_me(&v));
            // `CLAUDE_CODE_SHELL_PREFIX="/usr/bin/safe-exec -c"`.
            let prefix = std::env::var("CLAUDE_CODE_SHELL_PREFIX")
                .ok()
                .and_then(|p| p.split_whitespace().next().map(str::to_string))
                .is_some_and(|first| {
                    let first = first.trim_matches(|c| c == '\'' || c == '"');
                    if first.contains('/') {
                        is_me(first)
                    } else {
                        std::env::var_os("PATH").is_some_and(|path| {
                            std::env::split_paths(&path)
                                .any(|d| is_me(&d.join(first).to_string_lossy()))
                        })
                    }
                });
            shell || prefix
        }
        Agent::Codex => login_shell().is_some_and(|s| is_me(&s)),
    }
}

/// The login shell of the user running safe-exec, from `/etc/passwd`
/// (read directly: the static binary has no NSS modules).
fn login_shell() -> Option<String> {
    let uid = nix::unistd::getuid().to_string();
    std::fs::read_to_string("/etc/passwd")
        .ok()?
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() >= 7 && f[2] == uid).then(|| f[6].to_string())
        })
}

/// `updatedInput` for `--rewrite`: the original tool input with the command
/// replaced by a safe-exec invocation of it (see [`rewrite`]).
fn rewritten_input(
    l: &Loaded,
    hook: &HookInput,
    input: &CommandInput,
    approval: Option<&str>,
    agent: Agent,
) -> Map<String, Value> {
    let base = std::env::current_dir().unwrap_or_else(|_| "/".into());
    let profile = l
        .common
        .profile
        .as_deref()
        .map(|p| rewrite::stable_profile(p, &base));
    let timeout = l.common.timeout.map(|t| t.to_string());
    let mut opts: Vec<(&str, &str)> = Vec::new();
    if let Some(p) = profile.as_deref() {
        opts.push(("--profile", p));
    }
    if let Some(t) = timeout.as_deref() {
        opts.push(("--timeout", t));
    }
    let session = opts_session(l, hook).unwrap_or("default");
    opts.push(("--session", session));
    if let Some(a) = l.common.agent.as_deref() {
        opts.push(("--agent", a));
    }
    if let Some(t) = approval {
        opts.push(("--approval", t));
    }
    let exe = rewrite::own_path();
    let mut m = hook.tool_input.clone();
    let value = match input {
        // Claude Code carries `cd` over between calls; Codex does not (each
        // command starts in the turn's directory) and refuses a command
        // string with `rm -f` in it, so it gets the plain form.
        CommandInput::String { text, .. } if agent == Agent::ClaudeCode => {
            let cwd_file = rewrite::cwd_file(&l.sit.places.tmp);
            Value::String(rewrite::rewrite_carrying_cwd(&exe, &opts, text, &cwd_file))
        }
        CommandInput::String { text, .. } => {
            Value::String(rewrite::rewrite_with(&exe, &opts, text))
        }
        CommandInput::List(argv) => {
            let mut v = vec![Value::String(exe.to_string_lossy().into_owned())];
            for (n, x) in &opts {
                v.push(Value::String((*n).into()));
                v.push(Value::String((*x).into()));
            }
            v.push(Value::String("--".into()));
            v.extend(argv.iter().cloned().map(Value::String));
            Value::Array(v)
        }
    };
    // Every key that holds the judged command (`command`, `cmd`, or both
    // when they are the same) gets the rewritten one.
    for key in hook.command_keys() {
        m.insert(key.into(), value.clone());
    }
    m
}

/// The refusal text; when no reason carries a suggestion, a general one, so
/// the agent learns what to do instead of retrying variants.
fn with_hint(v: &crate::policy::Verdict) -> String {
    let line = v.refusal_line();
    if v.reasons.iter().any(|r| r.suggestion.is_some()) {
        line
    } else {
        format!(
            "{line}. Do not retry a variant of this command: do the job with a narrower command on files inside the project, or ask the user to run it"
        )
    }
}

fn judge_file(
    a: &HookArgs,
    hook: &HookInput,
    tool: &str,
    access: files::Access,
) -> Result<Outcome, HookError> {
    let paths: Vec<String> = if tool == "apply_patch" {
        let Some(text) = hook.patch_text()? else {
            return Ok(Outcome::Deny(
                "`apply_patch` without a patch: nothing safe-exec can check".into(),
            ));
        };
        match files::patch_paths(&text) {
            Ok(p) => p,
            Err(why) => {
                return Ok(Outcome::Deny(format!(
                    "`apply_patch` is refused: {why}; send one `*** Begin Patch` envelope"
                )));
            }
        }
    } else {
        let p = match tool {
            "NotebookEdit" => hook.notebook_path()?.or(hook.file_path()?),
            // The directory searched (a missing `path` is the cwd).
            "Grep" | "Glob" | "LS" => hook.search_path()?,
            _ => hook.file_path()?,
        };
        match p {
            Some(p) if !p.is_empty() => vec![p.to_string()],
            _ => return Ok(Outcome::NoOpinion),
        }
    };
    let l = load(a, hook)?;
    if !l.profile.doc.policy.hook_file_tools {
        return Ok(Outcome::NoOpinion);
    }
    let roots = l.profile.roots_shared(&l.sit.places);
    let extra = files::Extra {
        protected: l.profile.doc.paths.protected.clone(),
        secret_names: l.profile.doc.paths.secret_names.clone(),
    };
    for p in &paths {
        if let Err(why) = files::check(&roots, &extra, &l.sit.places.cwd, tool, access, p) {
            return Ok(Outcome::Deny(match &l.fallback {
                Some(f) => format!("{why} ({f})"),
                None => why,
            }));
        }
    }
    // Inside the roots: no opinion, so the agent's own rules (and prompts)
    // still decide.
    Ok(Outcome::NoOpinion)
}

/// The `--json` object: exactly `hookSpecificOutput` with the decision,
/// the reason and, for `--rewrite`, `updatedInput`.
pub fn decision_json(decision: &str, reason: &str, updated: Option<Map<String, Value>>) -> Value {
    let mut out = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    });
    if let (Some(u), Value::Object(m)) = (updated, &mut out) {
        m.insert("updatedInput".into(), Value::Object(u));
    }
    json!({ "hookSpecificOutput": out })
}

fn emit_json(agent: Agent, result: Result<Outcome, HookError>) -> Rendered {
    let mut stderr = String::new();
    let obj = match result {
        Ok(Outcome::NoOpinion) => None,
        // Without --rewrite an allowed command gets no opinion: an `allow`
        // would switch off the agent's own permission prompts.
        Ok(Outcome::Allow {
            warnings,
            updated_input: None,
        }) => {
            for w in &warnings {
                stderr.push_str(&format!("safe-exec: warning: {w}\n"));
            }
            None
        }
        Ok(Outcome::Allow {
            warnings,
            updated_input: Some(u),
        }) => {
            let mut reason = String::from("safe-exec: allowed; runs inside the safe-exec sandbox");
            for w in &warnings {
                reason.push_str("; warning: ");
                reason.push_str(w);
            }
            Some(decision_json("allow", &reason, Some(u)))
        }
        Ok(Outcome::Ask { why, updated_input }) => match agent {
            Agent::ClaudeCode => {
                let mut reason = format!("safe-exec: confirmation is needed: {why}");
                if updated_input.is_some() {
                    reason.push_str("; once approved it runs inside the safe-exec sandbox");
                }
                Some(decision_json("ask", &reason, updated_input))
            }
            // Codex takes no `ask` (it marks the hook failed and runs the
            // command): nobody can answer, so it is a refusal.
            Agent::Codex => Some(decision_json(
                "deny",
                &format!(
                    "safe-exec: denied: confirmation is needed and nobody can be asked here: {why}. Ask the user to run it, or do the job another way"
                ),
                None,
            )),
        },
        Ok(Outcome::Deny(why)) => Some(decision_json(
            "deny",
            &format!("safe-exec: denied: {why}"),
            None,
        )),
        Err(e) => Some(decision_json(
            "deny",
            &format!("safe-exec could not decide, so the command is refused: {e}"),
            None,
        )),
    };
    Rendered {
        stdout: obj.map(|o| format!("{o}\n")).unwrap_or_default(),
        stderr,
        code: 0,
    }
}

fn emit_exit_code(result: Result<Outcome, HookError>) -> Rendered {
    let (stderr, code) = match result {
        Ok(Outcome::NoOpinion) => (String::new(), 0),
        Ok(Outcome::Allow { warnings, .. }) => (
            warnings
                .iter()
                .map(|w| format!("safe-exec: warning: {w}\n"))
                .collect(),
            0,
        ),
        Ok(Outcome::Ask { why, .. }) => (
            format!(
                "safe-exec: denied: confirmation is needed and a hook cannot ask: {why}. Ask the user to run it, or do the job another way\n"
            ),
            2,
        ),
        Ok(Outcome::Deny(why)) => (format!("safe-exec: denied: {why}\n"), 2),
        // Exit 1 would be a non-blocking error: both agents then run the
        // command. Whatever keeps safe-exec from deciding blocks.
        Err(e) => (
            format!("safe-exec: error: {e}; the command is blocked until safe-exec can decide\n"),
            2,
        ),
    };
    Rendered {
        stdout: String::new(),
        stderr,
        code,
    }
}
