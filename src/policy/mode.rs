//! The profile's actions and mode: profile actions as decisions, and the
//! command's risk against the profile's ceiling (`mode`,
//! `allow_dangerous`, `above_mode`).

use super::Action;
use super::ReasonId;
use super::registry::Risk;
use super::{Confirmation, Decision, Layer, PolicyContext, Verdict};

/// The decision a profile action (`allow`, `ask`, `deny`) stands for.
pub(super) fn decision_of(a: Action) -> Decision {
    match a {
        Action::Allow => Decision::Allow,
        Action::Ask => Decision::Ask,
        Action::Deny => Decision::Deny,
    }
}

/// The command's risk against the profile's ceiling: dangerous commands
/// when `allow_dangerous` is off, any risk above `mode`; a dangerous
/// command that asks needs a strong confirmation.
pub(super) fn ceiling(ctx: &PolicyContext, v: &mut Verdict) {
    let policy = &ctx.profile.doc.policy;
    let why: Vec<String> = v.danger.iter().map(|d| d.0.clone()).collect();
    let suggestion = v.danger.iter().find_map(|d| d.1.clone());
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(": {}", why.join("; "))
    };
    if v.risk == Risk::Dangerous && !policy.allow_dangerous {
        v.add(
            Layer::Policy,
            ReasonId::PolicyDangerousDisabled,
            Decision::Deny,
            format!(
                "dangerous commands are disabled by this profile (allow_dangerous = false){why}"
            ),
            suggestion,
        );
    } else if v.risk > policy.mode {
        let d = decision_of(policy.above_mode);
        v.add(
            Layer::Policy,
            ReasonId::PolicyAboveMode,
            d,
            format!(
                "risk `{}` is above the profile's mode `{}`{why}",
                v.risk.as_str(),
                policy.mode.as_str()
            ),
            suggestion,
        );
        if v.risk == Risk::Dangerous {
            v.need(Confirmation::Strong);
        }
    }
    if v.decision == Decision::Ask && v.risk == Risk::Dangerous {
        v.need(Confirmation::Strong);
    }
}
