//! Which spec a `spec` argument names, loaded once.
//!
//! transformers passes the same schema or template dict on every call (`tokenizer.response_schema`),
//! and loading one (validating it, compiling its regexes) costs far more than parsing a short
//! message. Loaded specs are cached:
//! - a `dict` by identity, with a snapshot of its contents: the cache keeps the dict alive (so its
//!   `id` cannot be reused) and reuses the loaded spec only while the dict still equals the
//!   snapshot exactly (same key order, same types; a mutated dict is loaded again);
//! - JSON text by its content, shipped names by name (both immutable);
//! - a `chatparse.Spec` is already loaded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use chatparse_runtime::{Format, ResponseTemplate, Schema, SchemaError, Spec};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

use crate::convert::{self, Strictness};
use crate::errors;

/// How many dict specs (and, separately, JSON texts) stay loaded.
const CACHE_SIZE: usize = 32;

/// What a shipped name means when both a schema and a template have it (`qwen3`, `qwen3_5`,
/// `gemma4`): as the CLI, parsing prefers the x-regex schema and streaming the template.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Prefer {
    Schema,
    Template,
}

/// A loaded spec as Python sees it (`chatparse.Spec`).
#[pyclass(name = "Spec", module = "chatparse", frozen)]
pub struct PySpec {
    pub spec: Arc<Spec>,
}

struct DictEntry {
    original: Py<PyAny>,
    snapshot: Py<PyAny>,
    spec: Arc<Spec>,
}

fn dict_cache() -> &'static Mutex<Vec<DictEntry>> {
    static CACHE: OnceLock<Mutex<Vec<DictEntry>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Vec::new()))
}

fn text_cache() -> &'static Mutex<HashMap<String, Arc<Spec>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Spec>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

type NameCache = Mutex<HashMap<(String, Prefer), Arc<Spec>>>;

fn name_cache() -> &'static NameCache {
    static CACHE: OnceLock<NameCache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Empties the caches (`chatparse.clear_cache()`).
pub fn clear() {
    if let Ok(mut c) = dict_cache().lock() {
        c.clear();
    }
    if let Ok(mut c) = text_cache().lock() {
        c.clear();
    }
    if let Ok(mut c) = name_cache().lock() {
        c.clear();
    }
}

/// The spec a `spec` argument stands for.
pub fn resolve(py: Python<'_>, spec: &Bound<'_, PyAny>, prefer: Prefer) -> PyResult<Arc<Spec>> {
    if let Ok(loaded) = spec.cast::<PySpec>() {
        return Ok(loaded.get().spec.clone());
    }
    if let Ok(text) = spec.cast::<PyString>() {
        let text = text.to_str()?;
        if text.trim_start().starts_with('{') {
            return from_text(py, text);
        }
        return by_name(py, text, prefer);
    }
    if spec.is_exact_instance_of::<PyDict>() {
        return from_dict(py, spec);
    }
    if spec.is_instance_of::<PyDict>() || spec.is_instance_of::<PyList>() {
        // Not cached (a dict subclass may compare in its own way); loaded every call.
        let value = convert::from_py(spec, Strictness::Strict)?;
        return load_value(py, value, "<dict>");
    }
    if let Some(value) = transformers_template_source(spec)? {
        return load_value(py, value, "<ResponseTemplate>");
    }
    Err(PyTypeError::new_err(format!(
        "spec must be a dict (a response schema or template), its JSON text, a shipped name or a \
         chatparse.Spec, not {}",
        spec.get_type().name()?
    )))
}

/// A transformers `ResponseTemplate` object (what its `load_response_template` returns) carries
/// the dict it was loaded from.
fn transformers_template_source(spec: &Bound<'_, PyAny>) -> PyResult<Option<Value>> {
    let ty = spec.get_type();
    if ty.name()?.to_str()? != "ResponseTemplate" {
        return Ok(None);
    }
    for attr in ["raw", "spec", "source"] {
        if let Ok(raw) = spec.getattr(attr) {
            if raw.is_instance_of::<PyDict>() {
                return convert::from_py(&raw, Strictness::Strict).map(Some);
            }
        }
    }
    Ok(None)
}

fn load_value(py: Python<'_>, value: Value, source_name: &str) -> PyResult<Arc<Spec>> {
    let loaded = py.detach(|| -> Result<Spec, SchemaError> {
        Ok(match Format::of(&value) {
            Format::Schema => Spec::from(Schema::from_value_named(value, source_name)?),
            Format::Template => Spec::from(ResponseTemplate::from_value_named(value, source_name)?),
        })
    });
    loaded
        .map(Arc::new)
        .map_err(|e| errors::schema_error(py, &e))
}

fn from_text(py: Python<'_>, text: &str) -> PyResult<Arc<Spec>> {
    if let Some(spec) = text_cache().lock().ok().and_then(|c| c.get(text).cloned()) {
        return Ok(spec);
    }
    let loaded = py
        .detach(|| Spec::from_json_str(text))
        .map(Arc::new)
        .map_err(|e| errors::schema_error(py, &e))?;
    if let Ok(mut cache) = text_cache().lock() {
        if cache.len() >= CACHE_SIZE {
            cache.clear();
        }
        cache.insert(text.to_owned(), loaded.clone());
    }
    Ok(loaded)
}

