//! The static policy: ordinary commands, bypasses, seed 002's forms.

mod bypass;
mod confined;
mod forms;
mod links;
mod ordinary;
mod parse_bounds;
mod redteam10_data;
mod redteam10_git;
mod redteam9;
mod review;
mod review10_holes;
mod review11;
mod review11_holes;
mod review12;
mod review12_paths;
mod review12_trees;
mod unconfined_classes;
mod writable_roots;
