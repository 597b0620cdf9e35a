//! The kernel sandbox, driven through the real binary.

mod cli;
mod concurrent;
mod daily;
mod deny_created;
mod env;
mod fs;
mod kernel_escapes;
mod net;
mod proc;
mod profile_cache;
mod pty_broker;
mod redteam10_git;
mod review10_holes;
mod review11_holes;
mod spawn;
mod supervisor;
mod terminal;
mod unlistable;
