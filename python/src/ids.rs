//! Tool-call ids for the OpenAI shape: random (the default), counted (`"counter"`, for tests),
//! seeded random (an `int`), or a Python callable `(name, index) -> str`.

use std::sync::{Arc, Mutex};

use chatparse_runtime::openai::{CounterIds, IdPolicy, RandomIds};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString};

/// The first error a Python id callable raised, re-raised once the runtime returns.
#[derive(Clone, Default)]
pub struct IdsError(Arc<Mutex<Option<PyErr>>>);

impl IdsError {
    fn set(&self, e: PyErr) {
        if let Ok(mut slot) = self.0.lock() {
            if slot.is_none() {
                *slot = Some(e);
            }
        }
    }

    /// Raises the stored error, if any.
    pub fn raise(&self) -> PyResult<()> {
        match self.0.lock().ok().and_then(|mut slot| slot.take()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A Python callable as an id policy. It runs with the GIL re-acquired (the runtime calls it
/// while parsing, with the GIL released); if it fails, a random id stands in and the error is
/// raised when the call returns.
pub struct PyIds {
    callable: Py<PyAny>,
    error: IdsError,
    fallback: RandomIds,
}

impl IdPolicy for PyIds {
    fn next_id(&mut self, name: &str, index: usize) -> String {
        let got = Python::attach(|py| -> PyResult<String> {
            self.callable
                .bind(py)
                .call1((name, index))?
                .extract::<String>()
        });
        got.unwrap_or_else(|e| {
            self.error.set(e);
            self.fallback.next_id(name, index)
        })
    }
}

/// Every id policy an `ids=` argument can name (an enum rather than a `Box<dyn IdPolicy>`, so
/// that it is `Send`).
pub enum Ids {
    Random(RandomIds),
    Counter(CounterIds),
    Python(PyIds),
}

impl IdPolicy for Ids {
    fn next_id(&mut self, name: &str, index: usize) -> String {
        match self {
            Ids::Random(p) => p.next_id(name, index),
            Ids::Counter(p) => p.next_id(name, index),
            Ids::Python(p) => p.next_id(name, index),
        }
    }
}

/// The id policy an `ids=` argument names.
pub fn policy(ids: Option<&Bound<'_, PyAny>>, error: &IdsError) -> PyResult<Ids> {
    let Some(ids) = ids.filter(|i| !i.is_none()) else {
        return Ok(Ids::Random(RandomIds::new()));
    };
    if let Ok(s) = ids.cast::<PyString>() {
        return match s.to_str()? {
            "random" => Ok(Ids::Random(RandomIds::new())),
            "counter" => Ok(Ids::Counter(CounterIds::default())),
            other => Err(PyValueError::new_err(format!(
                "ids must be \"random\", \"counter\", an int seed or a callable (name, index) -> str, not {other:?}"
            ))),
        };
    }
    if ids.is_instance_of::<PyInt>() {
        return Ok(Ids::Random(RandomIds::with_seed(ids.extract::<u64>()?)));
    }
    if ids.is_callable() {
        return Ok(Ids::Python(PyIds {
            callable: ids.clone().unbind(),
            error: error.clone(),
            fallback: RandomIds::new(),
        }));
    }
    Err(PyTypeError::new_err(
        "ids must be \"random\", \"counter\", an int seed or a callable (name, index) -> str",
    ))
}
