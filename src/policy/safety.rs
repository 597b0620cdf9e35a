//! The safety rules (profiles/rules and the profile's own) over normalised
//! views of the command, its inline code and its canonical spelling: a
//! critical match denies (asks at a terminal), a warning is reported.

use super::Action;
use super::mode::decision_of;
use super::registry::Risk;
use super::rules::{self, Severity};
use super::{Confirmation, Decision, Layer, PolicyContext, Verdict};
use crate::parse::CommandModel;

/// Applies the safety rules to the views of `model`; `code_views` are the
/// inline code and canonical spellings the segments collected.
pub(super) fn safety_rules(
    model: &CommandModel,
    code_views: &[String],
    raw: Option<&str>,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    let policy = &ctx.profile.doc.policy;
    let views = rules::views_in(model, code_views, raw);
    let views = views.list();
    v.code = code_views
        .iter()
        .filter(|c| !c.starts_with(rules::CANONICAL))
        .cloned()
        .collect();
    let c = ctx.profile.rules.classify_views(&views);
    v.severity = c.severity;
    for (id, label, sev, view) in &c.matches {
        match sev {
            Severity::Critical => {
                let action = if ctx.interactive {
                    Action::Ask
                } else {
                    policy.critical
                };
                let d = decision_of(action);
                v.add_data(
                    Layer::Policy,
                    id,
                    d,
                    ["safety rule `", id, "` (", label, ") matches `", view, "`"].concat(),
                    None,
                );
                if d == Decision::Ask {
                    v.need(Confirmation::Strong);
                }
                v.risk = Risk::Dangerous;
            }
            Severity::Warning => {
                v.warn(format!("safety rule `{id}`: {label}"));
                if !v.matched_rules.contains(id) {
                    v.matched_rules.push(id.clone());
                }
            }
            Severity::Safe => {}
        }
    }
}
