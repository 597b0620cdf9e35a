//! The built-in profiles as the binary loads them by name (the merged
//! document build.rs embeds as JSON) are exactly what merging their TOML
//! texts gives (what a profile file extending them sees), and the embedded
//! registry entries and wrappers are the TOML files' data.

use safe_exec::builtin;
use safe_exec::profile;

fn as_json(p: &profile::Profile) -> serde_json::Value {
    serde_json::to_value(&p.doc).expect("profile serialises")
}

#[test]
fn builtin_profiles_load_as_their_toml_merges() {
    assert!(builtin::PROFILE_DOCS.len() >= 4);
    assert_eq!(builtin::PROFILE_DOCS.len(), builtin::PROFILES.len());
    for (name, _, _) in builtin::PROFILE_DOCS {
        let fast = profile::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let slow = profile::load_builtin_from_toml(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            as_json(&fast),
            as_json(&slow),
            "{name}: merged document differs"
        );
        assert_eq!(fast.name, slow.name, "{name}");
        assert_eq!(fast.source, slow.source, "{name}");
        assert_eq!(fast.source, format!("builtin:{name}"));
        assert_eq!(fast.chain, slow.chain, "{name}");
        assert_eq!(
            fast.registry.overrides().count(),
            slow.registry.overrides().count(),
            "{name}"
        );
    }
    // An extending profile carries its chain and inherits the parent's data.
    let strict = profile::load("strict").expect("strict");
    assert_eq!(strict.chain, ["builtin:strict", "builtin:default"]);
    assert_eq!(strict.doc.extends.as_deref(), Some("default"));
    assert!(!strict.doc.paths.deny_read.is_empty());
}

#[test]
fn a_file_extending_a_builtin_sees_the_same_profile() {
    let d = tempfile::tempdir().expect("tmp");
    let f = d.path().join("p.toml");
    std::fs::write(&f, "extends = \"default\"\nname = \"default\"\n").expect("write");
    let file = profile::load(f.to_str().expect("utf-8")).expect("file profile");
    let builtin = profile::load("default").expect("default");
    let (mut a, b) = (as_json(&file), as_json(&builtin));
    // The file's `extends` names its parent; the built-in one has none.
    a["extends"] = b["extends"].clone();
    assert_eq!(a, b);
}

#[test]
fn embedded_registry_and_wrappers_are_the_toml_data() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
    let mut from_files = std::collections::BTreeMap::new();
    for e in std::fs::read_dir(root.join("registry")).expect("registry dir") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "toml") {
            let t: toml::Table = std::fs::read_to_string(&p)
                .expect("read")
                .parse()
                .expect("toml");
            for (name, v) in t["command"].as_table().expect("[command]") {
                from_files.insert(name.clone(), serde_json::to_value(v).expect("json"));
            }
        }
    }
    assert_eq!(from_files.len(), builtin::registry_len());
    for (name, text, source) in builtin::registry() {
        let v: serde_json::Value = serde_json::from_str(text).expect("embedded entry is JSON");
        assert_eq!(Some(&v), from_files.get(name), "registry entry {name}");
        assert!(source.starts_with("profiles/registry/"), "{name}: {source}");
        assert_eq!(
            builtin::registry_position(name)
                .and_then(builtin::registry_entry)
                .map(|e| e.0),
            Some(name)
        );
    }
    assert_eq!(builtin::registry_position("no-such-program-here"), None);
    assert_eq!(builtin::registry_entry(builtin::registry_len()), None);
    let t: toml::Table = std::fs::read_to_string(root.join("wrappers.toml"))
        .expect("read")
        .parse()
        .expect("toml");
    let ws = t["wrapper"].as_table().expect("[wrapper]");
    assert_eq!(ws.len(), builtin::WRAPPERS.len());
    for (name, text) in builtin::WRAPPERS {
        let v: serde_json::Value = serde_json::from_str(text).expect("embedded wrapper is JSON");
        assert_eq!(
            v,
            serde_json::to_value(&ws[*name]).expect("json"),
            "wrapper {name}"
        );
    }
}
