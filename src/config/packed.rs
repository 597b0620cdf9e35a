//! The built-in profiles' embedded form: the merged TOML table build.rs
//! produces, written as tagged bytes (a tag, then a length or a value;
//! lengths and counts are 4 bytes little-endian), read back by a serde
//! deserializer. It replaces JSON text: the same data model (a table of
//! strings, booleans, integers, floats, arrays and tables), self-describing
//! (so every `Deserialize` impl reads it as it reads JSON, `deserialize_any`
//! included), with nothing to tokenise or unescape: a string is its bytes.
//! Shared by `build.rs` (which writes it and reads it back) and the loader.
//!
//! What the deserializer hands the visitors is what `serde_json` hands them
//! for the JSON of the same table (an integer >= 0 as `u64`, below 0 as
//! `i64`, strings borrowed, an option always `Some`, an enum a string or a
//! one-entry table): `profile::tests` and `data::builtin_profiles` hold the
//! two to the same documents.

use serde::de::{self, IntoDeserializer, Visitor};

/// `false`.
const FALSE: u8 = 0;
/// `true`.
const TRUE: u8 = 1;
/// An integer: 8 bytes, little-endian two's complement.
const INT: u8 = 2;
/// A float: the 8 bytes of its IEEE 754 bits, little-endian.
const FLOAT: u8 = 3;
/// A string: its length, then its UTF-8 bytes.
const STR: u8 = 4;
/// An array: its length, then each element.
const SEQ: u8 = 5;
/// A table: its length, then each key (length and bytes) and value.
const MAP: u8 = 6;

/// `value` packed (see the module). `Err` for what JSON could not carry
/// either: a date-time, a float that is not finite, a length past `u32`.
#[allow(dead_code)] // Only build.rs and the tests write.
pub fn pack(value: &toml::Value, out: &mut Vec<u8>) -> Result<(), String> {
    fn len(n: usize, out: &mut Vec<u8>) -> Result<(), String> {
        let n = u32::try_from(n).map_err(|_| "a length past u32".to_string())?;
        out.extend_from_slice(&n.to_le_bytes());
        Ok(())
    }
    match value {
        toml::Value::Boolean(b) => out.push(if *b { TRUE } else { FALSE }),
        toml::Value::Integer(i) => {
            out.push(INT);
            out.extend_from_slice(&i.to_le_bytes());
        }
        toml::Value::Float(f) if f.is_finite() => {
            out.push(FLOAT);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        toml::Value::Float(f) => return Err(format!("a float that is not finite: {f}")),
        toml::Value::String(s) => {
            out.push(STR);
            len(s.len(), out)?;
            out.extend_from_slice(s.as_bytes());
        }
        toml::Value::Array(a) => {
            out.push(SEQ);
            len(a.len(), out)?;
            for v in a {
                pack(v, out)?;
            }
        }
        toml::Value::Table(t) => {
            out.push(MAP);
            len(t.len(), out)?;
            for (k, v) in t {
                len(k.len(), out)?;
                out.extend_from_slice(k.as_bytes());
                pack(v, out)?;
            }
        }
        toml::Value::Datetime(d) => return Err(format!("a date-time: {d}")),
    }
    Ok(())
}

/// Reads a `T` from packed bytes (all of them).
pub fn unpack<'de, T: de::Deserialize<'de>>(bytes: &'de [u8]) -> Result<T, de::value::Error> {
    let mut d = Unpacker { rest: bytes };
    let v = T::deserialize(&mut d)?;
    if !d.rest.is_empty() {
        return Err(de::Error::custom("trailing bytes after the packed value"));
    }
    Ok(v)
}

/// The reader: what is left to read.
struct Unpacker<'de> {
    rest: &'de [u8],
}

type Error = de::value::Error;

impl<'de> Unpacker<'de> {
    fn take(&mut self, n: usize) -> Result<&'de [u8], Error> {
        if self.rest.len() < n {
            return Err(de::Error::custom("packed value cut short"));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn byte(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    fn eight(&mut self) -> Result<[u8; 8], Error> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(b)
    }

    fn len(&mut self) -> Result<usize, Error> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(b) as usize)
    }

    fn str(&mut self) -> Result<&'de str, Error> {
        let n = self.len()?;
        std::str::from_utf8(self.take(n)?).map_err(de::Error::custom)
    }

    /// The next tag, not consumed.
    fn peek(&self) -> Result<u8, Error> {
        self.rest
            .first()
            .copied()
            .ok_or_else(|| de::Error::custom("packed value cut short"))
    }
}

