//! Programs run by path (`./rm`, `/tmp/cat`): checked as the program they
//! name, but never trusted on the name alone.

use std::path::Path;

use super::ReasonId;
use super::mode::decision_of;
use super::paths;
use super::{Decision, Layer, PolicyContext, Verdict, confined};
use crate::parse::Segment;

/// Directories whose programs are the system's own; a program run by path
/// from anywhere else (`./rm`, `/tmp/cat`) is not the registry's program.
pub(super) const SYSTEM_BIN_DIRS: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr/bin",
    "/usr/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
];

/// `./rm -rf x` is checked as `rm` (so `./rm -rf ~` is still refused), but
/// the file is whatever the working tree holds: never allowed on the name alone.
pub(super) fn untrusted_program_path(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    let written = &seg.words[0].value;
    let p = paths::resolve(&seg.cwd, written);
    let dir = Path::new(written)
        .parent()
        .map(|d| paths::resolve(&seg.cwd, &d.to_string_lossy()));
    let trusted = SYSTEM_BIN_DIRS.iter().any(|d| {
        let d = Path::new(d);
        p.parent() == Some(d)
            || dir.as_deref() == Some(d)
            || std::fs::canonicalize(d).ok().as_deref() == p.parent()
    });
    // Such a program is an unknown command, whatever its name: the sandbox
    // contains it when confined.
    let d = decision_of(ctx.profile.doc.policy.unknown_commands);
    if !trusted && d != Decision::Allow {
        let dir = p.parent().map(Path::to_path_buf).unwrap_or_default();
        if d == Decision::Deny {
            v.add(
                Layer::Policy,
                ReasonId::RegistryUntrustedPath,
                d,
                format!("`{written}` is a program from `{}`, not a system program, and this profile refuses programs it does not know", dir.display()),
                Some("use a registered program, or a profile that allows unknown programs".into()),
            );
        } else {
            confined::project_program(seg, ctx, v, &dir);
        }
    }
}
