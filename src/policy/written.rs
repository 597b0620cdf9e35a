//! Files one segment writes and a later segment of the same string runs
//! or loads (`printf ... > x.sh && sh x.sh`, `cp a Makefile && make`):
//! what runs is not what the policy saw.

use std::path::PathBuf;

use super::registry::CommandSpec;
use super::unknown::unknown;
use super::{PolicyContext, Verdict, confined};
use crate::parse::Segment;

/// Unconfined: a program that runs code from files (an interpreter, a
/// build tool, a program run by path) after an earlier segment of the same
/// string wrote a file it may run or load: a script it is given, or any
/// file in the tree it works in (`tee x.sh; bash x.sh`, `cp a Makefile &&
/// make`, `echo ... > conftest.py; pytest`, `sed -i ... build.rs && cargo
/// build`). What it runs is not what the policy saw.
pub(super) fn written_then_loaded(
    seg: &Segment,
    name: &str,
    spec: &CommandSpec,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    let runs_code = spec.interpreter || seg.words[0].value.contains('/');
    if !runs_code {
        return;
    }
    let scripts: Vec<PathBuf> = seg.words[1..]
        .iter()
        .filter(|w| !w.value.starts_with('-'))
        .map(|w| ctx.resolve(seg, &w.value))
        .collect();
    let program = ctx.resolve(seg, &seg.words[0].value);
    let hit = ctx
        .writes_seen
        .borrow()
        .iter()
        .find(|p| p.starts_with(&seg.cwd) || scripts.contains(p) || **p == program)
        .cloned();
    if let Some(p) = hit {
        unknown(
            v,
            ctx,
            &format!(
                "`{name}` runs or loads code from its working tree, where an earlier command in this string writes `{}`; nothing confines what it runs",
                p.display()
            ),
        );
    }
}

/// Running a file that a redirection in the same string wrote
/// (`printf ... > x.sh && sh x.sh`): its content is not known when checking.
pub(super) fn written_then_run(
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    file: &str,
    name: &str,
    code: &mut Vec<String>,
) {
    let p = ctx.resolve(seg, file);
    if ctx.written.contains(&p) {
        confined::written_then_run(seg, ctx, v, &p, file, name, code);
    }
}
