//! The test suite's own shape: every Rust file under `tests/` is compiled
//! into the one test binary. With `autotests = false` a stray `tests/x.rs`
//! would be silently skipped by the build, its tests never run.

mod layers;
mod libc_calls;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Files under tests/ that are deliberately not modules of the binary.
const NOT_MODULES: &[(&str, &str)] = &[(
    "probe/probe.rs",
    "compiled by common::sandbox::probe() with rustc, run inside the sandbox",
)];

fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// The module files reachable from `file` through `mod NAME;` lines
/// (with `#[path = "..."]` honoured), `file` included.
fn modules(file: &Path, out: &mut BTreeSet<PathBuf>) {
    if !out.insert(file.to_path_buf()) {
        return;
    }
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let dir = file.parent().expect("a parent");
    let mod_rs = matches!(
        file.file_name().and_then(|n| n.to_str()),
        Some("mod.rs" | "tests.rs")
    ) || NOT_MODULES.iter().any(|(n, _)| file.ends_with(n));
    let mut path_attr: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path") {
            path_attr = rest.split('"').nth(1).map(String::from);
            continue;
        }
        let decl = line.strip_prefix("pub ").unwrap_or(line);
        let name = decl
            .strip_prefix("mod ")
            .and_then(|r| r.strip_suffix(';'))
            .map(str::trim);
        if let Some(name) = name {
            let target = match path_attr.take() {
                Some(p) => dir.join(p),
                None => {
                    let base = if mod_rs {
                        dir.to_path_buf()
                    } else {
                        dir.join(file.file_stem().expect("a stem"))
                    };
                    let flat = base.join(format!("{name}.rs"));
                    if flat.is_file() {
                        flat
                    } else {
                        base.join(name).join("mod.rs")
                    }
                }
            };
            modules(&target, out);
        } else if !line.starts_with("#[") {
            path_attr = None;
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read tests/").flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_test_file_is_compiled() {
    let root = tests_dir();
    let mut reached = BTreeSet::new();
    modules(&root.join("tests.rs"), &mut reached);
    // Programs compiled on their own (the probe) bring their own modules.
    for (n, _) in NOT_MODULES {
        modules(&root.join(n), &mut reached);
    }
    let mut all = Vec::new();
    rust_files(&root, &mut all);
    all.sort();
    let orphans: Vec<String> = all
        .iter()
        .filter(|p| !reached.contains(*p))
        .filter_map(|p| p.strip_prefix(&root).ok())
        .map(|p| p.display().to_string())
        .filter(|p| !NOT_MODULES.iter().any(|(n, _)| n == p))
        .collect();
    assert!(
        orphans.is_empty(),
        "test files the build silently skips (not modules of tests/tests.rs): {orphans:?}; \
         fold them in with `bash tests/fold.sh`"
    );
    // The walk itself works: it reaches files at every depth.
    for known in [
        "tests.rs",
        "common/world.rs",
        "sandbox/fs.rs",
        "structure/mod.rs",
        "structure/layers.rs",
    ] {
        assert!(reached.contains(&root.join(known)), "{known} not reached");
    }
}

#[test]
fn only_one_test_binary() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .expect("Cargo.toml");
    assert!(
        manifest.contains("\nautotests = false\n"),
        "Cargo.toml must say autotests = false"
    );
    assert_eq!(
        manifest.matches("[[test]]").count(),
        1,
        "one [[test]] target"
    );
}
