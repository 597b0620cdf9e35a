//! Operands and option values judged by their registry type (`read_path`,
//! `write_path`, `url`, `command`, `refspec`, ...).

use super::args::ParsedArgs;
use super::code::{code_paths, stdin_program};
use super::languages::{awk_program, git_config, rustc_codegen, sed_script};
use super::path_checks::path_operand;
use super::registry::{Effect, Risk};
use super::written::written_then_run;
use super::{Decision, Layer, NETWORK_WARNING, PolicyContext, Verdict, confined, variables};
use crate::parse::{Segment, Word};

/// Operands by their registry type.
pub(super) fn operands(
    name: &str,
    p: &ParsedArgs,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    code: &mut Vec<String>,
) -> Risk {
    let mut risk = Risk::Safe;
    let destructive = p.has_effect(Effect::Recursive)
        || (p.has_effect(Effect::Delete) && !p.has_effect(Effect::Filter));
    let writes_all = p.has_effect(Effect::Delete) || p.has_effect(Effect::WritesOperands);
    let tree = p.has_effect(Effect::ReadsTree);
    for (w, t) in &p.operands {
        let t = if writes_all && matches!(t.as_str(), "read_path" | "path" | "dir") {
            "write_path"
        } else if tree && matches!(t.as_str(), "read_path" | "path" | "dir") {
            "read_tree"
        } else if tree && t == "sync_src" {
            "sync_src_tree"
        } else {
            t.as_str()
        };
        risk = risk.max(typed_value(
            name,
            t,
            w,
            seg,
            ctx,
            v,
            code,
            destructive,
            "operand",
        ));
    }
    risk
}

