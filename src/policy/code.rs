//! Inline code and programs read from standard input: visible destruction
//! in code (`shutil.rmtree("/x")`) is checked like the same path given to
//! `rm`; a program from a pipe cannot be checked.

use super::path_checks::path_reason;
use super::unknown::unknown;
use super::{PolicyContext, Verdict};
use crate::parse::Segment;

/// A program read from standard input: a literal heredoc is inspected as
/// code; anything else (a pipe, a file redirected in) cannot be checked.
pub(super) fn stdin_program(
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    code: &mut Vec<String>,
    name: &str,
) {
    match &seg.stdin_data {
        Some(data) => {
            code.push(data.clone());
            code_paths(name, data, seg, ctx, v);
        }
        None => unknown(
            v,
            ctx,
            &format!("`{name}` reads its program from standard input; it cannot be checked"),
        ),
    }
}

/// Visible destruction in inline code: a deleting call with a literal path
/// (`shutil.rmtree("/x")`, `unlink "/etc/passwd"`, `fs.rmSync("/")`) is
/// checked like the same path given to `rm`.
pub(super) fn code_paths(
    name: &str,
    code: &str,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    static CALL: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(re) = CALL
        .get_or_init(|| {
            regex::Regex::new(
                r#"\b(rmtree|rmSync|rmdirSync|unlinkSync|rm_rf|rm_r|rm_f|remove_dir_all|remove_file|removedirs|rmdir|unlink|remove|rimraf|truncate)\b\s*\(?\s*(glob\s*\(\s*)?["']([^"']+)["']"#,
            )
            .ok()
        })
        .as_ref()
    else {
        return;
    };
    for c in re.captures_iter(code) {
        let func = c.get(1).map_or("", |m| m.as_str());
        let globbed = c.get(2).is_some();
        let Some(raw) = c.get(3).map(|m| m.as_str()) else {
            continue;
        };
        let mut path = match raw.strip_prefix('~') {
            Some(rest) => format!("{}{rest}", ctx.roots.home.display()),
            None => raw.to_string(),
        };
        let has_glob = globbed || path.contains(['*', '?', '[']);
        if has_glob {
            let cut = path.find(['*', '?', '[']).unwrap_or(path.len());
            path = match path[..cut].rfind('/') {
                Some(0) => "/".into(),
                Some(i) => path[..i].to_string(),
                None => ".".into(),
            };
        }
        let recursive = matches!(
            func,
            "rmtree" | "rmSync" | "rm_rf" | "rm_r" | "remove_dir_all" | "removedirs" | "rimraf"
        );
        let p = ctx.resolve(seg, &path);
        if let Err(e) = super::path_checks::check_write(ctx, &p, recursive || has_glob) {
            path_reason(v, &p, &e, &format!("`{name}` code calls `{func}` on"));
        }
    }
}
