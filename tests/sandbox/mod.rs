//! The kernel sandbox, driven through the real binary.

mod cli;
mod daily;
mod env;
mod fs;
mod net;
mod proc;
