//! Prints every decision in full (the command model and the verdict) for
//! the commands of TSV files (last column) and for generated spellings, in
//! several situations: run a base build and a changed build on the same
//! input and `diff` the outputs to show that a change keeps every decision
//! identical. `decide_diff DIR FILE.tsv...` (DIR: an existing directory used
//! as the working directory and home of the second situation).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
use std::io::Write;
use std::path::PathBuf;

use safe_exec::decide::{CommandInput, decide, example_situation};

const ATOMS: &[&str] = &[
    " ",
    " ",
    "\t",
    "\n",
    ";",
    "&&",
    "||",
    "|",
    "&",
    ">",
    ">>",
    "<",
    "2>&1",
    "<<<",
    "(",
    ")",
    "{",
    "}",
    "'",
    "\"",
    "\\",
    "$",
    "${",
    "$(",
    "$((",
    "`",
    "~",
    "~/",
    "*",
    "?",
    "[",
    "]",
    "#",
    "=",
    "!",
    "-",
    "--",
    "-rf",
    "-c",
    "x",
    "a=b",
    "HOME=",
    "rm",
    "git",
    "status",
    "cat",
    "ls",
    "echo",
    "bash",
    "sh -c",
    "sudo",
    "env",
    "find",
    "-exec",
    "{}",
    "+",
    "xargs",
    "cd",
    "..",
    "/",
    "/etc/passwd",
    ".ssh",
    "id_rsa",
    "target",
    "src/",
    ".env",
    "é",
    "日本",
    "if",
    "then",
    "fi",
    "for",
    "in",
    "do",
    "done",
    "while",
    "case",
    "esac",
    "function",
    "export",
    "local",
    "eval",
    "exec",
    "time",
    "!",
    "$HOME",
    "$1",
    "$@",
    "\"$x\"",
    "'a b'",
    "$'\\x41'",
    "<(",
    ">(",
    "{a,b}",
    "{1..3}",
    "%",
    "@",
    ",",
    ":",
    "+=",
    "[[",
    "]]",
    "((",
    "))",
    "python3 -c",
];

fn generated(n: usize) -> Vec<String> {
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    (0..n)
        .map(|_| {
            let k = 1 + (next() % 12) as usize;
            let mut s = String::new();
            for _ in 0..k {
                s.push_str(ATOMS[(next() % ATOMS.len() as u64) as usize]);
                if next() % 3 == 0 {
                    s.push(' ');
                }
            }
            s
        })
        .collect()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().expect("DIR"));
    let mut cmds: Vec<String> = Vec::new();
    for f in args {
        let text = std::fs::read_to_string(&f).expect("read");
        for line in text.lines().skip(1) {
            if let Some(c) = line.rsplit('\t').next() {
                cmds.push(c.replace("\\n", "\n"));
            }
        }
    }
    cmds.extend(generated(20_000));
    // DECIDE_DIFF_PROFILE=FILE: that profile file, as a start reads it
    // from the loaded-profile cache (loaded once to write the entry, then
    // from it); the built-in `default` otherwise.
    let profile = match std::env::var("DECIDE_DIFF_PROFILE") {
        Ok(file) => {
            let cache = std::env::temp_dir().join(format!("decide-diff-{}", std::process::id()));
            safe_exec::profile::load_cached(&file, None, Some(&cache)).expect("profile");
            let p = safe_exec::profile::load_cached(&file, None, Some(&cache)).expect("cached");
            let _ = std::fs::remove_dir_all(&cache);
            p
        }
        Err(_) => safe_exec::profile::load("default").expect("default"),
    };
    let mut sits = vec![example_situation()];
    let mut s2 = example_situation();
    s2.places.cwd = dir.clone();
    s2.places.home = dir.clone();
    s2.places.git_root = Some(dir.clone());
    s2.confined = false;
    sits.push(s2);
    let mut s3 = example_situation();
    s3.interactive = true;
    s3.confined = false;
    sits.push(s3);
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    for c in &cmds {
        for (i, sit) in sits.iter().enumerate() {
            let input = CommandInput::String {
                text: c.clone(),
                positional: vec!["safe-exec".into()],
            };
            let d = decide(&input, &profile, sit);
            writeln!(out, "{i} {c:?}\n{:?}\n{:?}", d.verdict, d.model).unwrap();
        }
        let argv: Vec<String> = c.split_whitespace().map(str::to_string).collect();
        if !argv.is_empty() {
            let d = decide(&CommandInput::List(argv), &profile, &sits[1]);
            writeln!(out, "L {c:?}\n{:?}\n{:?}", d.verdict, d.model).unwrap();
        }
    }
}
