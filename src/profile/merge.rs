//! How a profile's table merges over the one it `extends`: shared by the
//! loader (`crate::profile`) and build.rs, which merges the built-in
//! profiles' chains at build time. This file may refer to nothing but the
//! `toml` crate (build.rs compiles it on its own).

/// Child keys win; tables merge recursively; arrays are replaced.
pub fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (k.as_str(), base.get_mut(&k), v) {
            // Registry entries are replaced whole, never mixed.
            ("commands", Some(toml::Value::Table(b)), toml::Value::Table(o)) => b.extend(o),
            // Custom rules accumulate; a child rule with the same id wins.
            ("rule", Some(toml::Value::Array(b)), toml::Value::Array(o)) => {
                let id = |v: &toml::Value| v.get("id").and_then(|i| i.as_str()).map(str::to_string);
                b.retain(|x| !o.iter().any(|y| id(y) == id(x)));
                b.extend(o);
            }
            (_, Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, _, v) => {
                base.insert(k, v);
            }
        }
    }
}
