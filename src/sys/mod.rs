//! Small operating-system and text helpers that several stages share: a
//! leaf, using nothing else of the crate, so any layer may call it.

pub mod external;
mod mem;
pub mod os;
pub mod path;
pub mod redact;
pub mod rlimit;
pub mod start;
pub mod time;
