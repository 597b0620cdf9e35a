//! What happens around one command after it is decided: blocking hooks
//! (`pre_tool_use`, `permission_request`), the audit decision record, and
//! after the run the validator's `on_execution`, the notification hooks and
//! the audit result record. Run mode drives it; any other entry point that
//! runs or reports commands (the agent hook protocol) can drive it too.

use std::time::Instant;

use serde_json::{Value, json};

use super::{Blocked, Event, HookFileError, Registry};
use crate::audit::{self, OnError, Sinks, redact};
use crate::config::Profile;
use crate::decide::{CommandInput, Decided, Layered, Situation};
use crate::guard;
use crate::policy::{Decision, Layer, Verdict};
use crate::run::{Outcome, RunError};
use crate::validator;

/// The lifecycle of one command.
#[derive(Debug)]
pub struct Lifecycle<'a> {
    profile: &'a Profile,
    sit: &'a Situation,
    layered: &'a Layered,
    registry: Registry,
    sinks: Option<Sinks>,
    programs: Vec<String>,
    hook_ctx: Value,
    /// The fields every audit record of this command shares, each
    /// serialized once (a record is these and its own, in key order).
    record_base: Vec<(String, Vec<u8>)>,
    confirmation: Option<&'static str>,
    /// Failures of notification hooks, `on_execution` and `warn` sinks.
    pub notices: Vec<String>,
    started: Instant,
}

impl<'a> Lifecycle<'a> {
    /// Loads the global hooks (`hooks_dir` from the system config) and
    /// prepares the contexts. A broken global hook file is an error (125).
    pub fn new(
        profile: &'a Profile,
        hooks_dir: Option<&str>,
        input: &CommandInput,
        decided: &Decided,
        sit: &'a Situation,
        layered: &'a Layered,
    ) -> Result<Self, HookFileError> {
        let registry = Registry::load(
            &super::global_dir(hooks_dir),
            &profile.name,
            &profile.doc.hook,
        )?;
        let sinks = Sinks::new(&profile.doc.audit, &sit.places);
        let programs: Vec<String> = decided
            .model
            .segments
            .iter()
            .map(|s| s.program.clone())
            .collect();
        let mut tool_input = json!({ "command": input.raw(), "form": decided.model.form });
        if let CommandInput::List(argv) = input {
            tool_input["argv"] = json!(argv);
        }
        let hook_ctx = json!({
            "session_id": layered.session,
            "tool_name": "Bash",
            "tool_input": tool_input,
            "tool_use_id": layered.id,
            "agent_id": layered.agent,
            "cwd": sit.places.cwd,
            "programs": programs,
            "profile": profile.name,
            "metadata": {},
        });
        // The audit record (with its redaction regexes) is built only when
        // an audit sink exists: nothing else reads it.
        let record_base = if sinks.is_some() {
            let segments: Vec<Value> = decided
                .model
                .segments
                .iter()
                .map(|s| {
                    json!({
                        "program": s.program,
                        "argv": redact::args(&s.argv_vec()),
                        "assignments": s.assignments.iter().map(|a| json!({"name": a.name, "value": redact::env_value(&a.name, &a.value)})).collect::<Vec<_>>(),
                    })
                })
                .collect();
            audit::fields(json!({
                "v": audit::SCHEMA_VERSION,
                "id": layered.id,
                "session": layered.session,
                "agent": layered.agent,
                "profile": profile.name,
                "cwd": sit.places.cwd,
                "form": decided.model.form,
                "raw": redact::text(&input.raw()),
                "segments": segments,
            }))
        } else {
            Vec::new()
        };
        Ok(Lifecycle {
            profile,
            sit,
            layered,
            registry,
            sinks,
            programs,
            hook_ctx,
            record_base,
            confirmation: None,
            notices: Vec::new(),
            started: Instant::now(),
        })
    }

    /// Whether anything needs the command's result, so the run must be
    /// supervised instead of `execve`d in place.
    pub fn needs_result(&self) -> bool {
        let v = &self.profile.doc.validator;
        self.sinks.is_some()
            || (v.enabled() && v.on_execution)
            || self.registry.has(Event::PostToolUse)
            || self.registry.has(Event::PostToolUseFailure)
    }

    fn fire(&mut self, event: Event, extra: Value) -> Blocked {
        if !self.registry.has(event) {
            return Blocked::Continue;
        }
        let mut ctx = self.hook_ctx.clone();
        if let (Some(o), Value::Object(e)) = (ctx.as_object_mut(), extra) {
            o.extend(e);
        }
        let fired = self.registry.fire(event, &mut ctx, &self.programs);
        // Metadata added by hooks is seen by later hooks and the audit log.
        if let Some(m) = ctx.get("metadata").cloned() {
            self.hook_ctx["metadata"] = m;
        }
        self.note(fired.notices);
        fired.outcome
    }

