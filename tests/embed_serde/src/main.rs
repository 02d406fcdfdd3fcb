//! The application's own serde code behaves as serde documents it, with chatparse in the build;
//! and chatparse still keeps key order and exact big integers, in its own value type.

use std::collections::HashMap;

use serde::Deserialize;

#[derive(Debug, Deserialize, PartialEq)]
#[serde(untagged)]
enum Num {
    F(f64),
    S(String),
}

#[derive(Debug, Deserialize)]
struct Rates {
    name: String,
    #[serde(flatten)]
    rates: HashMap<String, f64>,
}

fn main() {
    // 1. An untagged enum reads a float (under `arbitrary_precision`: "data did not match any
    //    variant of untagged enum Num").
    let n: Num = serde_json::from_str("1.5").expect("untagged enum reads 1.5");
    assert_eq!(n, Num::F(1.5));

    // 2. A flattened map of floats (under `arbitrary_precision`: "invalid type: map").
    let r: Rates = serde_json::from_str(r#"{"name": "eur", "usd": 1.08, "gbp": 0.85}"#)
        .expect("flattened HashMap<String, f64> reads numbers");
    assert_eq!(r.name, "eur");
    assert_eq!(r.rates["usd"], 1.08);

    // 3. serde_json's Map is sorted, as documented without `preserve_order`.
    let v: serde_json::Value = serde_json::from_str(r#"{"b": 1, "a": 2}"#).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["a", "b"], "serde_json::Map iterates in sorted order");

    // 4. chatparse still gives the reference's values: schema order, then input order, and a big
    //    integer digit for digit, in its own Value.
    let schema = chatparse::Schema::from_json_str(
        r#"{"type": "object", "properties": {
            "name": {"type": "string", "x-regex": "<call>(\\w+)"},
            "arguments": {"x-regex": "<call>\\w+ (.*)</call>", "x-parser": "json"}
        }}"#,
    )
    .unwrap();
    let message = schema
        .parse(r#"<call>f {"z": 123456789012345678901234567890, "a": [1.0, 2]}</call>"#)
        .unwrap();
    let text = r#"{"name":"f","arguments":{"z":123456789012345678901234567890,"a":[1.0,2]}}"#;
    assert_eq!(message.to_string(), text);
    assert_eq!(serde_json::to_string(&message).unwrap(), text);
    assert_eq!(
        message["arguments"]["z"].to_string(),
        "123456789012345678901234567890"
    );

    // 5. Converting to serde_json is available (its map sorts, as the application expects).
    let theirs = serde_json::Value::from(message);
    assert_eq!(theirs["arguments"]["a"][1], 2);

    println!(
        "embed-serde: the application's serde is unchanged; chatparse keeps order and big ints"
    );
}
