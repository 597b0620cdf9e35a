//! `safe-exec log [--session ID] [--json] [--limit N]`: recent decisions
//! from the audit file, for a person (one line each, with the result) or as
//! JSON lines (the records themselves).

use std::collections::HashMap;

use serde_json::Value;

use super::{LogArgs, error, situation};
use crate::profile::{self, SelectionInputs};

/// Runs `log`.
pub fn run(a: LogArgs) -> i32 {
    let common = super::shell_args::CommonOptions {
        profile: a.profile.clone(),
        ..Default::default()
    };
    let mut sit = match situation::build(&common, None, false) {
        Ok(s) => s,
        Err(e) => return error(e),
    };
    let selection = match profile::select(&SelectionInputs::from_env(
        a.profile.clone(),
        sit.places.cwd.clone(),
    )) {
        Ok(s) => s,
        Err(e) => return error(e),
    };
    situation::apply_system_state(&mut sit, &selection.system);
    let enabled = selection.profile.doc.audit.enabled;
    let mut cfg = selection.profile.doc.audit.clone();
    cfg.enabled = true;
    let Some(path) = crate::audit::Sinks::new(&cfg, &sit.places).and_then(|s| s.file) else {
        return error(
            "the profile's [audit] has no file sink; `safe-exec log` reads only the JSONL file",
        );
    };
    let records = match crate::audit::read(&path) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !a.json {
                if enabled {
                    println!(
                        "no audit records yet in {}: the next command run through safe-exec is recorded",
                        path.display()
                    );
                } else {
                    println!(
                        "no audit records in {}: profile `{}` turns the audit log off ([audit] enabled = false)",
                        path.display(),
                        selection.profile.doc.name
                    );
                }
            }
            return 0;
        }
        Err(e) => return error(format!("{}: {e}", path.display())),
    };
    let session_ok = |r: &Value| {
        a.session
            .as_deref()
            .is_none_or(|s| r.get("session").and_then(Value::as_str) == Some(s))
    };
    let results: HashMap<String, &Value> = records
        .iter()
        .filter(|r| r.get("kind").and_then(Value::as_str) == Some("result"))
        .filter_map(|r| Some((r.get("id")?.as_str()?.to_string(), r)))
        .collect();
    let decisions: Vec<&Value> = records
        .iter()
        .filter(|r| r.get("kind").and_then(Value::as_str) == Some("decision") && session_ok(r))
        .collect();
    let shown = &decisions[decisions.len().saturating_sub(a.limit)..];
    for d in shown {
        let id = d.get("id").and_then(Value::as_str).unwrap_or("");
        let res = results.get(id);
        if a.json {
            println!("{d}");
            if let Some(r) = res {
                println!("{r}");
            }
            continue;
        }
        println!("{}", line(d, res.copied()));
    }
    0
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// One human line: time, session, decision, command, why, how it ended.
fn line(d: &Value, res: Option<&Value>) -> String {
    let decision = s(d, "decision").to_uppercase();
    let mut out = format!(
        "{}  {:<12} {:<5} {}",
        s(d, "time"),
        s(d, "session"),
        decision,
        s(d, "raw")
    );
    if let Some(by) = d.get("decided_by").and_then(Value::as_str) {
        out.push_str(&format!("  [by {by}]"));
    }
    let reasons: Vec<&str> = d
        .get("reasons")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !reasons.is_empty() {
        out.push_str(&format!("\n    why: {}", reasons.join("; ")));
    }
    if let Some(r) = res {
        let code = r
            .get("exit_code")
            .map(ToString::to_string)
            .unwrap_or_default();
        let ms = r
            .get("duration_ms")
            .map(ToString::to_string)
            .unwrap_or_default();
        out.push_str(&format!(
            "\n    ran: {} exit {code} in {ms} ms",
            s(r, "status")
        ));
    }
    out
}
