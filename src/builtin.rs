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

/// The position of the built-in registry entry named `name`: a binary
/// search among the entries whose names start with the same byte (the
/// names are sorted by bytes, so those are consecutive), ~4 steps instead
/// of ~9 among all of them.
pub fn registry_position(name: &str) -> Option<usize> {
    let Some(&first) = name.as_bytes().first() else {
        return registry_position_among(name, 0, REGISTRY_INDEX.len());
    };
    let starts = first_byte_starts();
    let c = usize::from(first);
    registry_position_among(name, starts[c] as usize, starts[c + 1] as usize)
}

/// For each byte `k` (and 256), how many entries have an empty name or
/// one whose first byte is below `k`: the entries starting with byte `c`
/// are those from `starts[c]` to `starts[c + 1]`. One pass over the index,
/// once per process.
fn first_byte_starts() -> &'static [u32; 257] {
    static STARTS: std::sync::OnceLock<[u32; 257]> = std::sync::OnceLock::new();
    STARTS.get_or_init(|| {
        let mut counts = [0u32; 257];
        for e in REGISTRY_INDEX {
            match REGISTRY_DATA.as_bytes().get(e[0] as usize..e[1] as usize) {
                Some([b, ..]) => counts[usize::from(*b) + 1] += 1,
                _ => counts[0] += 1,
            }
        }
        let mut starts = [0u32; 257];
        let mut total = 0;
        for (s, n) in starts.iter_mut().zip(counts) {
            total += n;
            *s = total;
        }
        starts
    })
}

/// The position of `name` among the entries `lo..hi` of the index.
fn registry_position_among(name: &str, lo: usize, hi: usize) -> Option<usize> {
    let found = REGISTRY_INDEX.get(lo..hi)?.binary_search_by(|e| {
        REGISTRY_DATA
            .as_bytes()
            .get(e[0] as usize..e[1] as usize)
            .unwrap_or_default()
            .cmp(name.as_bytes())
    });
    found.ok().map(|i| lo + i)
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
