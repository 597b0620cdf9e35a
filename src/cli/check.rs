//! `safe-exec check`: decide without running and say why, as JSON or as a
//! per-layer explanation. Exit 0 allow, 2 deny, 3 ask, 125 error.

use serde_json::{Value, json};

use super::run_cmd::{exec_argv, open_form_network_in};
use super::{CheckArgs, error, situation};
use crate::decide::{self, CommandInput, Decided, Situation};
use crate::pipeline;
use crate::policy::{Decision, Layer};
use crate::profile::{self, Profile, SelectionInputs};
use crate::sandbox::{self, env};

/// Runs `check`.
pub fn run(a: CheckArgs) -> i32 {
    arm_refusal(&a);
    let common = a.common.to_options();
    let input = match (&a.string, a.rest.as_slice()) {
        (Some(s), rest) => {
            let mut positional = rest.to_vec();
            if positional.is_empty() {
                positional.push("safe-exec".into());
            }
            CommandInput::String {
                text: s.clone(),
                positional,
            }
        }
        (None, rest) if !rest.is_empty() => {
            let argv: Vec<String> = rest.iter().skip_while(|a| *a == "--").cloned().collect();
            if argv.is_empty() {
                return error("nothing to check: give `-- PROGRAM [ARG...]` or `-c STRING`");
            }
            CommandInput::List(argv)
        }
        _ => return error("nothing to check: give `-- PROGRAM [ARG...]` or `-c STRING`"),
    };
    let mut sit = match situation::build(&common, None, false) {
        Ok(s) => s,
        Err(e) => return error(e),
    };
    let selection = match profile::select(&SelectionInputs::from_env(
        common.profile.clone(),
        sit.places.cwd.clone(),
    )) {
        Ok(s) => s,
        Err(e) => return error(e),
    };
    situation::apply_system_state(&mut sit, &selection.system);
    sit.confined = !a.unconfined;
    let profile = selection.profile;
    let layer_opts = decide::LayerOptions {
        session: common.session.clone(),
        agent: common.agent.clone(),
        record: false,
        opts: serde_json::json!({"profile": profile.name, "timeout": common.timeout, "dry_run": true}),
        metadata: serde_json::json!({}),
    };
    let decided = pipeline::judge(&input, &profile, &sit, &layer_opts).decided;
    let text = if a.json {
        format!(
            "{}\n",
            to_json(&input, &decided, &profile, &sit, common.timeout)
        )
    } else if a.explain {
        explain(
            &input,
            &decided,
            &profile,
            &sit,
            &selection.origin,
            common.timeout,
        )
    } else {
        let v = &decided.verdict;
        let mut t = format!("{}\n", v.decision.as_str());
        for r in &v.reasons {
            t.push_str(&format!("  {}\n", r.line()));
        }
        for w in &v.warnings {
            t.push_str(&format!("  warning: {w}\n"));
        }
        t
    };
    // A reader that closed the pipe (`check --json | head -c 100`) is not an
    // error of the decision: the exit code still says allow, deny or ask.
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes());
    let code = exit_code(decided.verdict.decision);
    // The process exits with the answer: freeing the profile, the model
    // and the verdict piece by piece first would only cost time.
    std::mem::forget((decided, profile, selection.system, sit, input));
    code
}

/// Bounds deciding (see [`crate::bound`]): if it runs out of memory or
/// time, `check` answers `deny` (exit 2) in its own format.
fn arm_refusal(a: &CheckArgs) {
    let why =
        "safe-exec could not decide within its memory and time bounds, so the command is refused";
    let stdout = if a.json {
        format!(
            "{}\n",
            json!({"decision": "deny", "risk": "dangerous", "confined": !a.unconfined, "reasons": [format!("[parse] parse.bound: {why}")]})
        )
    } else {
        format!("deny\n  [parse] parse.bound: {why}\n")
    };
    crate::bound::arm(stdout.into_bytes(), Vec::new(), 2);
}

/// `check` exit codes.
pub fn exit_code(d: Decision) -> i32 {
    match d {
        Decision::Allow => 0,
        Decision::Deny => 2,
        Decision::Ask => 3,
    }
}

/// The `check --json` object.
pub fn to_json(
    input: &CommandInput,
    d: &Decided,
    profile: &Profile,
    sit: &Situation,
    timeout: Option<u64>,
) -> Value {
    let v = &d.verdict;
    let (argv, sandbox) = shown_plan(input, d, profile, sit, timeout);
    let segments: Vec<Value> = d
        .model
        .segments
        .iter()
        .map(|s| {
            json!({
                "program": s.program,
                "argv": s.argv().collect::<Vec<_>>(),
                "cwd": s.cwd,
                "wrappers": s.wrappers,
                "escalated": s.escalated,
                "assignments": s.assignments,
                "redirections": s.redirections,
                "origin": s.origin,
                "depth": s.depth,
                "unknown": s.unknown,
            })
        })
        .collect();
    json!({
        "decision": v.decision,
        "confined": decide::confined(profile, sit),
        "risk": v.risk,
        "severity": v.severity,
        "confirmation": v.confirmation,
        "reasons": v.reasons.iter().map(|r| r.line()).collect::<Vec<_>>(),
        "warnings": v.warnings,
        "matched_rules": v.matched_rules,
        "decided_by": v.decided_by,
        "reason_details": v.reasons,
        "profile": profile.name,
        "command": {
            "form": d.model.form,
            "raw": input.raw(),
            "segments": segments,
            "operators": d.model.operators,
            "constructs": d.model.constructs,
            "unknown": d.model.unknown,
        },
        "run": {
            "argv": argv.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>(),
            "direct": argv.first().map(|a| a.to_string_lossy() != profile.doc.shell.interpreter).unwrap_or(false),
        },
        "sandbox": sandbox::describe(&sandbox),
    })
}

