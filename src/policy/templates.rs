//! Commands that get their arguments at run time (`xargs CMD`, `find
//! -exec CMD {} ;`): what the policy cannot see beforehand asks, when the
//! program's options write or run programs, when it reads files
//! (unconfined), or when it changes files.

use super::registry::{CommandSpec, Effect, Risk, UnknownOptions, ValueType};
use super::{Decision, Layer, PolicyContext, ReasonId, Verdict, confined};
use crate::parse::Segment;

/// The checks for a template segment `seg` of `name`, whose arguments
/// so far give it `risk`.
pub(super) fn run_time_arguments(
    name: &str,
    spec: &CommandSpec,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    risk: Risk,
) {
    // Asked only for a template run by xargs (the specs are read for it).
    let risky_options = || {
        spec.options.iter().map(|o| o.spec()).any(|o| {
            o.effects.iter().any(|e| match e {
                Effect::Exec
                | Effect::Dangerous
                | Effect::Write
                | Effect::WritesOperands
                | Effect::Delete => true,
                Effect::Network
                | Effect::Recursive
                | Effect::Blocked
                | Effect::Ask
                | Effect::Template
                | Effect::Code
                | Effect::Last
                | Effect::Filter
                | Effect::ReadsTree
                | Effect::ReadsNamed => false,
            }) || o.value_type == Some(ValueType::Command)
        }) || (spec.unknown_options == UnknownOptions::Allow
            // Confined, an unlisted option of a read-only program is contained.
            && !(ctx.confined && spec.risk == Risk::Safe))
    };
    if seg.template
        && risk < Risk::Write
        && seg.wrappers.iter().any(|w| w == "xargs")
        && risky_options()
    {
        v.add(
            Layer::Policy,
            ReasonId::PolicyTemplateOptions,
            Decision::Ask,
            format!("`{name}` gets arguments from input at run time, and some of its options write or run programs"),
            Some(format!("pass the arguments to `{name}` explicitly")),
        );
    }
    // Unconfined, a program that reads the files it is given, getting them
    // at run time (`echo ~/.ssh/id_rsa | xargs head`), reads what the
    // policy never saw.
    let reads_operands = || {
        spec.operands.is_empty()
            || spec
                .operands
                .iter()
                .chain(spec.operands_with.values().flatten())
                .any(|o| o.ty.reads_file())
    };
    if seg.template
        && !ctx.confined
        && risk < Risk::Write
        && seg.wrappers.iter().any(|w| w == "xargs")
        && reads_operands()
    {
        v.add(
            Layer::Policy,
            ReasonId::PolicyTemplateRead,
            Decision::Ask,
            format!("`{name}` reads files named at run time (by xargs or find), which cannot be checked beforehand"),
            Some(format!("pass the file names to `{name}` explicitly")),
        );
    }
    if seg.template && risk >= Risk::Write && !confined::is_signal(seg) {
        v.add(
            Layer::Policy,
            ReasonId::PolicyTemplateWrite,
            Decision::Ask,
            format!("`{name}` changes files named at run time (by xargs or find), which cannot be checked beforehand"),
            Some("list the files explicitly, or use `find ... -delete` inside the project".into()),
        );
    }
}
