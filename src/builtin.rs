//! The built-in data of `profiles/`, embedded at build time by `build.rs`.

/// One group of `profiles/env/variables.toml`: (what, names, scrub, fold,
/// except, safe_values).
pub type VarGroup = (
    &'static str,
    &'static [&'static str],
    bool,
    bool,
    &'static [&'static str],
    &'static [&'static str],
);

include!(concat!(env!("OUT_DIR"), "/builtin_data.rs"));

/// One built-in registry entry: (name, JSON text, source file).
pub type RegistryEntry = (&'static str, &'static str, &'static str);

/// How many built-in registry entries there are.
pub fn registry_len() -> usize {
    REGISTRY_INDEX.len()
}

/// Built-in registry entry `i`, in the order of their names.
pub fn registry_entry(i: usize) -> Option<RegistryEntry> {
    let [start, name_end, text_end, source] = REGISTRY_INDEX.get(i)?.map(|v| v as usize);
    Some((
        REGISTRY_DATA.get(start..name_end)?,
        REGISTRY_DATA.get(name_end..text_end)?,
        REGISTRY_SOURCES.get(source)?,
    ))
}

/// The position of the built-in registry entry named `name`.
pub fn registry_position(name: &str) -> Option<usize> {
    REGISTRY_INDEX
        .binary_search_by(|e| {
            REGISTRY_DATA
                .get(e[0] as usize..e[1] as usize)
                .unwrap_or_default()
                .cmp(name)
        })
        .ok()
}

/// Every built-in registry entry, in the order of their names.
pub fn registry() -> impl Iterator<Item = RegistryEntry> {
    (0..registry_len()).filter_map(registry_entry)
}
