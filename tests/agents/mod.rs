//! Agent integration: Claude Code and Codex hooks, shells and classify.

mod classify;
mod hook;
mod layers;
mod shell;