    fn note(&mut self, notices: Vec<String>) {
        for n in notices {
            eprintln!("safe-exec: warning: {n}");
            self.notices.push(n);
        }
    }

    /// Fires `session_end` for a session the guard found idle and
    /// `session_start` for a new one.
    pub fn session_events(&mut self) {
        let Some(report) = self.layered.guard.clone() else {
            return;
        };
        if let Some(old) = report.ended {
            self.fire(
                Event::SessionEnd,
                json!({"reason": "idle", "session_state": {"commands": old.commands, "allowed": old.allowed, "asked": old.asked, "denied": old.denied, "started": old.started_ms, "last": old.last_ms}}),
            );
        }
        if report.new_session {
            self.fire(Event::SessionStart, json!({"reason": "first command"}));
        }
    }

    /// Blocking hooks: `pre_tool_use` for a command not already denied,
    /// then `permission_request` when it needs confirmation (and a
    /// `notification` that it does). They can only tighten the verdict.
    pub fn gate(&mut self, verdict: &mut Verdict) {
        if verdict.decision == Decision::Deny {
            return;
        }
        let extra = json!({"decision": verdict.decision, "reasons": verdict.reasons.iter().map(|r| r.line()).collect::<Vec<_>>()});
        apply(
            self.fire(Event::PreToolUse, extra),
            verdict,
            crate::policy::ReasonId::HookPreToolUse,
        );
        if verdict.decision == Decision::Ask {
            let extra = json!({"decision": "ask", "reason": verdict.refusal_line(), "confirmation": verdict.confirmation});
            apply(
                self.fire(Event::PermissionRequest, extra),
                verdict,
                crate::policy::ReasonId::HookPermissionRequest,
            );
            if verdict.decision == Decision::Ask {
                self.fire(
                    Event::Notification,
                    json!({"category": "permission_prompt", "content": format!("confirmation needed: {}", verdict.refusal_line())}),
                );
            }
        }
        verdict.settle();
    }

    /// Notes how the confirmation went, for the audit record.
    pub fn confirmed(&mut self, yes: bool) {
        self.confirmation = Some(if yes { "granted" } else { "refused" });
    }

    /// Writes the decision record. `Err(reason)` when a sink failed and the
    /// profile says `fail`: the command must then be refused.
    pub fn record_decision(&mut self, verdict: &Verdict) -> Result<(), String> {
        let Some(sinks) = self.sinks.clone() else {
            return Ok(());
        };
        let now = audit::time::now_ms();
        let extra = json!({
            "kind": "decision",
            "time": audit::time::rfc3339(now),
            "ts_ms": now,
            "decision": verdict.decision,
            "decided_by": verdict.decided_by,
            "reasons": verdict.reasons.iter().map(|r| redact::text(&r.line())).collect::<Vec<_>>(),
            "reason_details": verdict.reasons.iter().map(|r| json!({"layer": r.layer, "rule": r.rule, "decision": r.decision})).collect::<Vec<_>>(),
            "matched_rules": verdict.matched_rules,
            "warnings": verdict.warnings,
            "risk": verdict.risk,
            "severity": verdict.severity,
            "confirmation": self.confirmation,
            "metadata": self.hook_ctx["metadata"],
        });
        let deny = verdict.decision == Decision::Deny;
        let line = audit::record_line(&self.record_base, extra);
        self.sink(&sinks, &line, deny)
    }

    fn sink(&mut self, sinks: &Sinks, line: &[u8], deny: bool) -> Result<(), String> {
        let errs = sinks.write_line(line, deny);
        if errs.is_empty() {
            return Ok(());
        }
        let msg = errs
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        match sinks.on_error {
            OnError::Fail => Err(format!(
                "the audit log cannot record this command, and the profile says on_error = \"fail\": {msg}"
            )),
            OnError::Warn => {
                self.note(vec![msg.clone()]);
                self.fire(
                    Event::Notification,
                    json!({"category": "audit", "content": msg}),
                );
                Ok(())
            }
        }
    }

    /// The command was refused (by any layer, a hook, the confirmation or
    /// the audit log): count a late refusal in the guard, and fire
    /// `post_tool_use_failure`.
    pub fn refused(&mut self, verdict: &Verdict) {
        if let Some(by) = verdict.decided_by
            && matches!(by, Layer::Hook | Layer::Confirmation)
            && self.layered.guard.is_some()
        {
            let g = &self.profile.doc.guard;
            let store = guard::Store::new(&self.sit.places.state, &self.layered.session);
            if let Err(e) =
                guard::record_late_denial(g, &store, &self.layered.id, by, audit::time::now_ms())
            {
                self.note(vec![e.to_string()]);
            }
        }
        self.fire(
            Event::PostToolUseFailure,
            json!({"status": "denied", "decision": "deny", "reason": verdict.refusal_line(), "duration_ms": 0}),
        );
    }

