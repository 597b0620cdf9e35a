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
pub mod rewrite;

use std::io::Read;

use clap::Args;
use serde_json::{Map, Value, json};

use super::{Common, situation};
use crate::decide::{self, CommandInput};
use crate::hooks::lifecycle::Lifecycle;
use crate::policy::Decision;
use crate::profile::{self, SelectionInputs};
use input::{Event, HookInput, InputError};

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
    /// Needs a person's confirmation.
    Ask(String),
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

/// Runs `hook`; returns the exit code.
pub fn run(a: HookArgs) -> i32 {
    let result = read_stdin().and_then(|text| judge(&a, &text));
    if a.json {
        emit_json(result)
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
    let _ = err.print();
    1
}

fn read_stdin() -> Result<String, HookError> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(InputError::Read)?;
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
    if tool == "Bash" {
        return match hook.command()? {
            Some(c) if !c.trim().is_empty() => judge_command(a, &hook, c),
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
    let (decided, layered) = decide::decide_full(&input, &l.profile, &l.sit, &opts);
    let Ok(mut life) = Lifecycle::new(
        &l.profile,
        l.hooks_dir.as_deref(),
        &input,
        &decided,
        &l.sit,
        &layered,
    ) else {
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
}

fn load(a: &HookArgs, hook: &HookInput) -> Result<Loaded, HookError> {
    let mut common = a.common.to_options();
    if hook.session_id.is_some() {
        common.session = hook.session_id.clone();
    }
    let sit =
        situation::build(&common, hook.cwd.as_deref(), true).map_err(|e| match &hook.cwd {
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
    })
}

fn judge_command(a: &HookArgs, hook: &HookInput, command: &str) -> Result<Outcome, HookError> {
    if command.contains('\0') {
        return Ok(Outcome::Deny(
            "the command contains a NUL byte, which no shell can run; remove it".into(),
        ));
    }
    let l = load(a, hook)?;
    let input = CommandInput::String {
        text: command.to_string(),
        positional: vec!["safe-exec".into()],
    };
    // The same layers as run mode: policy, validator, guard, blocking hooks,
    // audit. With --rewrite the command runs later through `safe-exec -c`,
    // which records it then; the guard counts it once.
    let opts = layer_options(&l, hook, !a.rewrite);
    let (decided, layered) = decide::decide_full(&input, &l.profile, &l.sit, &opts);
    let mut life = Lifecycle::new(
        &l.profile,
        l.hooks_dir.as_deref(),
        &input,
        &decided,
        &l.sit,
        &layered,
    )
    .map_err(|e| HookError::Situation(e.to_string()))?;
    let mut v = decided.verdict.clone();
    life.session_events();
    life.gate(&mut v);
    if let Err(why) = life.record_decision(&v) {
        v.add(
            crate::policy::Layer::Policy,
            "audit.unrecordable",
            Decision::Deny,
            why,
            None,
        );
    }
    if v.decision == Decision::Deny {
        life.refused(&v);
    }
    Ok(match v.decision {
        Decision::Allow => {
            let updated_input = a.rewrite.then(|| {
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
                if let Some(s) = opts_session(&l, hook) {
                    opts.push(("--session", s));
                }
                if let Some(a) = l.common.agent.as_deref() {
                    opts.push(("--agent", a));
                }
                let mut m = hook.tool_input.clone();
                m.insert(
                    "command".into(),
                    Value::String(rewrite::rewrite_with(&rewrite::own_path(), &opts, command)),
                );
                m
            });
            Outcome::Allow {
                warnings: v.warnings,
                updated_input,
            }
        }
        Decision::Ask => Outcome::Ask(v.refusal_line()),
        Decision::Deny => Outcome::Deny(with_hint(&v)),
    })
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
    let Some(path) = hook.file_path()? else {
        return Ok(Outcome::NoOpinion);
    };
    let l = load(a, hook)?;
    if !l.profile.doc.policy.hook_file_tools || path.is_empty() {
        return Ok(Outcome::NoOpinion);
    }
    let roots = l.profile.roots(&l.sit.places);
    Ok(
        match files::check(&roots, &l.sit.places.cwd, tool, access, path) {
            Ok(()) => Outcome::Allow {
                warnings: Vec::new(),
                updated_input: None,
            },
            Err(why) => Outcome::Deny(why),
        },
    )
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

fn emit_json(result: Result<Outcome, HookError>) -> i32 {
    let obj = match result {
        Ok(Outcome::NoOpinion) => return 0,
        Ok(Outcome::Allow {
            warnings,
            updated_input,
        }) => {
            let mut reason = String::from("safe-exec: allowed");
            if updated_input.is_some() {
                reason.push_str("; runs inside the safe-exec sandbox");
            }
            for w in &warnings {
                reason.push_str("; warning: ");
                reason.push_str(w);
            }
            decision_json("allow", &reason, updated_input)
        }
        Ok(Outcome::Ask(why)) => decision_json(
            "ask",
            &format!("safe-exec: confirmation is needed: {why}"),
            None,
        ),
        Ok(Outcome::Deny(why)) => decision_json("deny", &format!("safe-exec: denied: {why}"), None),
        Err(e) => decision_json(
            "deny",
            &format!("safe-exec could not decide, so the command is refused: {e}"),
            None,
        ),
    };
    println!("{obj}");
    0
}

fn emit_exit_code(result: Result<Outcome, HookError>) -> i32 {
    match result {
        Ok(Outcome::NoOpinion) => 0,
        Ok(Outcome::Allow { warnings, .. }) => {
            for w in &warnings {
                eprintln!("safe-exec: warning: {w}");
            }
            0
        }
        Ok(Outcome::Ask(why)) => {
            eprintln!(
                "safe-exec: denied: confirmation is needed and a hook cannot ask: {why}. Ask the user to run it, or do the job another way"
            );
            2
        }
        Ok(Outcome::Deny(why)) => {
            eprintln!("safe-exec: denied: {why}");
            2
        }
        Err(e) => {
            eprintln!("safe-exec: error: {e}");
            1
        }
    }
}
