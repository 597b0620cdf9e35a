//! Shell shape: operators, redirections, substitutions, heredocs, groups
//! and control flow, against what the profile's `[shell]` section allows;
//! seed 002's archive and network forms, accepted only on their own.

use super::ReasonId;
use super::{Decision, Layer, PolicyContext, Verdict, confined};
use crate::parse::{CommandModel, Operator};

/// Shell shape: operators, redirections, substitutions, heredocs, groups.
pub(super) fn shape(model: &CommandModel, ctx: &PolicyContext, v: &mut Verdict) {
    let shell = &ctx.profile.doc.shell;
    let c = &model.constructs;
    for op in &model.operators {
        if !shell
            .operators
            .iter()
            .any(|o| Operator::from_spelling(o) == Some(*op))
        {
            v.add(
                Layer::Policy,
                ReasonId::ShapeOperator,
                Decision::Deny,
                format!(
                    "the operator `{}` is not allowed by this profile",
                    op.as_str()
                ),
                Some("run the commands one at a time".into()),
            );
        }
    }
    let checks: [(bool, bool, ReasonId, &str); 5] = [
        (
            c.substitution,
            shell.substitutions,
            ReasonId::ShapeSubstitution,
            "command substitution `$(...)` is not allowed by this profile",
        ),
        (
            c.process_substitution,
            shell.process_substitutions,
            ReasonId::ShapeProcessSubstitution,
            "process substitution `<(...)` is not allowed by this profile",
        ),
        (
            c.heredoc,
            shell.heredocs,
            ReasonId::ShapeHeredoc,
            "heredocs and here-strings are not allowed by this profile",
        ),
        (
            c.subshell_or_group,
            shell.groups,
            ReasonId::ShapeGroup,
            "subshells and `{ ...; }` groups are not allowed by this profile",
        ),
        (
            c.control_flow,
            shell.control_flow,
            ReasonId::ShapeControlFlow,
            "`if`/`for`/`while`/`case` are not allowed by this profile",
        ),
    ];
    for (present, allowed, id, msg) in checks {
        if present && !allowed {
            let suggestion = (id == ReasonId::ShapeSubstitution)
                .then(|| "run the inner command first and pass its output literally".to_string());
            v.add(Layer::Policy, id, Decision::Deny, msg.into(), suggestion);
        }
    }
    if c.redirection
        && !shell.redirections
        && model
            .segments
            .iter()
            .any(|s| s.redirections.iter().any(|r| r.writes || r.reads))
    {
        v.add(
            Layer::Policy,
            ReasonId::ShapeRedirection,
            Decision::Deny,
            "redirections are not allowed by this profile".into(),
            None,
        );
    }
}

/// Seed 002: an archive or network form anywhere in a string with
/// operators, a pipeline, redirections or substitutions denies the string.
pub(super) fn forms_alone(model: &CommandModel, ctx: &PolicyContext, v: &mut Verdict) {
    // A string alone (one segment, nothing around it) is fine whatever its
    // program: asked first, so such a string looks up no registry entry.
    let alone = !(model.segments.len() > 1
        || !model.operators.is_empty()
        || model.constructs.substitution
        || model.constructs.redirection);
    if alone {
        return;
    }
    let form_segments = model
        .segments
        .iter()
        .filter(|s| {
            ctx.profile
                .registry
                .get(&s.program)
                .is_some_and(|sp| sp.form.is_some())
                && !confined::is_loopback_request_in(s, ctx)
        })
        .count();
    if form_segments > 0
        && (model.segments.len() > 1
            || !model.operators.is_empty()
            || model.constructs.substitution
            || model.constructs.redirection)
    {
        v.add(
            Layer::Policy,
            ReasonId::FormWholeString,
            Decision::Deny,
            "archive and network commands are accepted only on their own: no operators, pipelines, redirections or substitutions in the same string".into(),
            Some("run the archive or network command as a separate command".into()),
        );
    }
}
