//! Values written in a little language of their own, judged by what they
//! can do: sed scripts, awk programs, `git -c` settings and `git config`
//! keys, rustc `-C` codegen options.

use super::ReasonId;
use super::args::ParsedArgs;
use super::path_checks::path_reason;
use super::paths;
use super::registry::Risk;
use super::unknown::unknown;
use super::{Decision, Layer, PolicyContext, Verdict, awk, sed};
use crate::parse::{Segment, Word};

/// `git -c key=value`: only keys on the allowlist of harmless keys
/// (`git_config.rs`); any other key may name a program git runs.
pub(super) fn git_config(name: &str, w: &Word, v: &mut Verdict) -> Risk {
    let (key, value) = match w.value.split_once('=') {
        Some((k, val)) => (k, Some(val)),
        None => (w.value.as_str(), Some("true")),
    };
    if key.eq_ignore_ascii_case("clean.requireForce") {
        v.add(
            Layer::Policy,
            ReasonId::HistoryDestroy,
            Decision::Deny,
            format!("`{name} -c clean.requireForce=...` lets `git clean` delete untracked files without `-f`; the sandbox cannot protect work inside the project"),
            Some("list what would go with `git clean -n`".into()),
        );
        return Risk::Dangerous;
    }
    if w.unresolved || !super::git_config::harmless(key, value) {
        v.add(
            Layer::Policy,
            ReasonId::RegistryGitConfigExec,
            Decision::Deny,
            format!("`{name} -c {key}=...` is not a setting known to be harmless; git settings can make it run other programs"),
            Some("drop the -c setting".into()),
        );
        return Risk::Dangerous;
    }
    Risk::Safe
}

/// `git config KEY VALUE`, `git config set KEY VALUE`: the key must be on
/// the allowlist of harmless keys.
pub(super) fn git_config_command(parsed: &ParsedArgs, v: &mut Verdict) {
    let options: Vec<String> = parsed.options.iter().map(|o| o.name.to_string()).collect();
    let operands: Vec<String> = parsed
        .operands
        .iter()
        .map(|(w, _)| w.value.clone())
        .collect();
    for (key, value) in super::git_config::keys_set(&options, &operands) {
        if !super::git_config::harmless(&key, value.as_deref()) {
            v.add(
                Layer::Policy,
                ReasonId::RegistryGitConfigExec,
                Decision::Deny,
                format!("`git config` sets `{key}`, which is not a setting known to be harmless; git settings can make it run other programs"),
                None,
            );
            v.risk = Risk::Dangerous;
        }
    }
}

/// A sed script, read with sed's grammar (`sed.rs`): `e` and `s///e` run
/// commands, `r`/`R` read files and `w`/`W`/`s///w` write them.
pub(super) fn sed_script(
    name: &str,
    w: &Word,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
) -> Risk {
    let effects = match sed::effects(&w.value) {
        Ok(e) => e,
        Err(why) => {
            unknown(
                v,
                ctx,
                &format!("the `{name}` script cannot be read: {why}"),
            );
            return Risk::Safe;
        }
    };
    if effects.exec {
        v.add(
            Layer::Policy,
            ReasonId::RegistrySedExec,
            Decision::Deny,
            format!("the `{name}` script uses the `e` command, which runs shell commands"),
            Some("drop the `e` command or flag and run the command separately".into()),
        );
        return Risk::Dangerous;
    }
    for f in &effects.reads {
        let p = ctx.resolve(seg, f);
        if let Err(e) = ctx.roots.check_read(&p) {
            path_reason(v, &p, &e, &format!("the `{name}` script reads"));
        }
    }
    let mut risk = Risk::Safe;
    for f in &effects.writes {
        let p = ctx.resolve(seg, f);
        if !paths::is_device_sink(&p) {
            risk = Risk::Write;
            ctx.writes_seen.borrow_mut().push(p.clone());
        }
        if let Err(e) = super::path_checks::check_redirect(ctx, &p) {
            path_reason(v, &p, &e, &format!("the `{name}` script writes"));
        }
    }
    risk
}

/// `rustc -C KEY[=VALUE]`: an allowlist; `linker=`, `link-arg=`,
/// `link-args=`, `llvm-args=` and keys added later may run or load other
/// programs.
pub(super) fn rustc_codegen(name: &str, w: &Word, v: &mut Verdict) -> Risk {
    // `-C KEY[=VALUE]`: an allowlist; `linker=`, `link-arg=`,
    // `link-args=`, `llvm-args=` and keys added later may run or
    // load other programs.
    const HARMLESS: &[&str] = &[
        "opt-level",
        "debuginfo",
        "debug-assertions",
        "overflow-checks",
        "codegen-units",
        "incremental",
        "lto",
        "panic",
        "strip",
        "target-cpu",
        "target-feature",
        "relocation-model",
        "code-model",
        "embed-bitcode",
        "force-frame-pointers",
        "force-unwind-tables",
        "metadata",
        "extra-filename",
        "prefer-dynamic",
        "split-debuginfo",
        "symbol-mangling-version",
        "instrument-coverage",
        "rpath",
        "no-redzone",
        "soft-float",
        "inline-threshold",
        "link-dead-code",
        "linker-plugin-lto",
    ];
    let key = w.value.split('=').next().unwrap_or("");
    if w.unresolved || !HARMLESS.contains(&key) {
        v.add(
                Layer::Policy,
                ReasonId::RegistryExecValue,
                Decision::Deny,
                format!("`{name} -C {key}` is not a codegen option known to be harmless; some run or load other programs"),
                None,
            );
        return Risk::Dangerous;
    }
    Risk::Safe
}

/// An awk program, read with awk's grammar (`awk.rs`): `system()` and
/// pipes run commands; `getline < FILE` reads and `print > FILE` writes.
pub(super) fn awk_program(
    name: &str,
    w: &Word,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    code: &mut Vec<String>,
) -> Risk {
    code.push(w.value.clone());
    let e = awk::effects(&w.value);
    if e.exec {
        v.add(
            Layer::Policy,
            ReasonId::RegistryAwkExec,
            Decision::Deny,
            format!("the `{name}` program runs shell commands"),
            Some("do the work with separate commands".into()),
        );
        return Risk::Dangerous;
    }
    if let Some(why) = &e.unknown {
        unknown(v, ctx, why);
    }
    for f in &e.reads {
        let p = ctx.resolve(seg, f);
        if let Err(err) = ctx.roots.check_read(&p) {
            path_reason(v, &p, &err, &format!("the `{name}` program reads"));
        }
    }
    let mut risk = Risk::Safe;
    for f in &e.writes {
        let p = ctx.resolve(seg, f);
        if !paths::is_device_sink(&p) {
            risk = Risk::Write;
            ctx.writes_seen.borrow_mut().push(p.clone());
        }
        if let Err(err) = super::path_checks::check_redirect(ctx, &p) {
            path_reason(v, &p, &err, &format!("the `{name}` program writes"));
        }
    }
    risk
}
