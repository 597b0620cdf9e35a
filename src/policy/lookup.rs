//! Finding a program's registry entry, descending into subcommands
//! (`git -c x=y push`), and what happens to a program the registry does
//! not know.

use super::ReasonId;
use super::mode::decision_of;
use super::path_checks::Access;
use super::path_checks::path_operand;
use super::registry::{self, CommandSpec};
use super::{Layer, PolicyContext, Verdict, confined};
use crate::parse::{Segment, Word};
use std::borrow::Cow;

/// A registry entry with the arguments that belong to it.
/// The name is borrowed from the segment until a subcommand names its own
/// entry (`git push`).
pub(super) type Layered<'w> = (Cow<'w, str>, std::sync::Arc<CommandSpec>, &'w [Word]);

/// A program (or subcommand) the registry does not know.
pub(super) fn unregistered(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict, missing: &str) {
    if !confined::unregistered(ctx, v, missing) {
        let d = decision_of(ctx.profile.doc.policy.unknown_commands);
        let suggestion = if ctx.confined {
            format!(
                "use a registered program, or add `{missing}` to the registry (profiles/registry, docs/profile-format.md)"
            )
        } else {
            format!(
                "{}; or add `{missing}` to the registry",
                "run it inside the sandbox: install the hook with `--rewrite` (or use `safe-exec -c`)"
            )
        };
        v.add(
            Layer::Policy,
            ReasonId::RegistryUnknownCommand,
            d,
            format!("`{missing}` is not in the command registry"),
            Some(suggestion),
        );
    }
    // Still check its operands as paths it might read.
    for w in &seg.words[1..] {
        if !w.value.starts_with('-') {
            path_operand(seg, ctx, v, w, Access::Read, false, &seg.program);
        }
    }
}

/// Finds the registry entry, descending into subcommands. Returns the
/// entry with its own arguments, and each parent entry with the options
/// given before the subcommand (`git -c x=y push`: `-c x=y` belongs to `git`).
pub(super) fn lookup<'w>(
    registry: &registry::Registry,
    program: &'w str,
    args: &'w [Word],
) -> Result<(Layered<'w>, Vec<Layered<'w>>), String> {
    let mut name = Cow::Borrowed(program);
    let mut spec = registry.get(&name).ok_or_else(|| program.to_string())?;
    let mut rest = args;
    let mut parents = Vec::new();
    while spec.subcommands {
        let Some(idx) = first_operand(&spec, rest) else {
            break;
        };
        let sub = [&*name, " ", &rest[idx].value].concat();
        match registry.get(&sub) {
            Some(s) => {
                // The parent keeps the name and entry that are replaced.
                let parent_name = std::mem::replace(&mut name, Cow::Owned(sub));
                let parent_spec = std::mem::replace(&mut spec, s);
                parents.push((parent_name, parent_spec, &rest[..idx]));
                rest = &rest[idx + 1..];
            }
            None => return Err(sub),
        }
    }
    Ok(((name, spec, rest), parents))
}

/// Index of the first operand (the subcommand), skipping global options.
pub(super) fn first_operand(spec: &CommandSpec, args: &[Word]) -> Option<usize> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].value.as_str();
        if !a.starts_with('-') || a == "-" {
            return Some(i);
        }
        // (The specs are read in place: no vector of them per call.)
        let takes_value =
            spec.options.iter().map(|o| o.spec()).any(|o| {
                o.value == registry::ValueKind::Required && o.names.iter().any(|n| n == a)
            });
        i += if takes_value { 2 } else { 1 };
    }
    None
}
