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

use chatparse::models::{parse_value_fn, ParseToJson};
use chatparse::Value;
use chatparse_runtime::{Format, ParseError, ResponseTemplate, Schema, SchemaError, Spec};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::convert::{self, Strictness};
use crate::errors;

/// How many dict specs (and, separately, JSON texts) stay loaded.
const CACHE_SIZE: usize = 32;

/// A loaded spec, with the parser generated at build time when it is a shipped x-regex schema.
pub struct Loaded {
    pub spec: Spec,
    pub generated: Option<ParseToJson>,
}

impl Loaded {
    fn new(spec: Spec) -> Arc<Loaded> {
        let generated = spec.schema().and_then(shipped_twin);
        Arc::new(Loaded { spec, generated })
    }

    /// Parses a complete output: the generated parser if there is one, else `Spec::parse` (the
    /// interpreter for an x-regex schema).
    pub fn parse(&self, text: &str) -> Result<Value, ParseError> {
        match self.generated {
            Some(generated) => generated(text),
            None => self.spec.parse(text),
        }
    }
}

/// The generated parser of the shipped schema that `schema` is, the same JSON in the same key
/// order (the generated code and the interpreter agree on every value and error: the facade's
/// equivalence tests): with the family's completeness check when `schema` has it (a shipped
/// name), the schema's own parser otherwise (a dict or JSON text, as transformers reads it).
fn shipped_twin(schema: &Schema) -> Option<ParseToJson> {
    type Twins = Vec<(String, ParseToJson, ParseToJson)>;
    static SHIPPED: OnceLock<Twins> = OnceLock::new();
    let shipped = SHIPPED.get_or_init(|| {
        chatparse::shipped::names()
            .filter_map(|name| {
                let text = chatparse::shipped::text(name)?;
                let value = chatparse_runtime::py::json::loads(text).ok()?;
                let schema_only = chatparse::models::GENERATED_SCHEMA_ONLY
                    .iter()
                    .find(|(n, _)| *n == name)?
                    .1;
                Some((value.to_string(), parse_value_fn(name)?, schema_only))
            })
            .collect()
    });
    let ours = schema.as_value().to_string();
    shipped
        .iter()
        .find(|(text, _, _)| *text == ours)
        .map(|(_, checked, schema_only)| {
            if schema.check().is_some() {
                *checked
            } else {
                *schema_only
            }
        })
}

/// A loaded spec as Python sees it (`chatparse.Spec`).
#[pyclass(name = "Spec", module = "chatparse", frozen)]
pub struct PySpec {
    pub spec: Arc<Loaded>,
}

struct DictEntry {
    original: Py<PyAny>,
    snapshot: Py<PyAny>,
    spec: Arc<Loaded>,
}

fn dict_cache() -> &'static Mutex<Vec<DictEntry>> {
    static CACHE: OnceLock<Mutex<Vec<DictEntry>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Vec::new()))
}

fn text_cache() -> &'static Mutex<HashMap<String, Arc<Loaded>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Loaded>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

