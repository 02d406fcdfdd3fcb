use super::*;
use crate::json;

#[test]
fn order_and_big_integers_survive_parse_and_print() {
    let text = r#"{"z":1,"a":[123456789012345678901234567890,-98765432109876543210987654321,1.5,1e+300,-0.0],"m":{"y":null,"b":true}}"#;
    let v = from_str(text).unwrap();
    assert_eq!(
        v.to_string(),
        r#"{"z":1,"a":[123456789012345678901234567890,-98765432109876543210987654321,1.5,1e+300,-0.0],"m":{"y":null,"b":true}}"#
    );
    assert_eq!(serde_json::to_string(&v).unwrap(), v.to_string());
    assert_eq!(to_string_pretty(&v), format!("{v:#}"));
}

#[test]
fn printing_matches_serde_json() {
    let v = json!({"s": "\u{0}\u{1f}\"\\\n\t\u{7f}é\u{2028}", "f": [0.1, 1.0, 1e-7, 12345678.9, 1e21, -2.5], "e": [], "o": {}, "n": [[], {}, [1]]});
    let theirs: serde_json::Value = serde_json::Value::from(&v);
    // serde_json's map sorts without preserve_order; compare on a single-key layout instead.
    for (k, inner) in v.as_object().unwrap() {
        let t = &theirs[k.as_str()];
        assert_eq!(inner.to_string(), serde_json::to_string(t).unwrap());
        assert_eq!(
            to_string_pretty(inner),
            serde_json::to_string_pretty(t).unwrap()
        );
    }
}

#[test]
fn integers_at_every_width() {
    for text in [
        "0",
        "-1",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "340282366920938463463374607431768211456",
        "-170141183460469231731687303715884105729",
    ] {
        let v = from_str(text).unwrap();
        assert_eq!(v.to_string(), text);
        assert_eq!(serde_json::to_string(&v).unwrap(), text);
        assert!(v.as_number().unwrap().is_integer());
        assert_eq!(Value::Number(Number::from_integer_str(text).unwrap()), v);
    }
    assert_ne!(json!(1), json!(1.0));
    assert_eq!(json!(u64::MAX), from_str("18446744073709551615").unwrap());
}

#[test]
fn equality_ignores_key_order_and_indexing_works() {
    let a = json!({"a": 1, "b": [1, {"c": null}]});
    let b = json!({"b": [1, {"c": null}], "a": 1});
    assert_eq!(a, b);
    assert_ne!(a, json!({"a": 1}));
    assert_eq!(a["b"][1]["c"], Value::Null);
    assert_eq!(a["missing"][3], Value::Null);
    assert_eq!(a.pointer("/b/1"), Some(&json!({"c": null})));
    let mut m = a.clone();
    m["new"] = json!("x");
    assert_eq!(m["new"], "x");
    assert_eq!(m.as_object().unwrap().keys().next_back().unwrap(), "new");
}

#[test]
fn serde_round_trip_keeps_order() {
    let v = json!({"z": [1, 2.5, "x"], "a": {"q": false}});
    let text = serde_json::to_string(&v).unwrap();
    let back: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(back.to_string(), v.to_string());
    let t: serde_json::Value = v.clone().into();
    assert_eq!(Value::from(t), v);
}

/// Builds `depth` levels of `[[…]]` or `{"k":{…}}` around `1` without recursion.
fn deep(depth: usize, object: bool) -> Value {
    let mut v = json!(1);
    for _ in 0..depth {
        v = if object {
            let mut m = Map::new();
            m.insert("k".into(), v);
            Value::Object(m)
        } else {
            Value::Array(vec![v])
        };
    }
    v
}

