//! Variables that load code (`LD_PRELOAD`, `BASH_ENV`, `PYTHONPATH`, ...;
//! the shared list in `profiles/env/variables.toml`) set by the command:
//! by an assignment the string makes or one in front of a command (an
//! `env_assignment` value handed to `env` is checked in `values`).

use super::ReasonId;
use super::registry::Risk;
use super::{Decision, Layer, PolicyContext, Verdict, confined, variables};
use crate::parse::{CommandModel, Segment};

/// Variables the string assigns (`X=1; cmd`, `export X=1`).
pub(super) fn assigned(model: &CommandModel, ctx: &PolicyContext, v: &mut Verdict) {
    for name in &model.assigned {
        if let Some(what) = variables::dangerous(name, None)
            && !confined::assigned_code_path_ok(name, model, ctx)
        {
            v.add(
                Layer::Policy,
                ReasonId::PolicyDangerousAssignment,
                Decision::Deny,
                format!("the command sets `{name}`, which {what}"),
                Some("drop the assignment; configure the tool in its own config file".into()),
            );
            v.risk = Risk::Dangerous;
        }
    }
}

/// Assignments in front of the command (`LD_PRELOAD=x cmd`).
pub(super) fn prefix(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    for a in &seg.assignments {
        if let Some(what) = variables::dangerous(&a.name, Some(&a.value))
            && !confined::code_path_assignment(&a.name, &a.value, seg, ctx, v)
        {
            v.add(
                Layer::Policy,
                ReasonId::PolicyDangerousAssignment,
                Decision::Deny,
                format!("`{}=...` {what}", a.name),
                Some("drop the assignment; configure the tool in its own config file".into()),
            );
            v.risk = Risk::Dangerous;
        }
    }
}