type NameCache = Mutex<HashMap<String, Arc<Loaded>>>;

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
pub fn resolve(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<Arc<Loaded>> {
    if let Ok(loaded) = spec.cast::<PySpec>() {
        return Ok(loaded.get().spec.clone());
    }
    if let Ok(text) = spec.cast::<PyString>() {
        let text = text.to_str()?;
        if text.trim_start().starts_with('{') {
            return from_text(py, text);
        }
        return by_name(py, text);
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

fn load_value(py: Python<'_>, value: Value, source_name: &str) -> PyResult<Arc<Loaded>> {
    let loaded = py.detach(|| -> Result<Spec, SchemaError> {
        Ok(match Format::of(&value) {
            Format::Schema => Spec::from(Schema::from_value_named(value, source_name)?),
            Format::Template => Spec::from(ResponseTemplate::from_value_named(value, source_name)?),
        })
    });
    loaded
        .map(Loaded::new)
        .map_err(|e| errors::schema_error(py, &e))
}

fn from_text(py: Python<'_>, text: &str) -> PyResult<Arc<Loaded>> {
    if let Some(spec) = text_cache().lock().ok().and_then(|c| c.get(text).cloned()) {
        return Ok(spec);
    }
    let loaded = py
        .detach(|| Spec::from_json_str(text))
        .map(Loaded::new)
        .map_err(|e| errors::schema_error(py, &e))?;
    if let Ok(mut cache) = text_cache().lock() {
        if cache.len() >= CACHE_SIZE {
            cache.clear();
        }
        cache.insert(text.to_owned(), loaded.clone());
    }
    Ok(loaded)
}

/// A shipped name, as the CLI reads it: `NAME` (or `schemas/NAME`) is the shipped x-regex schema
/// with its stream profile (every shipped name parses and streams), `NAME.transformers` (or
/// `response_templates/NAME`) transformers' own response template of the family.
fn by_name(py: Python<'_>, name: &str) -> PyResult<Arc<Loaded>> {
    if let Some(spec) = name_cache().lock().ok().and_then(|c| c.get(name).cloned()) {
        return Ok(spec);
    }
    let bare = name.strip_suffix(".json").unwrap_or(name);
    let template = bare
        .strip_suffix(".transformers")
        .or_else(|| bare.strip_prefix("response_templates/"));
    let schema = bare.strip_prefix("schemas/").unwrap_or(bare);
    let found: Option<Result<Spec, SchemaError>> = match template {
        Some(stem) => chatparse::templates::try_template(stem).map(|t| t.map(Spec::from)),
        None => chatparse::shipped::spec(schema),
    };
    let Some(loaded) = found else {
        return Err(PyValueError::new_err(format!(
            "no shipped schema or template named {name:?} (schemas: {}; transformers' templates: \
             {}); a spec string that is not a name must be JSON text starting with '{{'",
            chatparse::shipped::names().collect::<Vec<_>>().join(", "),
            chatparse::templates::names()
                .map(|n| format!("{n}.transformers"))
                .collect::<Vec<_>>()
                .join(", "),
        )));
    };
    let loaded = loaded
        .map(Loaded::new)
        .map_err(|e| errors::schema_error(py, &e))?;
    if let Ok(mut cache) = name_cache().lock() {
        cache.insert(name.to_owned(), loaded.clone());
    }
    Ok(loaded)
}

fn from_dict(py: Python<'_>, dict: &Bound<'_, PyAny>) -> PyResult<Arc<Loaded>> {
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
/// leaves of the same types with equal values. This runs on every call with a dict spec, so it
/// walks borrowed pointers (no reference counting) with the GIL held.
fn same(current: &Bound<'_, PyAny>, snapshot: &Bound<'_, PyAny>) -> PyResult<bool> {
    // SAFETY: both objects are alive (borrowed from `Bound`s) and the GIL is held; `same_ptr`
    // only reads them through the C API, with borrowed references that the containers keep alive
    // (no Python code runs in between: the leaves compared are exact built-in types).
    match unsafe { same_ptr(current.as_ptr(), snapshot.as_ptr(), 0) } {
        Some(same) => Ok(same),
        None => Err(PyErr::take(current.py())
            .unwrap_or_else(|| PyValueError::new_err("comparing a spec with its snapshot failed"))),
    }
}

/// `None` when a comparison raised (the error is set).
unsafe fn same_ptr(
    cur: *mut ffi::PyObject,
    snap: *mut ffi::PyObject,
    depth: usize,
) -> Option<bool> {
    if cur == snap {
        return Some(true); // a shared immutable leaf, untouched
    }
    if depth > 512 || ffi::Py_TYPE(cur) != ffi::Py_TYPE(snap) {
        return Some(false);
    }
    if ffi::PyDict_CheckExact(snap) != 0 {
        if ffi::PyDict_Size(cur) != ffi::PyDict_Size(snap) {
            return Some(false);
        }
        let (mut pos_c, mut pos_s): (ffi::Py_ssize_t, ffi::Py_ssize_t) = (0, 0);
        let (mut kc, mut vc, mut ks, mut vs) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        while ffi::PyDict_Next(cur, &mut pos_c, &mut kc, &mut vc) != 0 {
            if ffi::PyDict_Next(snap, &mut pos_s, &mut ks, &mut vs) == 0 {
                return Some(false);
            }
            if kc != ks && !same_ptr(kc, ks, depth + 1)? {
                return Some(false);
            }
            if !same_ptr(vc, vs, depth + 1)? {
                return Some(false);
            }
        }
        return Some(true);
    }
    let list = ffi::PyList_CheckExact(snap) != 0;
    if list || ffi::PyTuple_CheckExact(snap) != 0 {
        let (size, get): (
            unsafe extern "C" fn(_) -> _,
            unsafe extern "C" fn(_, _) -> _,
        ) = if list {
            (ffi::PyList_Size, ffi::PyList_GetItem)
        } else {
            (ffi::PyTuple_Size, ffi::PyTuple_GetItem)
        };
        let n = size(snap);
        if size(cur) != n {
            return Some(false);
        }
        for i in 0..n {
            let (c, s) = (get(cur, i), get(snap, i));
            if c.is_null() || s.is_null() {
                return None;
            }
            if !same_ptr(c, s, depth + 1)? {
                return Some(false);
            }
        }
        return Some(true);
    }
    // Leaves of the same exact type: equal values (a float NaN never is: loaded again).
    match ffi::PyObject_RichCompareBool(cur, snap, ffi::Py_EQ) {
        -1 => None,
        r => Some(r == 1),
    }
}
