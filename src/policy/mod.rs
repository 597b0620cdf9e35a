//! Layer 1: the static policy. Reads the command model and the profile and
//! produces a [`Verdict`]: registry (what each program and option can do),
//! shell shape, allowed roots, safety rules, and the profile's mode.
//!
//! This file is the entry point ([`evaluate`]) and the module list; each
//! job has its own file:
//!
//! - `context`: the policy's view of the string (profile, roots, what the
//!   string writes and links);
//! - `shape`: operators, redirections, substitutions, groups; forms judged
//!   on the whole string;
//! - `assignments`: variables that load code, set by the command;
//! - `segment`: one simple command against the registry; `entry`: its
//!   maturity and whether the arguments fit; `templates`: arguments that
//!   arrive at run time (`xargs`, `find -exec`);
//! - `lookup`: finding an entry through subcommands; unregistered programs;
//! - `options` and `values`: option effects and typed operands/values;
//! - `path_checks`: paths against the roots, and their reasons;
//! - `languages`: sed scripts, awk programs, git settings, rustc codegen;
//! - `code`, `written`, `program_path`: inline code, files written then
//!   run, programs run by path;
//! - `canonical`: the spelling the safety rules also see;
//! - `safety` and `mode`: the safety rules and the profile's ceiling, the
//!   last steps of the strictest-wins combination;
//! - `unknown`: what cannot be checked.

pub mod args;
pub mod awk;
pub mod confined;
mod exec_judge;
mod find_delete;
pub mod forms;
pub mod git_config;
mod git_dirs;
pub mod history;
pub mod paths;
pub mod reason;
mod roots;
pub mod sed;
pub mod verdict;

mod assignments;
mod canonical;
mod code;
mod context;
mod entry;
mod languages;
mod lookup;
mod mode;
mod options;
mod path_checks;
pub(crate) mod program_path;
mod ps;
mod safety;
mod segment;
mod shape;
mod templates;
mod unknown;
mod values;
mod written;

pub use crate::config::{keywords, registry, rules};
pub use crate::sandbox::variables;
pub use exec_judge::exec_judge;

// The profile types the submodules use as `super::Profile` and
// `super::Action`: where they live is named once, here.
use crate::config::Profile;
use crate::config::schema::Action;
use crate::parse::CommandModel;
use registry::Risk;

pub use context::{Link, PolicyContext};
pub use reason::ReasonId;
pub use verdict::{Confirmation, Decision, Layer, Reason, Verdict};

// The helpers the sibling modules (confined, forms, history) call as
// `super::NAME`.
use code::code_paths;
use mode::decision_of;
use path_checks::path_operand;
use unknown::unknown_with;

/// The warning seed 002 requires for network-touching commands.
pub const NETWORK_WARNING: &str = "This command contacts external hosts and may reveal your IP address, DNS query, target host, or network metadata.";

/// Evaluates the whole command.
pub fn evaluate(model: &CommandModel, ctx: &PolicyContext, raw: Option<&str>) -> Verdict {
    let ctx = &PolicyContext::for_command(model, ctx);
    let mut v = Verdict::default();
    // A `[paths] write` entry that is refused here (the working directory
    // is the home directory, `/etc/cron.d`): say so with every decision,
    // since writes there fail in the sandbox.
    for w in &ctx.roots.refused {
        v.warn(w.clone());
    }

    for u in &model.unknown {
        unknown::unknown(&mut v, ctx, u);
    }
    shape::shape(model, ctx, &mut v);
    assignments::assigned(model, ctx, &mut v);
    shape::forms_alone(model, ctx, &mut v);
    let mut code_views = Vec::new();
    for seg in &model.segments {
        let before = v.risk;
        v.risk = Risk::Safe;
        ctx.seen_before.set(ctx.writes_seen.borrow().len());
        segment::segment(seg, ctx, &mut v, &mut code_views);
        if let Some(p) = ctx.dots_unknown.take() {
            unknown::unknown_with(
                &mut v,
                ctx,
                &format!(
                    "`{}` goes up (`..`) from `{}`, which an earlier command in this string copies, moves or links: if it is now a symbolic link, `..` leads elsewhere; nothing confines it here",
                    seg.program,
                    p.parent().unwrap_or(&p).display()
                ),
                "spell the path without `..`, or run it inside the sandbox (`hook --rewrite`, `safe-exec -c`)",
            );
        }
        let seg_risk = v.risk;
        v.risk = v.risk.max(before);
        confined::unconfined_substitution(seg, seg_risk, ctx, &mut v);
    }
    safety::safety_rules(model, &code_views, raw, ctx, &mut v);
    mode::ceiling(ctx, &mut v);
    v.settle();
    v
}