/// What a run of the decided command would execute and the sandbox it
/// would run in (the argv and sandbox of `run_cmd::exec_plan`, with the
/// network a structured form opens): without the scrubbed environment and
/// the supervisor's spec, which `check` does not show.
fn shown_plan(
    input: &CommandInput,
    d: &Decided,
    profile: &Profile,
    sit: &Situation,
    timeout: Option<u64>,
) -> (Vec<std::ffi::OsString>, sandbox::SandboxSpec) {
    let argv = exec_argv(input, &d.model, profile, false);
    let mut spec = profile.sandbox_spec(&sit.places, timeout);
    open_form_network_in(&mut spec, &d.verdict);
    (argv, spec)
}

/// The `check --explain` text: one section per layer.
pub fn explain(
    input: &CommandInput,
    d: &Decided,
    profile: &Profile,
    sit: &Situation,
    origin: &str,
    timeout: Option<u64>,
) -> String {
    let v = &d.verdict;
    let mut out = String::new();
    out.push_str(&format!("command: {}\n", input.raw()));
    out.push_str(&format!(
        "profile: {} ({}, chosen by {origin})\n",
        profile.name, profile.source
    ));
    out.push_str(&format!(
        "decision: {}  risk: {}  severity: {}{}\n",
        v.decision.as_str(),
        v.risk.as_str(),
        v.severity.as_str(),
        v.confirmation
            .map(|c| format!("  confirmation: {c:?}"))
            .unwrap_or_default()
    ));
    let confined = decide::confined(profile, sit);
    out.push_str(&format!(
        "confined: {}\n",
        if confined {
            "yes (runs inside the sandbox)"
        } else {
            "no (nothing confines the command: whatever is not fully seen through asks)"
        }
    ));
    if v.decision == Decision::Allow {
        out.push_str(&format!(
            "safe because: {}\n",
            crate::policy::confined::safety_line(
                profile,
                &profile.roots_shared(&sit.places),
                confined
            )
        ));
    }
    out.push_str("\nlayer 0 (parse):\n");
    out.push_str(&format!("  form: {:?}\n", d.model.form));
    for s in &d.model.segments {
        out.push_str(&format!(
            "  - {} {:?} (cwd {})",
            s.program,
            s.argv_vec(),
            s.cwd.display()
        ));
        if !s.wrappers.is_empty() {
            out.push_str(&format!(" unwrapped from {}", s.wrappers.join(" ")));
        }
        out.push('\n');
        if let Some(u) = &s.unknown {
            out.push_str(&format!("    unknown: {u}\n"));
        }
    }
    for u in &d.model.unknown {
        out.push_str(&format!("  unknown: {u}\n"));
    }
    for (layer, line) in &v.explain {
        if *layer == Layer::Parse {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out.push_str("\nlayer 1 (static policy):\n");
    for (layer, line) in &v.explain {
        if *layer == Layer::Policy {
            out.push_str(&format!("  {line}\n"));
        }
    }
    for r in v
        .reasons
        .iter()
        .filter(|r| r.layer == Layer::Policy || r.layer == Layer::Parse)
    {
        out.push_str(&format!(
            "  [{}] {}: {}\n",
            r.decision.as_str(),
            r.rule,
            r.line()
        ));
    }
    for w in &v.warnings {
        out.push_str(&format!("  warning: {w}\n"));
    }
    if v.reasons.is_empty() {
        out.push_str("  no objections\n");
    }
    out.push_str(&crate::hooks::explain::layers(v, profile));
    let (argv, spec) = shown_plan(input, d, profile, sit, timeout);
    out.push_str("\nsandbox (what the run would be confined to):\n");
    let spec = &spec;
    let show = |v: &[std::path::PathBuf]| {
        v.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.push_str(&format!(
        "  read: {}\n  write: {}\n  deny read: {}\n",
        show(&spec.read),
        show(&spec.write),
        show(&spec.deny_read)
    ));
    // A deny path that does not exist inside a writable root is not carved
    // (see `sandbox::landlock::deny_points`): say so, it is not denied.
    if let Ok(p) = sandbox::landlock::plan(spec) {
        let unguarded: Vec<std::path::PathBuf> = p
            .deny_read
            .into_iter()
            .filter(|d| d.state == "unguarded")
            .map(|d| d.path)
            .collect();
        if !unguarded.is_empty() {
            out.push_str(&format!(
                "  deny read, not guarded: {} (missing, inside a writable root: created during the run, it is readable; create it before the run to have it denied)\n",
                show(&unguarded)
            ));
        }
    }
    out.push_str(&format!(
        "  network: {:?}  unix sockets: {}  enforcement: {:?}\n",
        spec.network, spec.unix_sockets, spec.enforcement
    ));
    let report = sandbox::predict_report(spec);
    out.push_str(&format!(
        "  kernel: Landlock ABI {} ({}), seccomp {}\n",
        report.landlock_abi, report.landlock, report.seccomp
    ));
    for m in &report.missing {
        out.push_str(&format!("  missing: {m}\n"));
    }
    out.push_str(&format!(
        "  runs: {}\n",
        argv.iter()
            .map(|a| crate::parse::shell_quote(&a.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    let scrubbed = env::scrub(std::env::vars_os(), &profile.doc.env);
    if scrubbed.removed.is_empty() {
        out.push_str("  environment: nothing removed\n");
    } else {
        out.push_str("  environment removed:\n");
        for r in &scrubbed.removed {
            out.push_str(&format!("    {}: {}\n", r.name, r.reason));
        }
    }
    out
}
