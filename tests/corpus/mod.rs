//! Corpora of real commands through the deciding layers.

mod agents;
mod decisions;
mod replay;
mod report;