#[test]
fn deep_values_cost_no_stack() {
    // A 64 KB stack, far below what 100 000 recursive frames would need. Objects: everything is
    // iterative. Arrays: everything but the drop, which is Rust's own `Vec` drop (one frame chain
    // per level); the 994 levels the parser accepts are checked at 256 KB in tests/deep.rs.
    std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(|| {
            for object in [false, true] {
                let v = deep(100_000, object);
                let c = v.clone();
                assert!(c == v);
                let text = v.to_string();
                assert_eq!(text.len(), c.to_string().len());
                let shallower = deep(3000, object);
                let _ = format!("{shallower:#}");
                let _ = format!("{v:?}");
                if object {
                    drop((v, c, shallower));
                } else {
                    std::mem::forget((v, c, shallower));
                }
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

/// Objects copied past the recursive clone's depth (the iterative copy) keep their keys, order
/// and lookups, small ones and those with an index (more than eight keys) alike.
#[test]
fn deep_wide_objects_clone_with_their_keys() {
    for width in [1, 3, 8, 9, 20] {
        let mut v = json!("leaf");
        for level in 0..80 {
            let mut m = Map::new();
            for i in (0..width).rev() {
                m.insert(format!("k{level}_{i}"), json!(i));
            }
            m.insert("next".into(), v);
            v = Value::Object(m);
        }
        let c = v.clone();
        assert!(c == v);
        assert_eq!(c.to_string(), v.to_string());
        let mut at = &c;
        for level in (0..80).rev() {
            let m = at.as_object().unwrap();
            assert_eq!(m.len(), width + 1);
            for i in 0..width {
                assert_eq!(m.get(&format!("k{level}_{i}")), Some(&json!(i)));
            }
            assert_eq!(m.keys().next_back().map(String::as_str), Some("next"));
            at = &m["next"];
        }
        assert_eq!(at, &json!("leaf"));
    }
}

#[test]
fn serde_output_is_the_same_beyond_the_serde_depth() {
    for object in [false, true] {
        let v = deep(SERDE_DEPTH * 3, object);
        assert_eq!(serde_json::to_string(&v).unwrap(), v.to_string());
        let wrapped = json!({"a": [v.clone()], "b": 1.5});
        assert_eq!(
            serde_json::to_string(&wrapped).unwrap(),
            wrapped.to_string()
        );
        assert_eq!(to_value(&wrapped).unwrap(), wrapped);
        std::mem::forget((v, wrapped));
    }
}

#[test]
fn to_value_builds_what_serde_json_writes() {
    #[derive(serde::Serialize)]
    enum E {
        Unit,
        New(u8),
        Tuple(u8, bool),
        Struct { a: char },
    }
    #[derive(serde::Serialize)]
    struct S<'a> {
        z: Option<&'a str>,
        big: Value,
        deep: Value,
        ints: std::collections::BTreeMap<i32, f64>,
        e: Vec<E>,
        bytes: &'a [u8],
        nan: f64,
    }
    let s = S {
        z: None,
        big: from_str(&format!("[{0}, -{0}]", "9".repeat(60))).unwrap(),
        deep: deep(SERDE_DEPTH * 2, false),
        ints: [(2, 1.5), (-1, 2.0)].into_iter().collect(),
        e: vec![E::Unit, E::New(1), E::Tuple(2, true), E::Struct { a: 'x' }],
        bytes: b"ab",
        nan: f64::NAN,
    };
    let v = to_value(&s).unwrap();
    assert_eq!(v.to_string(), serde_json::to_string(&s).unwrap());
    assert_eq!(v["big"], s.big);
    assert_eq!(v["deep"], s.deep);
    std::mem::forget((v, s));
}

#[test]
fn numbers_from_an_arbitrary_precision_serde_json_stay_exact() {
    // What a serde_json built with `arbitrary_precision` (by another crate of the build) hands
    // a Deserialize impl for a number: a one-entry map of its text.
    let digits = "1234567890123456789012345678901";
    let v: Value = serde_json::from_str(&format!(
        r#"[{{"$serde_json::private::Number": "{digits}"}}, {{"$serde_json::private::Number": "1.0"}}]"#
    ))
    .unwrap();
    assert_eq!(v.to_string(), format!("[{digits},1.0]"));
    let theirs: serde_json::Number = serde_json::from_str("12345678901234567890123").unwrap();
    assert_eq!(Number::from(&theirs).to_string(), theirs.to_string());
}

/// A value's size is paid by every array item and map entry. A map is its entries (a `Vec`)
/// and an index that only maps of more than eight entries have (one pointer), so a value is
/// 32 bytes (56 with an `IndexMap` and a zero-sized hasher, 72 with `RandomState`, as
/// `serde_json`'s `preserve_order` value).
#[test]
fn value_size() {
    assert_eq!(std::mem::size_of::<super::Map>(), 32);
    assert_eq!(std::mem::size_of::<Value>(), 32);
}

/// One operation on a map, for [`maps_behave_as_insertion_ordered_dicts`].
#[derive(Debug, Clone)]
enum MapOp {
    Insert(usize, i64),
    Remove(usize),
    ShiftRemove(usize),
    Move(usize, usize),
    RetainEven,
    Truncate(usize),
    InsertAt(usize, usize, i64),
    Entry(usize, i64),
}

fn map_op() -> impl proptest::strategy::Strategy<Value = MapOp> {
    use proptest::prelude::*;
    let key = 0..24usize;
    prop_oneof![
        6 => (key.clone(), any::<i64>()).prop_map(|(k, v)| MapOp::Insert(k, v)),
        2 => key.clone().prop_map(MapOp::Remove),
        2 => key.clone().prop_map(MapOp::ShiftRemove),
        1 => (0..24usize, 0..24usize).prop_map(|(a, b)| MapOp::Move(a, b)),
        1 => Just(MapOp::RetainEven),
        1 => (0..24usize).prop_map(MapOp::Truncate),
        1 => (0..24usize, key.clone(), any::<i64>()).prop_map(|(i, k, v)| MapOp::InsertAt(i, k, v)),
        1 => (key, any::<i64>()).prop_map(|(k, v)| MapOp::Entry(k, v)),
    ]
}

proptest::proptest! {
    /// Small maps (no index) and large ones (an index, built past eight entries and dropped
    /// below) behave as the model every operation is documented by: a list of entries in
    /// insertion order, a key replaced in place, `remove` moving the last entry into the
    /// removed one's place, `shift_remove` keeping the order; every key present is found and
    /// no other.
    #[test]
    fn maps_behave_as_insertion_ordered_dicts(ops in proptest::collection::vec(map_op(), 0..120)) {
        let name = |k: usize| format!("key{k}");
        let mut map = Map::new();
        let mut model: Vec<(String, i64)> = Vec::new();
        for op in ops {
            match op {
                MapOp::Insert(k, v) => {
                    let old = map.insert(name(k), Value::from(v));
                    let at = model.iter().position(|(m, _)| *m == name(k));
                    let expected = at.map(|i| std::mem::replace(&mut model[i].1, v));
                    if at.is_none() {
                        model.push((name(k), v));
                    }
                    proptest::prop_assert_eq!(old, expected.map(Value::from));
                }
                MapOp::Remove(k) => {
                    let old = map.remove(name(k).as_str());
                    let expected = model
                        .iter()
                        .position(|(m, _)| *m == name(k))
                        .map(|i| model.swap_remove(i).1);
                    proptest::prop_assert_eq!(old, expected.map(Value::from));
                }
                MapOp::ShiftRemove(k) => {
                    let old = map.shift_remove(name(k).as_str());
                    let expected = model
                        .iter()
                        .position(|(m, _)| *m == name(k))
                        .map(|i| model.remove(i).1);
                    proptest::prop_assert_eq!(old, expected.map(Value::from));
                }
                MapOp::Move(from, to) => {
                    if from < model.len() && to < model.len() {
                        map.move_index(from, to);
                        let entry = model.remove(from);
                        model.insert(to, entry);
                    }
                }
                MapOp::RetainEven => {
                    map.retain(|_, v| v.as_i64().is_some_and(|n| n % 2 == 0));
                    model.retain(|(_, n)| n % 2 == 0);
                }
                MapOp::Truncate(len) => {
                    map.truncate(len);
                    model.truncate(len);
                }
                MapOp::InsertAt(i, k, v) => {
                    if i <= model.len() && !model.iter().any(|(m, _)| *m == name(k)) {
                        map.insert_new_at(i, name(k), Value::from(v));
                        model.insert(i, (name(k), v));
                    }
                }
                MapOp::Entry(k, v) => {
                    *map.entry(name(k)).or_insert(Value::from(v)) = Value::from(v ^ 1);
                    match model.iter().position(|(m, _)| *m == name(k)) {
                        Some(i) => model[i].1 = v ^ 1,
                        None => model.push((name(k), v ^ 1)),
                    }
                }
            }
            let entries: Vec<(String, Value)> =
                map.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let expected: Vec<(String, Value)> =
                model.iter().map(|(k, v)| (k.clone(), Value::from(*v))).collect();
            proptest::prop_assert_eq!(entries, expected);
            for k in 0..24 {
                let at = model.iter().position(|(m, _)| *m == name(k));
                proptest::prop_assert_eq!(map.index_of(&name(k)), at);
                proptest::prop_assert_eq!(map.get(name(k).as_str()).is_some(), at.is_some());
            }
        }
    }
}

/// A copy is recursive for the first containers and iterative below (see `Value::clone`): at
/// every depth across the switch, objects keep their key order and every key stays found.
#[test]
fn clones_keep_order_and_keys_at_every_depth() {
    for depth in [0, 1, 31, 32, 33, 100, 5_000] {
        let mut value = json!({"z": 1, "a": [true, null, "s"], "m": {"y": 2.5, "b": "x"}});
        for level in 0..depth {
            value = if level % 2 == 0 {
                json!({"k": value, "first": level})
            } else {
                json!([level, value])
            };
        }
        let copy = value.clone();
        assert_eq!(copy.to_string(), value.to_string(), "depth {depth}");
        let mut inner = &copy;
        loop {
            inner = match inner {
                Value::Object(m) if m.contains_key("k") => &m["k"],
                Value::Array(a) => &a[1],
                _ => break,
            };
        }
        assert_eq!(inner["m"]["b"], json!("x"), "depth {depth}");
        assert_eq!(
            inner.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["z", "a", "m"]
        );
    }
}
