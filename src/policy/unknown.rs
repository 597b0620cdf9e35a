//! Constructs that cannot be checked: the one place an unknown part of a
//! command becomes a reason (`parse.unknown`), never an allow.

use super::ReasonId;
use super::mode::decision_of;
use super::{Decision, Layer, PolicyContext, Verdict};

pub(super) fn unknown(v: &mut Verdict, ctx: &PolicyContext, why: &str) {
    unknown_with(
        v,
        ctx,
        why,
        "write the command with literal words (no variables, substitutions or eval in command position)",
    );
}

/// Like [`unknown`], with what to do instead.
pub(super) fn unknown_with(v: &mut Verdict, ctx: &PolicyContext, why: &str, instead: &str) {
    // Unknown constructs are never allowed, whatever the profile says.
    let d = decision_of(ctx.profile.doc.policy.unknown_constructs).max(Decision::Ask);
    v.add(
        Layer::Parse,
        ReasonId::ParseUnknown,
        d,
        format!("cannot be checked: {why}"),
        Some(instead.into()),
    );
}