impl<'de> de::Deserializer<'de> for &mut Unpacker<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        match self.byte()? {
            FALSE => v.visit_bool(false),
            TRUE => v.visit_bool(true),
            INT => {
                let i = i64::from_le_bytes(self.eight()?);
                // As serde_json reads a JSON number.
                if i >= 0 {
                    v.visit_u64(i as u64)
                } else {
                    v.visit_i64(i)
                }
            }
            FLOAT => v.visit_f64(f64::from_bits(u64::from_le_bytes(self.eight()?))),
            STR => v.visit_borrowed_str(self.str()?),
            // A visitor that stops before the end is an error, as in
            // serde_json (what it left would be read as what follows).
            SEQ => {
                let left = self.len()?;
                let mut items = Items {
                    d: &mut *self,
                    left,
                };
                let value = v.visit_seq(&mut items)?;
                if items.left != 0 {
                    return Err(de::Error::invalid_length(left, &"fewer elements"));
                }
                Ok(value)
            }
            MAP => {
                let left = self.len()?;
                let mut entries = Entries {
                    d: &mut *self,
                    left,
                    value_due: false,
                };
                let value = v.visit_map(&mut entries)?;
                if entries.left != 0 || entries.value_due {
                    return Err(de::Error::invalid_length(left, &"fewer entries"));
                }
                Ok(value)
            }
            t => Err(de::Error::custom(format!("unknown packed tag {t}"))),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        // A table has no null: a value that is there is `Some`.
        v.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, Error> {
        v.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        match self.peek()? {
            STR => {
                self.byte()?;
                let s = self.str()?;
                v.visit_enum(s.into_deserializer())
            }
            MAP => {
                self.byte()?;
                if self.len()? != 1 {
                    return Err(de::Error::custom(
                        "an enum as a table has exactly one entry",
                    ));
                }
                v.visit_enum(Variant { d: self })
            }
            _ => Err(de::Error::custom(
                "an enum is a string or a one-entry table",
            )),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// The elements of an array.
struct Items<'a, 'de> {
    d: &'a mut Unpacker<'de>,
    left: usize,
}

impl<'de> de::SeqAccess<'de> for Items<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.d).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// The entries of a table.
struct Entries<'a, 'de> {
    d: &'a mut Unpacker<'de>,
    left: usize,
    /// A key was read, its value not yet.
    value_due: bool,
}

impl<'de> de::MapAccess<'de> for Entries<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let key = self.d.str()?;
        self.value_due = true;
        seed.deserialize(de::value::BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        self.value_due = false;
        seed.deserialize(&mut *self.d)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// An enum written as a one-entry table: the key names the variant.
struct Variant<'a, 'de> {
    d: &'a mut Unpacker<'de>,
}

impl<'a, 'de> de::EnumAccess<'de> for Variant<'a, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<V: de::DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        let key = self.d.str()?;
        let v = seed.deserialize(de::value::BorrowedStrDeserializer::<Error>::new(key))?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for Variant<'_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        de::Deserialize::deserialize(&mut *self.d)
    }

    fn newtype_variant_seed<T: de::DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(&mut *self.d)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, v: V) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_any(&mut *self.d, v)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_any(&mut *self.d, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tables of every kind of value, nested, as TOML texts.
    const DOCS: &[&str] = &[
        "",
        "a = 1\nb = -2\nc = 0\nd = 9223372036854775807\ne = -9223372036854775808",
        "f = 1.5\ng = -0.0\nh = 1e300\ns = \"x\"\nt = \"\"\nu = \"é\\n\\\"\\\\\\u0001\"",
        "[x]\ny = [1, \"a\", true, [false], { z = 2 }]\n[x.w]\nv = []\n[[q]]\nr = 1\n[[q]]\n",
        "mode = \"ask\"\n[e]\nunit = \"A\"\nnew = { B = 3 }\nstrukt = { C = { k = 1 } }\ntup = { D = [1, 2] }",
    ];

    fn packed(v: &toml::Value) -> Vec<u8> {
        let mut out = Vec::new();
        pack(v, &mut out).expect("packs");
        out
    }

    #[test]
    fn unpacking_reads_what_serde_json_reads_from_the_json() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        enum E {
            A,
            B(u8),
            C { k: i32 },
            D(u8, u8),
        }
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Es {
            unit: E,
            new: E,
            strukt: E,
            tup: E,
        }
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Typed {
            mode: Option<String>,
            e: Option<Es>,
            a: Option<u32>,
            b: Option<i8>,
            f: Option<f32>,
            x: Option<std::collections::BTreeMap<String, serde_json::Value>>,
        }
        for text in DOCS {
            let v = toml::Value::Table(text.parse().expect("toml"));
            let json = serde_json::to_string(&v).expect("json");
            let bytes = packed(&v);
            let a: serde_json::Value = unpack(&bytes).expect("unpacks");
            let b: serde_json::Value = serde_json::from_str(&json).expect("json");
            assert_eq!(a, b, "{text}");
            let a = unpack::<Typed>(&bytes).map_err(|e| e.to_string());
            let b = serde_json::from_str::<Typed>(&json).map_err(|e| e.to_string());
            assert_eq!(a.is_ok(), b.is_ok(), "{text}: {a:?} {b:?}");
            assert_eq!(a.ok(), b.ok(), "{text}");
            let back: toml::Value = unpack(&bytes).expect("unpacks as toml");
            assert_eq!(back, v, "{text}");
        }
    }

    #[test]
    fn damaged_bytes_are_an_error_not_a_panic() {
        let v = toml::Value::Table(DOCS[3].parse().expect("toml"));
        let bytes = packed(&v);
        for cut in 0..bytes.len() {
            assert!(unpack::<serde_json::Value>(&bytes[..cut]).is_err(), "{cut}");
        }
        let mut more = bytes.clone();
        more.push(FALSE);
        assert!(unpack::<serde_json::Value>(&more).is_err());
        for i in 0..bytes.len() {
            for b in [0u8, 7, 0xff] {
                let mut x = bytes.clone();
                x[i] = b;
                let _ = unpack::<serde_json::Value>(&x);
            }
        }
    }

    #[test]
    fn what_json_cannot_carry_is_refused() {
        let mut out = Vec::new();
        assert!(pack(&toml::Value::Float(f64::NAN), &mut out).is_err());
        let dt: toml::Table = "d = 1979-05-27".parse().expect("toml");
        assert!(pack(&toml::Value::Table(dt), &mut out).is_err());
    }
}
