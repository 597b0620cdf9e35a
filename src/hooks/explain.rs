//! The `check --explain` sections for layer 2 (validator), layer 3 (guard),
//! hooks and the audit log: what is configured and what it said.

use crate::config::Profile;
use crate::policy::{Layer, Verdict};

/// The text of the layer 2 and 3, hooks and audit sections.
pub fn layers(v: &Verdict, profile: &Profile) -> String {
    let doc = &profile.doc;
    let mut out = String::new();
    let notes = |layer: Layer| -> Vec<String> {
        v.explain
            .iter()
            .filter(|(l, _)| *l == layer)
            .map(|(_, s)| format!("  {s}\n"))
            .collect()
    };
    if doc.validator.enabled() {
        out.push_str(&format!(
            "\nlayer 2 (validator): `{}` (time limit {} ms, on_execution {})\n",
            doc.validator.command.join(" "),
            doc.validator.timeout_ms,
            if doc.validator.on_execution {
                "on"
            } else {
                "off"
            }
        ));
        out.extend(notes(Layer::Validator));
    } else {
        out.push_str("\nlayer 2 (validator): none configured (the policy's decision stands)\n");
    }
    let g = &doc.guard;
    if g.enabled {
        out.push_str(&format!(
            "layer 3 (guard): on; rate {} per {} s, lockout after {} denials in {} s for {} s\n",
            if g.max_commands == 0 {
                "unlimited".to_string()
            } else {
                g.max_commands.to_string()
            },
            g.window_seconds,
            g.max_denials,
            g.denial_window_seconds,
            g.lockout_seconds
        ));
        let ids: Vec<&str> = g.patterns().iter().map(|p| p.id.as_str()).collect();
        out.push_str(&format!("  patterns: {}\n", ids.join(", ")));
        let n = notes(Layer::Guard);
        if n.is_empty() {
            out.push_str("  no objections (check reads the session's state but never records)\n");
        }
        out.extend(n);
    } else {
        out.push_str("layer 3 (guard): none configured\n");
    }
    let dir = super::global_dir(None);
    match super::Registry::load(&dir, &profile.name, &doc.hook) {
        Ok(r) if r.is_empty() => out.push_str("hooks: none configured\n"),
        Ok(r) => {
            out.push_str("hooks (in firing order; check does not run them):\n");
            for h in &r.hooks {
                out.push_str(&format!(
                    "  {} `{}`{} from {}\n",
                    h.def.event.as_str(),
                    h.def.command.join(" "),
                    h.def
                        .matcher
                        .as_ref()
                        .map(|m| format!(" matcher {}", String::from(m.clone())))
                        .unwrap_or_default(),
                    h.origin
                ));
            }
        }
        Err(e) => out.push_str(&format!("hooks: {e}\n")),
    }
    let a = &doc.audit;
    if a.enabled {
        out.push_str(&format!(
            "audit: file `{}`{}, on_error {:?}\n",
            a.file,
            if a.syslog.is_empty() {
                String::new()
            } else {
                format!(", syslog `{}`", a.syslog)
            },
            a.on_error
        ));
    } else {
        out.push_str("audit: off\n");
    }
    out
}
