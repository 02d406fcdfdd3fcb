//! Compliance against python jmespath 1.1.0 (expectations recorded by
//! `testdata/make_compliance.py`), plus targeted unit tests.

use super::*;
use crate::json;
use crate::py::num::PyNum;
use crate::value::Value;

/// Equality that also distinguishes what Python distinguishes: object key
/// order, int vs float, and the sign of a float zero.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (PyNum::from_number(x), PyNum::from_number(y)) {
                (PyNum::Int(p), PyNum::Int(q)) => p == q,
                (PyNum::Float(p), PyNum::Float(q)) => p.to_bits() == q.to_bits(),
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2))
        }
        _ => a == b,
    }
}

/// Replaces the (invented) address in `<... object at 0x...>` with `0x?`.
fn normalize_addresses(v: &Value) -> Value {
    match v {
        Value::String(s) => {
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(i) = rest.find("object at 0x") {
                out.push_str(&rest[..i + 12]);
                out.push('?');
                rest = rest[i + 12..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(normalize_addresses).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), normalize_addresses(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[test]
fn compliance_with_python() {
    let groups: Value =
        crate::value::from_str(include_str!("testdata/compliance.json")).expect("valid test data");
    let mut failures = Vec::new();
    let mut total = 0;
    for group in groups.as_array().expect("array of groups") {
        let given = &group["given"];
        for case in group["cases"].as_array().expect("cases") {
            total += 1;
            let expr = case["expression"].as_str().expect("expression");
            let compiled = Expression::compile(expr);
            let outcome = compiled
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|e| e.search(given));
            let ok = match case.get("phase").and_then(Value::as_str) {
                None => matches!(&outcome, Ok(v) if same(v, &case["result"])),
                Some("address") => {
                    matches!(&outcome, Ok(v) if same(&normalize_addresses(v), &case["result"]))
                }
                Some("compile") => compiled.is_err(),
                Some("search") => compiled.is_ok() && outcome.is_err(),
                Some(_) => outcome.is_err(),
            };
            if !ok {
                failures.push(format!(
                    "{expr:?} on {given}\n  python: {}\n  rust:   {outcome:?}",
                    case.get("result")
                        .map_or_else(|| case["error"].to_string(), Value::to_string)
                ));
            }
        }
    }
    assert!(
        total > 1000,
        "compliance file looks truncated: {total} cases"
    );
    assert!(
        failures.is_empty(),
        "{} of {total} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn run(expr: &str, data: Value) -> Result<Value, JmesError> {
    Expression::compile(expr)?.search(&data)
}

#[test]
fn keeps_key_order_of_multi_select_hash_and_data() {
    let out = run("{z: a, a: z, m: @}", json!({"z": 1, "a": 2})).unwrap();
    assert_eq!(out.to_string(), r#"{"z":2,"a":1,"m":{"z":1,"a":2}}"#);
}

#[test]
fn big_integers_survive() {
    let data: Value = crate::value::from_str(r#"{"n": 123456789012345678901234567890}"#).unwrap();
    let out = Expression::compile("[n, sum([n, n]), abs(n)]")
        .unwrap()
        .search(&data)
        .unwrap();
    assert_eq!(
        out.to_string(),
        "[123456789012345678901234567890,246913578024691357802469135780,123456789012345678901234567890]"
    );
}

#[test]
fn errors_carry_positions() {
    let e = Expression::compile("foo[").unwrap_err();
    assert_eq!(e.offset, Some(4));
    assert!(e.message.contains("Incomplete expression"), "{e}");
    let e = Expression::compile("a = b").unwrap_err();
    assert_eq!(e.offset, Some(2));
    let e = Expression::compile("").unwrap_err();
    assert_eq!(e.offset, None);
    let e = run("abs('x')", Value::Null).unwrap_err();
    assert_eq!(
        e.message,
        "In function abs(), invalid type for value: x, expected one of: ['number'], received: \"string\""
    );
    let e = run("abs(`1`, `2`)", Value::Null).unwrap_err();
    assert_eq!(
        e.message,
        "Expected 1 argument for function abs(), received 2"
    );
}

#[test]
fn ast_is_inspectable() {
    let e = Expression::compile("a.b").unwrap();
    assert_eq!(e.source(), "a.b");
    assert_eq!(
        e.ast(),
        &Ast::Subexpression(vec![Ast::Field("a".into()), Ast::Field("b".into())])
    );
    let e = Expression::compile("[*].x").unwrap();
    assert_eq!(
        e.ast(),
        &Ast::Projection {
            left: Box::new(Ast::Current),
            right: Box::new(Ast::Field("x".into()))
        }
    );
}

#[test]
fn expression_is_send_sync() {
    fn check<T: Send + Sync + Clone + std::fmt::Debug>() {}
    check::<Expression>();
}

/// Deep nesting is rejected at compile time and whatever compiles evaluates
/// within a small (2 MiB) thread stack.
#[test]
fn nesting_is_bounded() {
    let d = parser::MAX_DEPTH;
    let exprs: Vec<String> = vec![
        format!("{}a{}", "(".repeat(d + 5), ")".repeat(d + 5)),
        format!("{}a", "!".repeat(d + 5)),
        format!("a{}", "[*].a".repeat(d + 5)),
        format!("{}a{}", "[".repeat(d + 5), "]".repeat(d + 5)),
        format!("{}a{}", "abs(".repeat(d + 5), ")".repeat(d + 5)),
        format!("a{}", "|a".repeat(100_000)),
        format!("a{}", "||a".repeat(100_000)),
        format!("a{}", " == a".repeat(100_000)),
        format!("a{}", "[].a".repeat(100_000)),
        format!("a{}", "[]".repeat(100_000)),
        format!("`{}`", "[".repeat(100_000)),
    ];
    for e in &exprs {
        assert!(Expression::compile(e).is_err(), "accepted {}...", &e[..40]);
    }
    let ok: Vec<String> = vec![
        format!("{}a", "!".repeat(d - 2)),
        format!("a{}", "[*].a".repeat(d / 3)),
        format!("{}a{}", "[".repeat(d - 2), "]".repeat(d - 2)),
        format!("{}a{}", "{a: ".repeat(d - 2), "}".repeat(d - 2)),
        format!("{}a{}", "abs(".repeat(d - 2), ")".repeat(d - 2)),
        format!("a{}", "|a".repeat(d - 2)),
        format!("a{}", "[0].a".repeat(10_000)),
        format!("a{}", "[].a".repeat(d / 2 - 2)),
        format!("{}a", "& ".repeat(d - 2)),
        format!("`{}{}`", "[".repeat(500), "]".repeat(500)),
    ];
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            for e in &ok {
                let c = Expression::compile(e).unwrap_or_else(|err| panic!("{err}"));
                let _ = c.search(&json!({"a": {"a": [1]}}));
                let _ = format!("{c:?}");
                drop(c.clone());
            }
        })
        .unwrap();
    handle.join().unwrap();
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn data() -> Value {
        json!({"a": [1, 2.5, "x", null, true, {"b": [[]]}], "b": {"c": "d"}, "n": -3})
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        /// Arbitrary text never panics.
        #[test]
        fn arbitrary_text_never_panics(s in "\\PC{0,40}") {
            if let Ok(e) = Expression::compile(&s) {
                let _ = e.search(&data());
            }
        }

        /// Token soup from the grammar's alphabet never panics.
        #[test]
        fn token_soup_never_panics(parts in proptest::collection::vec(prop::sample::select(vec![
            "a", "b", "n", ".", "*", "[", "]", "[]", "[?", ",", ":", "@", "(", ")", "{", "}", "|", "||",
            "&&", "&", "!", "==", "!=", "<", "<=", ">", ">=", "`1`", "`\"s\"`", "`[1,2]`", "'r'", "0",
            "-1", "2", "abs", "length", "sort_by", "max_by", "merge", "to_string", "map", "keys", " ",
            "\"q\"", "not_null", "sum", "avg", "to_number", "contains", "join", "reverse", "sort",
        ]), 0..16)) {
            let s: String = parts.concat();
            if let Ok(e) = Expression::compile(&s) {
                let _ = e.search(&data());
            }
        }
    }
}

/// `search_owned` moves the data through the tool-call wrapping shapes and must give exactly
/// what `search` gives (the interpreter, checked against python jmespath's compliance suite) for
/// every kind of data, and fall back to `search` for anything else.
#[test]
fn search_owned_equals_search() {
    let expressions = [
        "{type: 'function', function: @}",
        "[@][].{type: 'function', function: @}",
        "[].{type: 'function', function: @}",
        "{a: @, b: @, c: `[1, {\"x\": 2}]`}",
        "{a: @, a: 'dup'}",
        "[@][].merge(id && {id: id} || `{}`, {type: 'function', function: @})",
        "{type: 'function', function: merge(@, {arguments: parameters || arguments || `{}`})}",
        "[*].{type: 'function', function: {name: tool_name, arguments: parameters}}",
        "[@][].{f: name}",
        "[0][].{f: @}",
    ];
    let data = [
        json!(null),
        json!(true),
        json!(0),
        json!(1.5),
        json!("text"),
        json!([]),
        json!({}),
        json!({"name": "f", "arguments": {"x": 1}}),
        json!({"id": "c1", "name": "f", "parameters": {"x": [1, 2]}}),
        json!([{"name": "f"}, null, [{"name": "g"}, [1]], 3, {"tool_name": "t", "parameters": {}}]),
        json!([[null], null, []]),
    ];
    let moving = expressions
        .iter()
        .filter(|s| Expression::compile(s).unwrap().moves_data())
        .count();
    assert_eq!(moving, 4, "the first four expressions take the owned path");
    for source in expressions {
        let expr = Expression::compile(source).unwrap();
        for d in &data {
            let want = expr.search(d);
            let got = expr.search_owned(d.clone());
            match (&want, &got) {
                (Ok(a), Ok(b)) => assert!(same(a, b), "{source} on {d}: {a} vs {b}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{source} on {d}: {want:?} vs {got:?}"),
            }
        }
    }
}
