//! Checks per second through the library: `safe_exec::decide::decide` with
//! the built-in `default` profile on typical agent commands (parse, policy
//! and classifier; nothing is executed). Run: `cargo bench --bench checks`.
//! Figures are in docs/performance.md.

// A benchmark harness: a panic is the report.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use safe_exec::decide::{CommandInput, decide, example_situation};

const STRINGS: &[&str] = &[
    "git status",
    "git status && cargo test",
    "ls -la src | grep rs",
    "cargo build --release 2>&1 | tail -20",
    "rm -rf target/debug/incremental",
    "cat ~/.ssh/id_rsa",
    "find . -name '*.rs' -exec wc -l {} +",
    "python3 -c 'import shutil; shutil.rmtree(\"/\")'",
];

fn checks(c: &mut Criterion) {
    let profile = safe_exec::profile::load("default").expect("built-in default profile");
    let sit = example_situation();
    let inputs: Vec<CommandInput> = STRINGS
        .iter()
        .map(|s| CommandInput::String {
            text: s.to_string(),
            positional: vec!["safe-exec".into()],
        })
        .chain(std::iter::once(CommandInput::List(vec![
            "git".into(),
            "log".into(),
            "--oneline".into(),
            "-n".into(),
            "5".into(),
        ])))
        .collect();

    let mut g = c.benchmark_group("decide");
    g.throughput(Throughput::Elements(1));
    for (name, input) in STRINGS
        .iter()
        .copied()
        .chain(["-- git log --oneline -n 5"])
        .zip(&inputs)
    {
        g.bench_function(name, |b| {
            b.iter(|| decide(black_box(input), &profile, &sit))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("decide_mix");
    g.throughput(Throughput::Elements(inputs.len() as u64));
    g.bench_function("all typical commands", |b| {
        b.iter(|| {
            for input in &inputs {
                black_box(decide(black_box(input), &profile, &sit));
            }
        })
    });
    g.finish();

    // Loading the profile is part of every CLI invocation.
    c.bench_function("profile::load(default)", |b| {
        b.iter(|| safe_exec::profile::load(black_box("default")))
    });
}

criterion_group!(benches, checks);
criterion_main!(benches);
