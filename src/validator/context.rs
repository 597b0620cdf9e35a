//! The validation context of seed 000 as JSON: what the validator (and,
//! minus the pre-execution fields, `on_execution`) is told about a command.

use serde_json::{Value, json};

use super::ValidatorSection;
use crate::config::Profile;
use crate::guard::{Entry, SessionState};
use crate::parse::CommandModel;
use crate::policy::Verdict;
use crate::request::{CommandInput, Situation};

/// Who is asking and under which options, beyond the command itself.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// Session id.
    pub session: String,
    /// Agent name, if known.
    pub agent: Option<String>,
    /// Options of this invocation (profile, timeout, dry run...).
    pub opts: Value,
    /// Extensible metadata (from the caller, e.g. an agent hook's input).
    pub metadata: Value,
}

/// `raw_command`: the argv list for the list form, the string otherwise.
pub fn raw_command(input: &CommandInput) -> Value {
    match input {
        CommandInput::List(v) => json!(v),
        CommandInput::String { text, .. } => json!(text),
    }
}

/// The session's history as the validator sees it, oldest first.
pub fn history(state: Option<&SessionState>) -> Vec<Value> {
    state
        .map(|s| s.history.iter().map(entry).collect())
        .unwrap_or_default()
}

fn entry(e: &Entry) -> Value {
    json!({
        "id": e.id,
        "timestamp": e.ts_ms,
        "raw_command": e.raw,
        "command_form": e.form,
        "programs": e.segments.iter().map(|s| s.program.clone()).collect::<Vec<_>>(),
        "tags": e.segments.iter().flat_map(|s| s.tags.clone()).collect::<Vec<_>>(),
        "decision": e.decision,
        "decided_by": e.decided_by,
    })
}

/// `session_state`: the guard's counts, or null when the guard is off.
pub fn session_state(state: Option<&SessionState>, guard_on: bool) -> Value {
    match (state, guard_on) {
        (_, false) => Value::Null,
        (None, true) => {
            json!({"commands": 0, "allowed": 0, "asked": 0, "denied": 0, "locked_until": null})
        }
        (Some(s), true) => json!({
            "started": s.started_ms,
            "commands": s.commands,
            "allowed": s.allowed,
            "asked": s.asked,
            "denied": s.denied,
            "locked_until": s.lockout_until_ms,
        }),
    }
}

/// `env`: the command's environment after scrubbing, as
/// `[{"name": ...}]`, with `"value"` only when the profile allows values.
pub fn env(profile: &Profile, cfg: &ValidatorSection) -> Value {
    let scrubbed = crate::sandbox::env::scrub(std::env::vars_os(), &profile.doc.env);
    Value::Array(
        scrubbed
            .kept
            .iter()
            .map(|(k, v)| {
                let name = k.to_string_lossy();
                if cfg.env_values {
                    json!({"name": name, "value": v.to_string_lossy()})
                } else {
                    json!({"name": name})
                }
            })
            .collect(),
    )
}

/// The whole validation context.
#[allow(clippy::too_many_arguments)]
pub fn build(
    input: &CommandInput,
    model: &CommandModel,
    verdict: &Verdict,
    sit: &Situation,
    profile: &Profile,
    caller: &Caller,
    state: Option<&SessionState>,
    now_ms: u64,
) -> Value {
    json!({
        "command_struct": model,
        "raw_command": raw_command(input),
        "command_form": model.form,
        "session_id": caller.session,
        "session_state": session_state(state, profile.doc.guard.enabled),
        "agent": caller.agent,
        "opts": caller.opts,
        "cwd": sit.places.cwd,
        "env": env(profile, &profile.doc.validator),
        "history": history(state),
        "timestamp": now_ms,
        "policy_result": super::policy_result(verdict),
        "metadata": caller.metadata,
    })
}