#[allow(clippy::too_many_arguments)]
pub(super) fn typed_value(
    name: &str,
    t: &str,
    w: &Word,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    code: &mut Vec<String>,
    destructive: bool,
    what: &str,
) -> Risk {
    match t {
        "read_path" | "path" | "dir" | "archive" | "chdir" => {
            path_operand(seg, ctx, v, w, "read_path", false, name);
            Risk::Safe
        }
        "read_tree" => {
            // A recursive read (`cp -r ~ x`, `grep -r key ~`) of a tree that
            // holds a protected path reads the secret too.
            path_operand(seg, ctx, v, w, "read_path", true, name);
            Risk::Safe
        }
        "script" => {
            if crate::parse::unwrap::is_stdin_path(&w.value) {
                // `awk -f -`, `python3 -`: the program comes from standard input.
                stdin_program(seg, ctx, v, code, name);
                return Risk::Write;
            }
            path_operand(seg, ctx, v, w, "read_path", false, name);
            written_then_run(seg, ctx, v, &w.value, name, code);
            Risk::Safe
        }
        "sync_src" | "sync_src_tree" | "sync_dest" => {
            // `HOST:PATH` and `rsync://` reach another machine.
            let v2 = w.value.as_str();
            let remote = v2.contains("://")
                || v2
                    .split_once(':')
                    .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'));
            if remote {
                v.add(
                    Layer::Policy,
                    "network.remote_path",
                    Decision::Deny,
                    format!("`{name} {v2}` names another host; only local copies are accepted"),
                    Some(format!("{name} -a SRC/ DEST/ with local paths")),
                );
                return Risk::Dangerous;
            }
            let kind = if t == "sync_dest" {
                "write_path"
            } else {
                "read_path"
            };
            let tree = t == "sync_src_tree" || (destructive && t == "sync_dest");
            path_operand(seg, ctx, v, w, kind, tree, name);
            if t == "sync_dest" {
                Risk::Write
            } else {
                Risk::Safe
            }
        }
        "hardlink_target" => {
            // A hard link shares the inode: writes through it change the
            // original, so the original must be writable too.
            path_operand(seg, ctx, v, w, "write_path", false, name);
            Risk::Write
        }
        "link_target" => {
            path_operand(seg, ctx, v, w, "read_path", false, name);
            let p = ctx.resolve(seg, &w.value);
            let sensitive = ctx.roots.is_broad(&p) && ctx.roots.check_write(&p, false).is_err()
                || ctx.roots.deny_read.iter().any(|d| p.starts_with(d));
            if !w.unresolved && sensitive {
                v.add(
                    Layer::Policy,
                    "policy.link_outside",
                    Decision::Ask,
                    format!("`{name}` makes a link to `{}`; later commands writing through it would reach there", p.display()),
                    Some("link to a path inside the project".into()),
                );
            }
            Risk::Write
        }
        "write_path" => {
            path_operand(seg, ctx, v, w, "write_path", destructive, name);
            Risk::Write
        }
        "destroy_path" => {
            // Discards changes under the path (`git checkout -- .`): a broad
            // target throws away everything.
            path_operand(seg, ctx, v, w, "write_path", true, name);
            Risk::Write
        }
        "refspec" => {
            if w.value.starts_with('+') {
                v.danger.push((
                    format!("`{name} {}`: a leading `+` forces the update", w.value),
                    Some(format!("{name} --force-with-lease")),
                ));
                return Risk::Dangerous;
            }
            if w.value.starts_with(':') {
                v.danger
                    .push((format!("`{name} {}` deletes the remote ref", w.value), None));
                return Risk::Dangerous;
            }
            Risk::Safe
        }
        "env_assignment" => {
            if let Some((n, val)) = w.value.split_once('=')
                && let Some(what) = variables::dangerous(n, (!w.unresolved).then_some(val))
                && !confined::code_path_assignment(n, val, seg, ctx, v)
            {
                v.add(
                    Layer::Policy,
                    "policy.dangerous_assignment",
                    Decision::Deny,
                    format!("`{name} {n}=...` {what}"),
                    Some("drop the assignment; configure the tool in its own config file".into()),
                );
                return Risk::Dangerous;
            }
            Risk::Safe
        }
        "code" => {
            code.push(w.value.clone());
            code_paths(name, &w.value, seg, ctx, v);
            Risk::Write
        }
        "command" => {
            v.add(
                Layer::Policy,
                "registry.exec_value",
                Decision::Deny,
                format!("`{name} {what}` runs the program `{}`", w.value),
                Some("run the other program as a command of its own".into()),
            );
            Risk::Dangerous
        }
        "count" => {
            if w.value.parse::<u64>().is_err() && !w.unresolved {
                v.add(
                    Layer::Policy,
                    "registry.bad_count",
                    Decision::Deny,
                    format!("`{name}`: `{}` is not a count", w.value),
                    None,
                );
            }
            Risk::Safe
        }
        "url" => {
            let lower = w.value.to_ascii_lowercase();
            if lower.starts_with("ext::") || lower.starts_with("fd::") {
                v.add(
                    Layer::Policy,
                    "registry.exec_url",
                    Decision::Deny,
                    format!("`{name}`: an `ext::` URL runs a program"),
                    None,
                );
                return Risk::Dangerous;
            }
            if lower.starts_with("file:") {
                v.add(
                    Layer::Policy,
                    "network.file_url",
                    Decision::Deny,
                    format!("`{name}`: `file:` URLs read local files"),
                    None,
                );
            }
            // Confined, the sandbox has no network: the program's own entry
            // asks "needs network" where it reaches other hosts.
            if !ctx.confined {
                v.warn(NETWORK_WARNING.into());
            }
            Risk::Safe
        }
        "host" | "domain" => {
            if !ctx.confined {
                v.warn(NETWORK_WARNING.into());
            }
            Risk::Safe
        }
        // Unconfined, nothing keeps a signal inside the command's own
        // processes: only job specs (`%1`) and `$!` (the last process this
        // string started) are the command's own.
        "pid" | "process_pattern" if !ctx.confined => {
            let own =
                t == "pid" && (w.value.starts_with('%') || w.raw == "$!" || w.raw == "\"$!\"");
            if !own {
                v.add(
                    Layer::Policy,
                    "policy.signal_other_process",
                    Decision::Deny,
                    format!(
                        "`{name} {}` signals processes this command did not start, and nothing confines it",
                        w.raw
                    ),
                    Some("stop only processes this command started (`kill %1`, `kill $!`)".into()),
                );
                return Risk::Dangerous;
            }
            Risk::Write
        }
        "rustc_codegen" => rustc_codegen(name, w, v),
        "git_config" => git_config(name, w, v),
        // Checked on the whole command line (`git_config_command`).
        "git_config_key" => Risk::Safe,
        "npm_config_action" => {
            if !matches!(w.value.as_str(), "get" | "list" | "ls") {
                v.add(
                    Layer::Policy,
                    "registry.npm_config_write",
                    Decision::Ask,
                    format!(
                        "`{name} {}` changes npm's configuration, which can name programs npm runs",
                        w.value
                    ),
                    None,
                );
                return Risk::Write;
            }
            Risk::Safe
        }
        "dd_operand" => {
            // `if=FILE` reads, `of=FILE` writes; other operands are values.
            match w.value.split_once('=') {
                Some(("if", f)) => {
                    let word = Word {
                        value: f.to_string(),
                        ..w.clone()
                    };
                    path_operand(seg, ctx, v, &word, "read_path", false, name);
                    Risk::Safe
                }
                Some(("of", f)) => {
                    let word = Word {
                        value: f.to_string(),
                        ..w.clone()
                    };
                    path_operand(seg, ctx, v, &word, "write_path", false, name);
                    Risk::Write
                }
                _ => Risk::Safe,
            }
        }
        "sed_script" => sed_script(name, w, seg, ctx, v),
        "awk_program" => awk_program(name, w, seg, ctx, v, code),
        _ => Risk::Safe,
    }
}
