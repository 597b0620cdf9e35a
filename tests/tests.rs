//! The integration tests: one test binary (`autotests = false` in
//! Cargo.toml) with a module per area, as ripgrep and codex do. One binary
//! links the library once instead of thirty times.
//!
//! A new test file goes in its area's directory (`tests/sandbox/devices.rs`
//! plus `mod devices;` in `tests/sandbox/mod.rs`); a stand-alone
//! `tests/AREA_TOPIC.rs` is folded in by `bash tests/fold.sh`. The test
//! `structure::every_test_file_is_compiled` fails on a file the build would
//! silently skip.
//!
//! Shared helpers: `common::world` (the one hermetic world: temp HOME, XDG
//! directories, state, cwd, TMPDIR, cleared environment), `common::policy`
//! and `common::sandbox` (the policy/CLI and sandbox harnesses built on
//! it), `agents_support` and `layers_support`.

// Tests: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod agents;
mod agents_real_support;
mod agents_support;
mod cli;
mod common;
mod corpus;
mod data;
mod docs;
mod fuzz_parse_policy;
mod layers;
mod layers_support;
mod packaging;
mod policy;
mod profile_pin_sections;
mod sandbox;
mod structure;
