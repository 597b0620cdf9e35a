//! Layer 2 (seed 000): the profile's validator, an external program that
//! gets the validation context as JSON on stdin and answers allow or deny.
//! It runs after the static policy and before the guard, can only keep or
//! tighten the decision, and fails closed. With no validator configured the
//! layer defers to the policy and costs nothing.

pub mod context;

use std::time::Duration;

use serde_json::{Value, json};

use crate::policy::{Decision, Layer, Verdict};
use crate::sys::external;

pub use crate::config::sections::ValidatorSection;

impl ValidatorSection {
    /// Whether a validator is configured.
    pub fn enabled(&self) -> bool {
        !self.command.is_empty()
    }

    fn who(&self) -> String {
        format!("validator `{}`", self.command.join(" "))
    }
}

/// The validator's verdict on one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Keep the policy's decision.
    Allow,
    /// Ask for confirmation (a tightening; an extension of seed 000).
    Ask(String),
    /// Deny with a reason and optional details (kept in the audit log).
    Deny(String, Option<Value>),
}

/// `policy_result` as seed 000 spells it: `"allow"`, `"ask"` or
/// `{"deny": reason}`.
pub fn policy_result(v: &Verdict) -> Value {
    match v.decision {
        Decision::Allow => json!("allow"),
        Decision::Ask => json!("ask"),
        Decision::Deny => json!({ "deny": v.refusal_line() }),
    }
}

/// Asks the validator about one command. Every failure is a denial whose
/// reason names the validator (fail-closed).
pub fn validate(cfg: &ValidatorSection, context: &Value) -> Answer {
    let mut ctx = context.clone();
    if let Some(o) = ctx.as_object_mut() {
        o.insert("event".into(), json!("validate"));
    }
    let input = serde_json::to_vec(&ctx).unwrap_or_default();
    let who = cfg.who();
    let f = match external::run(
        &cfg.command,
        &input,
        Duration::from_millis(cfg.timeout_ms),
        cfg.max_output_bytes,
    ) {
        Ok(f) => f,
        Err(e) => return Answer::Deny(format!("{who} failed: {e}"), None),
    };
    if f.code != 0 {
        return Answer::Deny(
            format!(
                "{who} exited with status {} (a validator must exit 0 and print its answer)",
                f.code
            ),
            None,
        );
    }
    let v: Value = match serde_json::from_str(f.stdout.trim()) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            return Answer::Deny(
                format!(
                    "{who} gave a malformed answer {:?} (expected {{\"decision\":\"allow\"}} or {{\"decision\":\"deny\",\"reason\":...}})",
                    f.stdout.trim().chars().take(120).collect::<String>()
                ),
                None,
            );
        }
    };
    let reason = v
        .get("reason")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| "no reason given".into());
    match v.get("decision").and_then(Value::as_str) {
        Some("allow") => Answer::Allow,
        Some("ask") => Answer::Ask(format!("{who}: {reason}")),
        Some("deny") => Answer::Deny(format!("{who}: {reason}"), v.get("details").cloned()),
        _ => Answer::Deny(
            format!("{who} gave no valid `decision` (allow or deny) in {v}"),
            None,
        ),
    }
}

/// Applies the answer to the verdict: it can only keep or tighten.
pub fn apply(answer: &Answer, verdict: &mut Verdict) {
    match answer {
        Answer::Allow => verdict.note(
            Layer::Validator,
            "validator: allow (the policy's decision stands)".into(),
        ),
        Answer::Ask(r) => {
            verdict.note(Layer::Validator, format!("validator: ask: {r}"));
            verdict.add(
                Layer::Validator,
                crate::policy::ReasonId::ValidatorAsk,
                Decision::Ask,
                r.clone(),
                None,
            );
        }
        Answer::Deny(r, details) => {
            verdict.note(Layer::Validator, format!("validator: deny: {r}"));
            if let Some(d) = details {
                verdict.note(Layer::Validator, format!("validator details: {d}"));
            }
            verdict.add(
                Layer::Validator,
                crate::policy::ReasonId::ValidatorDeny,
                Decision::Deny,
                r.clone(),
                None,
            );
        }
    }
}

/// Tells the validator how the command ended (`"event": "on_execution"`).
/// Returns a notice to log when the call failed; the answer is ignored.
pub fn on_execution(cfg: &ValidatorSection, context: &Value) -> Option<String> {
    if !cfg.enabled() || !cfg.on_execution {
        return None;
    }
    let mut ctx = context.clone();
    if let Some(o) = ctx.as_object_mut() {
        o.insert("event".into(), json!("on_execution"));
        o.remove("policy_result");
        o.remove("command_struct");
    }
    let input = serde_json::to_vec(&ctx).unwrap_or_default();
    match external::run(
        &cfg.command,
        &input,
        Duration::from_millis(cfg.timeout_ms),
        cfg.max_output_bytes,
    ) {
        Ok(f) if f.code == 0 => None,
        Ok(f) => Some(format!(
            "{} on_execution exited with status {}",
            cfg.who(),
            f.code
        )),
        Err(e) => Some(format!("{} on_execution failed: {e}", cfg.who())),
    }
}

/// What in `a` (the candidate) is looser than `b` (the pinned profile).
pub fn loosens(a: &ValidatorSection, b: &ValidatorSection) -> Vec<String> {
    if b.enabled() && (a.command != b.command || a.timeout_ms > b.timeout_ms) {
        vec!["[validator] differs from the pinned validator".into()]
    } else {
        Vec::new()
    }
}
