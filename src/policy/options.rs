//! The effects of the options a command uses (`!write`, `!dangerous`,
//! `!exec`, `!blocked`, `!ask`, ...), and the typed values they carry.

use super::ReasonId;
use super::args::ParsedArgs;
use super::registry::{Effect, Risk};
use super::values::{Reading, typed_value};
use super::{Decision, Layer, PolicyContext, Verdict, confined};
use crate::parse::Segment;

/// Option effects and typed option values.
pub(super) fn options(
    name: &str,
    p: &ParsedArgs,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    code: &mut Vec<String>,
) -> Risk {
    let mut risk = Risk::Safe;
    let destructive = p.has_effect(Effect::Recursive)
        || (p.has_effect(Effect::Delete) && !p.has_effect(Effect::Filter));
    for o in &p.options {
        let why = o.spec.reason.as_ref();
        for e in &o.spec.effects {
            match e {
                Effect::Write | Effect::WritesOperands | Effect::Delete => {
                    risk = risk.max(Risk::Write)
                }
                Effect::Dangerous => {
                    risk = Risk::Dangerous;
                    v.danger.push((
                        format!(
                            "`{name} {}` is dangerous{}",
                            o.written,
                            why.as_ref().map(|w| format!(": {w}")).unwrap_or_default()
                        ),
                        o.spec.suggest.clone(),
                    ));
                    v.mark(ReasonId::RegistryDangerousOption);
                }
                Effect::Exec => {
                    risk = Risk::Dangerous;
                    v.add(
                        Layer::Policy,
                        ReasonId::RegistryExecOption,
                        Decision::Deny,
                        format!(
                            "`{name} {}` makes it run another program{}",
                            o.written,
                            why.as_ref().map(|w| format!(": {w}")).unwrap_or_default()
                        ),
                        Some("run the other program as a command of its own".into()),
                    );
                }
                Effect::Network => confined::needs_network(name, ctx, v),
                Effect::Blocked => v.add(
                    Layer::Policy,
                    ReasonId::RegistryBlockedOption,
                    Decision::Deny,
                    format!(
                        "`{name} {}` is not allowed{}",
                        o.written,
                        why.as_ref().map(|w| format!(": {w}")).unwrap_or_default()
                    ),
                    None,
                ),
                Effect::Ask => v.add(
                    Layer::Policy,
                    ReasonId::RegistryAskOption,
                    Decision::Ask,
                    format!(
                        "`{name} {}` needs confirmation{}",
                        o.written,
                        why.as_ref().map(|w| format!(": {w}")).unwrap_or_default()
                    ),
                    None,
                ),
                Effect::Code => risk = risk.max(Risk::Write),
                Effect::Recursive
                | Effect::Template
                | Effect::Last
                | Effect::Filter
                | Effect::ReadsTree
                | Effect::ReadsNamed => {}
            }
        }
        if let (Some(val), Some(t)) = (&o.value, o.spec.value_type) {
            let how = Reading {
                destructive,
                sync_src_tree: false,
                removes_sources: false,
            };
            risk = risk.max(typed_value(
                name, t, val, seg, ctx, v, code, how, &o.written,
            ));
        }
    }
    risk
}
