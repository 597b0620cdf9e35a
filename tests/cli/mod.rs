//! The command line: exit codes, confirmation on a terminal, the state directory.

mod confirm;
mod exit_codes;
mod options;
mod start;
mod state_dir;
