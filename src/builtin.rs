//! The built-in data of `profiles/`, embedded at build time by `build.rs`.

include!(concat!(env!("OUT_DIR"), "/builtin_data.rs"));
