//! Runs `decide` N times on typical commands (for callgrind profiling).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
use safe_exec::decide::{CommandInput, decide, example_situation};
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let profile = safe_exec::profile::load("default").expect("default");
    let sit = example_situation();
    let strs = [
        "git status",
        "git status && cargo test",
        "ls -la src | grep rs",
        "cargo build --release 2>&1 | tail -20",
        "rm -rf target/debug/incremental",
        "cat ~/.ssh/id_rsa",
        "find . -name '*.rs' -exec wc -l {} +",
        "python3 -c 'import shutil; shutil.rmtree(\"/\")'",
    ];
    // `decide_loop N 'command'` profiles one command instead of the eight.
    let one: Vec<String> = std::env::args().skip(2).collect();
    let strs: Vec<&str> = if one.is_empty() {
        strs.to_vec()
    } else {
        one.iter().map(String::as_str).collect()
    };
    let inputs: Vec<CommandInput> = strs
        .iter()
        .map(|s| CommandInput::String {
            text: s.to_string(),
            positional: vec!["safe-exec".into()],
        })
        .collect();
    let mut k = 0;
    for _ in 0..n {
        for i in &inputs {
            k += decide(i, &profile, &sit).verdict.reasons.len();
        }
    }
    println!("{k}");
}