    /// After the run: `on_execution`, then `post_tool_use` (exit 0) or
    /// `post_tool_use_failure`, then the audit result record. Returns a
    /// notice-free exit path: nothing here changes the exit code.
    pub fn finished(&mut self, result: &Result<Outcome, RunError>) {
        let duration_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (status, exit_code, signal, timed_out, error, enforcement) = match result {
            Ok(o) => (
                if o.exit_code == 0 { "ok" } else { "failed" },
                o.exit_code,
                o.signal,
                o.timed_out,
                None,
                serde_json::to_value(&o.enforcement).unwrap_or(Value::Null),
            ),
            Err(e) => (
                "error",
                e.exit_code(),
                None,
                false,
                Some(e.to_string()),
                Value::Null,
            ),
        };
        let run_duration = result
            .as_ref()
            .map(|o| u64::try_from(o.duration.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(duration_ms);
        let result_json = json!({
            "status": status,
            "exit_code": exit_code,
            "signal": signal,
            "timed_out": timed_out,
            "duration_ms": run_duration,
            "error": error,
        });
        // What the supervisor refused, killed and restored (docs/sandbox.md);
        // audit only.
        let supervisor = match result {
            Ok(o) => {
                let mut v = serde_json::to_value(&o.supervisor).unwrap_or(Value::Null);
                // Refused execs carry their argv: redact it like a command.
                if let Some(lines) = v.get_mut("denied").and_then(Value::as_array_mut) {
                    for l in lines.iter_mut() {
                        if let Some(t) = l.as_str() {
                            *l = Value::String(redact::text(t));
                        }
                    }
                }
                v
            }
            Err(_) => Value::Null,
        };
        let v = &self.profile.doc.validator;
        if v.enabled() && v.on_execution {
            let mut ctx = if self.layered.context.is_null() {
                json!({})
            } else {
                self.layered.context.clone()
            };
            ctx["result"] = result_json.clone();
            ctx["timestamp"] = json!(audit::time::now_ms());
            if let Some(n) = validator::on_execution(v, &ctx) {
                self.note(vec![n]);
            }
        }
        let event = if status == "ok" {
            Event::PostToolUse
        } else {
            Event::PostToolUseFailure
        };
        self.fire(event, result_json.clone());
        let notices: Vec<String> = self.notices.iter().map(|n| redact::text(n)).collect();
        self.write_result(
            result_json,
            json!({
                "enforcement": enforcement,
                "supervisor": supervisor,
                "error": error.map(|e| redact::text(&e)),
                "notices": notices,
            }),
        );
    }

    /// Appends the result record. After the run there is nothing left to
    /// refuse: a failing sink is reported whatever `on_error` says.
    fn write_result(&mut self, result_json: Value, more: Value) {
        let Some(sinks) = self.sinks.clone() else {
            return;
        };
        let now = audit::time::now_ms();
        let mut extra = result_json;
        merge(
            &mut extra,
            json!({
                "kind": "result",
                "time": audit::time::rfc3339(now),
                "ts_ms": now,
                "metadata": self.hook_ctx["metadata"],
            }),
        );
        merge(&mut extra, more);
        let line = audit::record_line(&self.record_base, extra);
        for e in sinks.write_line(&line, false) {
            self.note(vec![e.to_string()]);
        }
    }
}

impl Lifecycle<'_> {
    /// An agent reports how a command it ran ended (`PostToolUse` /
    /// `PostToolUseFailure` through `safe-exec hook`): fire the matching
    /// notification hooks and write an audit result record marked as
    /// reported by the agent. Never blocks.
    pub fn reported(&mut self, failed: bool, detail: Value) {
        let status = if failed { "failed" } else { "ok" };
        let result_json = json!({"status": status, "reported_by": "agent", "detail": detail});
        let event = if failed {
            Event::PostToolUseFailure
        } else {
            Event::PostToolUse
        };
        self.fire(event, result_json.clone());
        self.write_result(result_json, json!({}));
    }
}

fn apply(b: Blocked, verdict: &mut Verdict, rule: crate::policy::ReasonId) {
    match b {
        Blocked::Continue => {}
        Blocked::Deny(r) => verdict.add(Layer::Hook, rule, Decision::Deny, r, None),
        Blocked::Ask(r) => verdict.add(Layer::Hook, rule, Decision::Ask, r, None),
    }
}

fn merge(into: &mut Value, from: Value) {
    if let (Some(a), Value::Object(b)) = (into.as_object_mut(), from) {
        a.extend(b);
    }
}
