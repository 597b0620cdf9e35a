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

/// The position of the built-in registry entry named `name`: its slot in
/// `REGISTRY_HASH` (built by build.rs) and the slots after it, each name
/// there compared until an empty slot (about one comparison; a binary
/// search made ~9).
pub fn registry_position(name: &str) -> Option<usize> {
    let mask = REGISTRY_HASH.len().checked_sub(1)?;
    let mut k = registry_name_hash(name.as_bytes()) as usize & mask;
    // At most every slot once (the table is never full: twice as many
    // slots as names).
    for _ in 0..REGISTRY_HASH.len() {
        let i = usize::from(*REGISTRY_HASH.get(k)?).checked_sub(1)?;
        let [start, name_end, ..] = REGISTRY_INDEX.get(i)?.map(|v| v as usize);
        if REGISTRY_DATA.as_bytes().get(start..name_end) == Some(name.as_bytes()) {
            return Some(i);
        }
        k = (k + 1) & mask;
    }
    None
}

/// FNV-1a of a registry name (build.rs builds `REGISTRY_HASH` with the
/// same function).
fn registry_name_hash(name: &[u8]) -> u32 {
    name.iter().fold(0x811c_9dc5, |h: u32, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// Every built-in registry entry, in the order of their names.
pub fn registry() -> impl Iterator<Item = RegistryEntry> {
    (0..registry_len()).filter_map(registry_entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search among all entries, as `registry_position` did before.
    fn reference(name: &str) -> Option<usize> {
        REGISTRY_INDEX
            .binary_search_by(|e| {
                REGISTRY_DATA
                    .get(e[0] as usize..e[1] as usize)
                    .unwrap_or_default()
                    .cmp(name)
            })
            .ok()
    }

    #[test]
    fn registry_position_equals_the_search_among_all_entries() {
        let mut names: Vec<String> = registry().map(|(n, _, _)| n.to_string()).collect();
        assert!(!names.is_empty());
        let mut probes: Vec<String> = vec![
            String::new(),
            "\0".into(),
            "~".into(),
            "é".into(),
            "zzzz".into(),
            "!".into(),
        ];
        for n in &names {
            probes.push(format!("{n}x"));
            probes.push(format!("x{n}"));
            let mut shorter = n.clone();
            shorter.pop();
            probes.push(shorter);
            probes.push(n.to_uppercase());
        }
        names.extend(probes);
        for n in &names {
            assert_eq!(registry_position(n), reference(n), "{n:?}");
        }
        for b in 0u8..=127 {
            let n = (b as char).to_string();
            assert_eq!(registry_position(&n), reference(&n), "{n:?}");
        }
    }
}
