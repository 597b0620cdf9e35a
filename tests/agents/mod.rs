//! Agent integration: Claude Code and Codex hooks, shells and classify.

mod classify;
mod home_under_tmp;
mod hook;
mod layers;
mod shell;