fn by_name(py: Python<'_>, name: &str, prefer: Prefer) -> PyResult<Arc<Spec>> {
    let key = (name.to_owned(), prefer);
    if let Some(spec) = name_cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(spec);
    }
    // `schemas/NAME` and `response_templates/NAME` (with or without `.json`) name one kind.
    let bare = name.strip_suffix(".json").unwrap_or(name);
    let (bare, only) = if let Some(n) = bare.strip_prefix("schemas/") {
        (n, Some(Prefer::Schema))
    } else if let Some(n) = bare.strip_prefix("response_templates/") {
        (n, Some(Prefer::Template))
    } else {
        (bare, None)
    };
    let schema = || chatparse::shipped::text(bare).map(|t| (t, format!("schemas/{bare}.json")));
    let template =
        || chatparse::templates::text(bare).map(|t| (t, format!("response_templates/{bare}.json")));
    let found = match (only, prefer) {
        (Some(Prefer::Schema), _) => schema(),
        (Some(Prefer::Template), _) => template(),
        (None, Prefer::Schema) => schema().or_else(template),
        (None, Prefer::Template) => template().or_else(schema),
    };
    let Some((text, source)) = found else {
        return Err(PyValueError::new_err(format!(
            "no shipped schema or template named {name:?} (schemas: {}; templates: {}); a spec \
             string that is not a name must be JSON text starting with '{{'",
            chatparse::shipped::names().collect::<Vec<_>>().join(", "),
            chatparse::templates::names().collect::<Vec<_>>().join(", "),
        )));
    };
    let loaded = py
        .detach(|| Spec::from_json_str_named(text, &source))
        .map(Arc::new)
        .map_err(|e| errors::schema_error(py, &e))?;
    if let Ok(mut cache) = name_cache().lock() {
        cache.insert(key, loaded.clone());
    }
    Ok(loaded)
}

fn from_dict(py: Python<'_>, dict: &Bound<'_, PyAny>) -> PyResult<Arc<Spec>> {
    if let Ok(cache) = dict_cache().lock() {
        if let Some(entry) = cache.iter().find(|e| e.original.is(dict)) {
            if same(dict, entry.snapshot.bind(py))? {
                return Ok(entry.spec.clone());
            }
        }
    }
    let value = convert::from_py(dict, Strictness::Strict)?;
    let spec = load_value(py, value, "<dict>")?;
    if let Some(snapshot) = snapshot(py, dict)? {
        if let Ok(mut cache) = dict_cache().lock() {
            cache.retain(|e| !e.original.is(dict));
            if cache.len() >= CACHE_SIZE {
                cache.remove(0);
            }
            cache.push(DictEntry {
                original: dict.clone().unbind(),
                snapshot,
                spec: spec.clone(),
            });
        }
    }
    Ok(spec)
}

/// Whether `obj` is a leaf that never changes (so a snapshot may share it).
fn is_immutable_leaf(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_none()
        || obj.is_exact_instance_of::<PyString>()
        || obj.is_exact_instance_of::<PyInt>()
        || obj.is_exact_instance_of::<PyFloat>()
        || obj.is_exact_instance_of::<PyBool>()
}

/// A copy of a spec's containers that shares its immutable leaves; `None` when it holds
/// anything else (such a spec is not cached).
fn snapshot(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
    fn copy<'py>(obj: &Bound<'py, PyAny>, depth: usize) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = obj.py();
        if depth > 512 {
            return Ok(None);
        }
        if is_immutable_leaf(obj) {
            return Ok(Some(obj.clone()));
        }
        if obj.is_exact_instance_of::<PyDict>() {
            let out = PyDict::new(py);
            for (k, v) in obj.cast::<PyDict>()?.iter() {
                if !k.is_exact_instance_of::<PyString>() {
                    return Ok(None);
                }
                let Some(v) = copy(&v, depth + 1)? else {
                    return Ok(None);
                };
                out.set_item(k, v)?;
            }
            return Ok(Some(out.into_any()));
        }
        if obj.is_exact_instance_of::<PyList>() || obj.is_exact_instance_of::<PyTuple>() {
            let mut items = Vec::new();
            for item in obj.try_iter()? {
                let Some(item) = copy(&item?, depth + 1)? else {
                    return Ok(None);
                };
                items.push(item);
            }
            return Ok(Some(if obj.is_exact_instance_of::<PyList>() {
                PyList::new(py, items)?.into_any()
            } else {
                PyTuple::new(py, items)?.into_any()
            }));
        }
        Ok(None)
    }
    let _ = py;
    Ok(copy(obj, 0)?.map(Bound::unbind))
}

/// Whether `current` still equals its `snapshot` exactly: the same containers in the same order,
/// leaves of the same types with equal values.
fn same(current: &Bound<'_, PyAny>, snapshot: &Bound<'_, PyAny>) -> PyResult<bool> {
    if current.is(snapshot) {
        return Ok(true); // a shared immutable leaf, untouched
    }
    if !current.get_type().is(snapshot.get_type()) {
        return Ok(false);
    }
    if let Ok(snap) = snapshot.cast::<PyDict>() {
        let cur = current.cast::<PyDict>()?;
        if cur.len() != snap.len() {
            return Ok(false);
        }
        for ((ck, cv), (sk, sv)) in cur.iter().zip(snap.iter()) {
            if !(ck.is(&sk) || (ck.get_type().is(sk.get_type()) && ck.eq(&sk)?)) {
                return Ok(false);
            }
            if !same(&cv, &sv)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    if let Ok(snap) = snapshot.cast::<PyList>() {
        let cur = current.cast::<PyList>()?;
        if cur.len() != snap.len() {
            return Ok(false);
        }
        for (c, s) in cur.iter().zip(snap.iter()) {
            if !same(&c, &s)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    if let Ok(snap) = snapshot.cast::<PyTuple>() {
        let cur = current.cast::<PyTuple>()?;
        if cur.len() != snap.len() {
            return Ok(false);
        }
        for (c, s) in cur.iter().zip(snap.iter()) {
            if !same(&c, &s)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    // Leaves of the same exact type: equal values (a float NaN never is: loaded again).
    current.eq(snapshot)
}
