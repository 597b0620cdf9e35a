//! How a command stands with its registry entry: the entry's maturity
//! (blocked, experimental) and whether the arguments fit it (malformed
//! arguments, options the entry does not list).

use super::args::ParsedArgs;
use super::registry::{CommandSpec, Maturity, UnknownOptions};
use super::{Confirmation, Decision, Layer, PolicyContext, ReasonId, Verdict};

/// A blocked entry is refused; an experimental one asks with a very
/// strong confirmation.
pub(super) fn maturity(name: &str, spec: &CommandSpec, v: &mut Verdict) {
    match spec.maturity {
        Maturity::Blocked => v.add(
            Layer::Policy,
            ReasonId::RegistryBlocked,
            Decision::Deny,
            format!(
                "`{name}` is blocked: {}",
                spec.reason
                    .clone()
                    .unwrap_or_else(|| "no reason given".into())
            ),
            None,
        ),
        Maturity::Experimental => {
            v.add(
                Layer::Policy,
                ReasonId::RegistryExperimental,
                Decision::Ask,
                format!(
                    "`{name}` is experimental in the registry{}",
                    spec.reason
                        .as_ref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                ),
                None,
            );
            v.need(Confirmation::VeryStrong);
        }
        Maturity::Stable => {}
    }
}

/// Malformed arguments are refused; options the entry does not list are
/// judged by its `unknown_options` (unconfined, `allow` asks: nothing
/// contains what an unknown option does).
pub(super) fn arguments_fit(
    name: &str,
    spec: &CommandSpec,
    parsed: &ParsedArgs,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    for e in &parsed.errors {
        v.add(
            Layer::Policy,
            ReasonId::RegistryMalformed,
            Decision::Deny,
            format!("`{name}`: {e}"),
            Some("give the arguments the program expects (see its --help)".into()),
        );
    }
    if !parsed.unknown_options.is_empty() {
        let d = match spec.unknown_options {
            // Unconfined, an option the registry does not know may read,
            // write or run anything: nothing contains it.
            UnknownOptions::Allow if !ctx.confined => Decision::Ask,
            UnknownOptions::Allow => Decision::Allow,
            UnknownOptions::Ask => Decision::Ask,
            UnknownOptions::Deny => Decision::Deny,
        };
        if d != Decision::Allow {
            v.add(
                Layer::Policy,
                ReasonId::RegistryUnknownOption,
                d,
                format!(
                    "`{name}` option(s) {} are not in the registry",
                    parsed.unknown_options.join(", ")
                ),
                Some(format!("leave the option out, or add it to the registry entry of `{name}` (docs/profile-format.md)")),
            );
        }
    }
}
